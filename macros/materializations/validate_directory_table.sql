{#-- A directory_table's configs, checked before anything runs. --#}
{% macro _validate_directory_table_config() %}
  {%- do dbt_tablestream.stream_engine_check('the directory_table model ' ~ model.name) -%}
  {%- set subject = "Model " ~ model.name ~ " (directory_table)" -%}
  {%- set location = dbt_tablestream._stream_model_config('location', subject) -%}
  {%- if location is none or location is not string or location | trim == '' -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " (directory_table) needs `location`: the folder to list, for example "
        ~ "config(materialized='directory_table', location='landing/orders'). Relative paths are resolved against the "
        ~ "dbt project directory on the local profile (type: tablestream); use an absolute path or "
        ~ "URI on a cluster.") }}
  {%- endif -%}
  {%- set recursive = dbt_tablestream._stream_model_config('recursive', subject, true) -%}
  {%- if recursive not in [true, false] -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": recursive must be true or false, got " ~ recursive ~ ".") }}
  {%- endif -%}
  {%- set patterns = {} -%}
  {%- for name in ['include', 'exclude'] -%}
    {%- set value = dbt_tablestream._stream_model_config(name, subject, []) -%}
    {%- set value = [value] if value is string else value -%}
    {%- if value is not iterable or value is mapping or value | reject('string') | list | length > 0 -%}
      {{ exceptions.raise_compiler_error(
          "Model " ~ model.name ~ ": " ~ name ~ " takes a list of glob patterns matched against each file's "
          ~ "relative path, for example ['*.json', 'daily/*.csv']; got " ~ value ~ ".") }}
    {%- endif -%}
    {%- do patterns.update({name: value | list}) -%}
  {%- endfor -%}
  {%- set file_format = dbt_tablestream._stream_model_config('file_format', subject, 'delta') -%}
  {%- if file_format != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ ": a directory_table is a Delta table with change data feed; file_format '"
        ~ file_format ~ "' is not accepted. Accepted: delta.") }}
  {%- endif -%}
  {%- set location = location | trim -%}
  {#-- The local profile's Spark runs in dbt's process: a relative folder is the project's, as dbt's own paths are. --#}
  {%- if adapter.type() == 'tablestream' and '://' not in location and not location.startswith('/') -%}
    {%- set location = adapter.project_root() ~ '/' ~ location -%}
  {%- endif -%}
  {{ return({'location': location, 'recursive': recursive, 'include': patterns.include, 'exclude': patterns.exclude}) }}
{% endmacro %}

{#-- A directory_table's settings (_settings_from_configs, by the spec's entries for directory_table),
     checked before anything runs: {location, recursive, include, exclude, file_format}, with a
     relative location resolved on the local profile. --#}
{% macro _validate_directory_table_config() %}
  {%- do dbt_tablestream.stream_engine_check('the directory_table model ' ~ model.name) -%}
  {%- set subject = "Model " ~ model.name -%}
  {%- set settings = dbt_tablestream._settings_from_configs(dbt_tablestream._raw_stream_configs(subject), subject,
                                                         'directory_table') -%}
  {%- set location = settings.location -%}
  {#-- The local profile's Spark runs in dbt's process: a relative folder is the project's, as dbt's own paths are. --#}
  {%- if adapter.type() == 'tablestream' and '://' not in location and not location.startswith('/') -%}
    {%- set location = adapter.project_root() ~ '/' ~ location -%}
  {%- endif -%}
  {{ return(dict(settings, location=location)) }}
{% endmacro %}

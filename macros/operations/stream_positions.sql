{% macro stream_positions(schema=none, include_dropped=false) %}
  {{ return(adapter.dispatch('stream_positions', 'dbt_tablestream')(schema, include_dropped)) }}
{% endmacro %}


{#-- Shared by the stream operations and generic tests: every stream's latest offsets-log row,
     and its health. --#}

{% macro spark__stream_positions(schema=none, include_dropped=false) %}
  {%- do dbt_tablestream.stream_engine_check('stream_positions') -%}
  {%- set relation = dbt_tablestream._offsets_relation(schema) -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ return([]) }}
  {%- endif -%}
  {%- set table = run_query(dbt_tablestream.latest_stream_offsets_sql(relation)) -%}
  {%- set positions = [] -%}
  {%- for row in table.rows -%}
    {%- set position = {} -%}
    {%- for column in table.column_names -%}
      {%- set value = row[column] -%}
      {%- do position.update({column: value if value is none or value is number or value is string
                                      else value | string}) -%}
    {%- endfor -%}
    {%- if include_dropped or position.mode != 'dropped' -%}{%- do positions.append(position) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(positions) }}
{% endmacro %}


{#-- A stream's position with its health and lag, as show_streams prints it (_stream_status_document). --#}
{% macro _stream_status(position, lag_only=false) %}
  {{ return(dbt_tablestream._stream_status_document(position, dbt_tablestream.stream_health(position, lag_only))) }}
{% endmacro %}


{#-- The schemas whose offsets logs hold the project's streams: `schema` when given, else every
     stream model's schema (a custom schema has its own log) and the target's. --#}
{% macro _stream_offsets_schemas(schema=none) %}
  {%- if schema -%}{{ return([schema]) }}{%- endif -%}
  {%- set schemas = [] -%}
  {%- for model in dbt_tablestream._stream_models_by_target().values() if model.schema not in schemas -%}
    {%- do schemas.append(model.schema) -%}
  {%- endfor -%}
  {%- if target.schema not in schemas -%}{%- do schemas.append(target.schema) -%}{%- endif -%}
  {{ return(schemas) }}
{% endmacro %}


{#-- The streams `name` names, with the schema of the log each is in (`offsets_schema`): the
     stream of that name, or else every stream of the model of that name (a model reading several
     sources has one per source). Refuses a name that is neither, listing the streams there. --#}
{% macro _find_stream_positions(name, schema=none) %}
  {%- set every = [] -%}
  {%- for each_schema in dbt_tablestream._stream_offsets_schemas(schema) -%}
    {%- for position in dbt_tablestream.stream_positions(each_schema, include_dropped=true) -%}
      {%- do position.update({'offsets_schema': each_schema}) -%}
      {%- do every.append(position) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set found = every | selectattr('stream_name', 'equalto', name) | list -%}
  {%- if not found -%}
    {%- for position in every if (position.target | string).split('.') | last | lower == name | lower -%}
      {%- do found.append(position) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if not found -%}
    {%- set logs = [] -%}
    {%- for each_schema in dbt_tablestream._stream_offsets_schemas(schema) -%}
      {%- do logs.append(dbt_tablestream._offsets_relation(each_schema) | string) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._no_such_stream_message(name, logs, every | map(attribute='stream_name') | list)) }}
  {%- endif -%}
  {{ return(found) }}
{% endmacro %}


{#-- Rows as an aligned text table. --#}
{% macro _text_table(header, rows) %}
  {%- set widths = [] -%}
  {%- for index in range(header | length) -%}
    {%- set width = [header[index] | length] -%}
    {%- for row in rows -%}{%- do width.append(row[index] | string | length) -%}{%- endfor -%}
    {%- do widths.append(width | max) -%}
  {%- endfor -%}
  {%- set lines = [] -%}
  {%- for row in [header] + rows -%}
    {%- set cells = [] -%}
    {%- for cell in row -%}
      {%- do cells.append(cell | string ~ ' ' * (widths[loop.index0] - (cell | string | length))) -%}
    {%- endfor -%}
    {%- do lines.append(cells | join('  ') | trim) -%}
    {%- if loop.first -%}
      {%- set rule = [] -%}
      {%- for width in widths -%}{%- do rule.append('-' * width) -%}{%- endfor -%}
      {%- do lines.append(rule | join('  ')) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(lines | join('\n')) }}
{% endmacro %}


{% macro _format_duration(seconds) %}
  {%- if seconds is none -%}{{ return('-') }}{%- endif -%}
  {%- set total = seconds | int -%}
  {%- if total >= 86400 -%}{{ return((total // 86400) ~ 'd ' ~ ((total % 86400) // 3600) ~ 'h') }}{%- endif -%}
  {%- if total >= 3600 -%}
    {{ return((total // 3600) ~ 'h ' ~ '%02d' | format((total % 3600) // 60) ~ 'm') }}
  {%- endif -%}
  {%- if total >= 60 -%}{{ return((total // 60) ~ 'm ' ~ '%02d' | format(total % 60) ~ 's') }}{%- endif -%}
  {{ return(total ~ 's') }}
{% endmacro %}

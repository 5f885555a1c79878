{#-- Shared by the stream operations and generic tests: every stream's latest offsets-log row,
     and its health. --#}

{% macro stream_positions(schema=none, include_dropped=false) %}
  {%- do dbt_tablestream.stream_engine_check('stream_positions') -%}
  {%- set relation = dbt_tablestream.offsets_relation(schema) -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ return([]) }}
  {%- endif -%}
  {%- set table = run_query(dbt_tablestream.latest_stream_offsets_sql(relation)) -%}
  {%- set positions = [] -%}
  {%- for row in table.rows -%}
    {%- set position = {} -%}
    {%- for column in table.column_names -%}
      {%- set value = row[column] -%}
      {%- do position.update({column: value if value is none or value is number or value is string else value | string}) -%}
    {%- endfor -%}
    {%- if include_dropped or position.mode != 'dropped' -%}{%- do positions.append(position) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(positions) }}
{% endmacro %}


{#-- A stream's position with its health and lag, as show_streams prints it. --#}
{% macro stream_status(position, lag_only=false) %}
  {%- set health = dbt_tablestream.stream_health(position, lag_only) -%}
  {%- set status = {} -%}
  {%- do status.update(position) -%}
  {%- do status.update(health) -%}
  {%- set offset = position.to_version -%}
  {%- set lag = (health.source_version - offset) if (offset is not none and health.source_version is not none) else none -%}
  {%- do status.update({'lag_versions': ([lag, 0] | max) if lag is not none else none, 'lag_seconds': none}) -%}
  {%- if lag == 0 -%}
    {%- do status.update({'lag_seconds': 0}) -%}
  {%- elif health.offset_time and health.source_time -%}
    {%- set parse = modules.datetime.datetime.fromisoformat -%}
    {%- set seconds = (parse(health.source_time | replace('Z', '+00:00')) - parse(health.offset_time | replace('Z', '+00:00'))).total_seconds() -%}
    {%- do status.update({'lag_seconds': seconds}) -%}
  {%- endif -%}
  {{ return(status) }}
{% endmacro %}


{% macro find_stream_position(stream_name, schema=none) %}
  {%- set positions = dbt_tablestream.stream_positions(schema, include_dropped=true) -%}
  {%- for position in positions if position.stream_name == stream_name -%}
    {{ return(position) }}
  {%- endfor -%}
  {{ exceptions.raise_compiler_error(
      "No stream " ~ stream_name ~ " in " ~ dbt_tablestream.offsets_relation(schema) ~ ". Streams there: "
      ~ (positions | map(attribute='stream_name') | join(', ') or 'none') ~ ". Pass schema: <the stream target's schema> if it lives elsewhere.") }}
{% endmacro %}


{#-- Rows as an aligned text table. --#}
{% macro text_table(header, rows) %}
  {%- set widths = [] -%}
  {%- for index in range(header | length) -%}
    {%- set width = [header[index] | length] -%}
    {%- for row in rows -%}{%- do width.append(row[index] | string | length) -%}{%- endfor -%}
    {%- do widths.append(width | max) -%}
  {%- endfor -%}
  {%- set lines = [] -%}
  {%- for row in [header] + rows -%}
    {%- set cells = [] -%}
    {%- for cell in row -%}{%- do cells.append(cell | string ~ ' ' * (widths[loop.index0] - (cell | string | length))) -%}{%- endfor -%}
    {%- do lines.append(cells | join('  ') | trim) -%}
    {%- if loop.first -%}
      {%- set rule = [] -%}
      {%- for width in widths -%}{%- do rule.append('-' * width) -%}{%- endfor -%}
      {%- do lines.append(rule | join('  ')) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(lines | join('\n')) }}
{% endmacro %}


{% macro format_duration(seconds) %}
  {%- if seconds is none -%}{{ return('-') }}{%- endif -%}
  {%- set total = seconds | int -%}
  {%- if total >= 86400 -%}{{ return((total // 86400) ~ 'd ' ~ ((total % 86400) // 3600) ~ 'h') }}{%- endif -%}
  {%- if total >= 3600 -%}{{ return((total // 3600) ~ 'h ' ~ '%02d' | format((total % 3600) // 60) ~ 'm') }}{%- endif -%}
  {%- if total >= 60 -%}{{ return((total // 60) ~ 'm ' ~ '%02d' | format(total % 60) ~ 's') }}{%- endif -%}
  {{ return(total ~ 's') }}
{% endmacro %}

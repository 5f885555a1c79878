{% macro stream_history(stream_name, schema=none, limit=50, format='table') %}
  {{ return(adapter.dispatch('stream_history', 'dbt_tablestream')(stream_name, schema, limit, format)) }}
{% endmacro %}


{#-- The offsets log of a stream, newest first (the order of its positions: epoch, then offset,
     then commit time): one row per run, reset and drop; of a stream model, each of its streams in
     turn. `format`: `table` (printed), `json` (printed alone) or `entries` (returned only).
     `dbt run-operation dbt_tablestream.stream_history --args '{stream_name: ..., format: json}'` --#}
{% macro spark__stream_history(stream_name, schema=none, limit=50, format='table') %}
  {%- do dbt_tablestream.stream_engine_check('stream_history') -%}
  {%- set positions = dbt_tablestream._find_stream_positions(stream_name, schema) -%}
  {%- set entries = [] -%}
  {%- for position in positions | sort(attribute='stream_name') -%}
    {%- set query -%}
select stream_name, epoch, mode, from_version, to_version, rows_written, committed_at, invocation_id
from {{ dbt_tablestream._offsets_relation(position.offsets_schema) }}
where stream_name = {{ dbt_tablestream._sql_string(position.stream_name) }}
order by {{ dbt_tablestream.offsets_position_order_sql(true) }}
limit {{ limit | int }}
    {%- endset -%}
    {%- set table = run_query(query) -%}
    {%- for row in table.rows -%}
      {%- set values = {} -%}
      {%- for column in table.column_names -%}
        {%- do values.update({column: row[column] if row[column] is none or row[column] is number
                                      else row[column] | string}) -%}
      {%- endfor -%}
      {%- do entries.append(dbt_tablestream._stream_history_entry(values)) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if format == 'entries' -%}{{ return(entries) }}{%- endif -%}
  {%- if format == 'json' -%}
    {{ print(tojson(entries)) }}
    {{ return(entries) }}
  {%- endif -%}
  {%- set several = positions | length > 1 -%}
  {%- set rows = [] -%}
  {%- for entry in entries -%}
    {%- set cells = [entry.stream_name] if several else [] -%}
    {%- for key in ['epoch', 'mode', 'from_version', 'to_version', 'rows_written', 'committed_at', 'invocation_id'] -%}
      {%- do cells.append('-' if entry[key] is none else entry[key] | string) -%}
    {%- endfor -%}
    {%- do rows.append(cells) -%}
  {%- endfor -%}
  {%- set headers = (['stream'] if several else []) + ['epoch', 'mode', 'from', 'to', 'rows', 'committed at',
                                                       'invocation'] -%}
  {{ print(dbt_tablestream._text_table(headers, rows)) }}
  {{ return(entries) }}
{% endmacro %}

{#-- The offsets log of one stream, newest first: one row per run, reset and drop.
     `dbt run-operation dbt_tablestream.stream_history --args '{stream_name: ..., format: json}'` --#}
{% macro stream_history(stream_name, schema=none, limit=50, format='table') %}
  {%- do dbt_tablestream.stream_engine_check('stream_history') -%}
  {%- set position = dbt_tablestream.find_stream_position(stream_name, schema) -%}
  {%- set query -%}
select epoch, mode, from_version, to_version, rows_written, committed_at, invocation_id
from {{ dbt_tablestream.offsets_relation(position.offsets_schema) }}
where stream_name = {{ dbt_tablestream.sql_string(position.stream_name) }}
order by epoch desc, to_version desc nulls first, committed_at desc
limit {{ limit | int }}
  {%- endset -%}
  {%- set table = run_query(query) -%}
  {%- if format == 'json' -%}
    {%- set entries = [] -%}
    {%- for row in table.rows -%}
      {%- set entry = {} -%}
      {%- for column in table.column_names -%}
        {%- do entry.update({column: row[column] if row[column] is none or row[column] is number else row[column] | string}) -%}
      {%- endfor -%}
      {%- do entries.append(entry) -%}
    {%- endfor -%}
    {{ print(tojson(entries)) }}
    {{ return(entries) }}
  {%- endif -%}
  {%- set rows = [] -%}
  {%- for row in table.rows -%}
    {%- set cells = [] -%}
    {%- for value in row -%}{%- do cells.append('-' if value is none else value | string) -%}{%- endfor -%}
    {%- do rows.append(cells) -%}
  {%- endfor -%}
  {{ print(dbt_tablestream.text_table(['epoch', 'mode', 'from', 'to', 'rows', 'committed at', 'invocation'], rows)) }}
{% endmacro %}

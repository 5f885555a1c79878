{#-- For a stream_merge target: the target equals its source as of the stream's offset version
     (read with Delta time travel), over the columns they share. Each differing row is returned
     with `difference` = 'missing from target' or 'not in source'. Soft-deleted rows are left out. --#}
{% test mirrors_source(model) %}
  {%- if not execute -%}
    select 1 as difference where 1 = 0
  {%- else -%}
    {{ dbt_tablestream.mirrors_source_sql(model) }}
  {%- endif -%}
{% endtest %}

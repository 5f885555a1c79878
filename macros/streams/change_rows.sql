{#-- The column contract of a stream read (docs/architecture.md, "The layers"): every source column, then
     __change_type, __commit_version, __commit_timestamp. The window is embedded as a comment so the
     materialization commits exactly the window that was read. --#}
{% macro change_rows_sql(stream, source_relation, columns=none) %}
  {%- set columns = columns if columns is not none else adapter.get_columns_in_relation(source_relation) -%}
  {%- set marker = tojson(stream) | replace('/', '\\/') -%}
  {%- set column_list -%}
    {%- for column in columns %}{{ adapter.quote(column.name) }}, {% endfor -%}
  {%- endset -%}
  {%- set sql -%}
(
  /* tablestream:window {{ marker }} */
  {%- if stream.view is none %}
  select {{ column_list }}cast(null as string) as __change_type, cast(null as bigint) as __commit_version, cast(null as timestamp) as __commit_timestamp
  from {{ source_relation }} where 1 = 0
  {%- else %}
  select {{ column_list }}
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from {{ stream.view }}
  {%- if stream.mode == 'append_only' %}
  where _change_type = 'insert'
  {%- endif %}
  {%- endif %}
)
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}

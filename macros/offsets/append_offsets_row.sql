{#-- Appending to the offsets log: created empty from the row's own select, then appended. --#}


{% macro append_offsets_row(relation, select_sql) %}
  {{ return(adapter.dispatch('append_offsets_row', 'dbt_tablestream')(relation, select_sql)) }}
{% endmacro %}


{#-- dbt's relation cache already lists the target schema's tables, so a log that exists costs no
     statement; only a first run creates it. --#}
{% macro spark__append_offsets_row(relation, select_sql) %}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {% call statement('create_stream_offsets') -%}
      {{ dbt_tablestream.spark__offsets_log_create_sql(relation, select_sql) }}
    {%- endcall %}
    {%- do adapter.cache_added(relation) -%}
  {%- endif %}
  {% call statement('append_stream_offset') -%}
    {{ dbt_tablestream.spark__offsets_log_append_sql(relation, select_sql) }}
  {%- endcall %}
{% endmacro %}


{% macro default__append_offsets_row(relation, select_sql) %}
  {{ dbt_tablestream.engine_not_supported('append_offsets_row') }}
{% endmacro %}


{#-- The offsets log is created empty from the row's own select (so its columns are the row's) and
     then appended: blind appends of different streams do not conflict in Delta. --#}
{% macro spark__offsets_log_create_sql(relation, select_sql) %}
  {{ return('create table if not exists ' ~ relation ~ ' using delta as\nselect * from (\n' ~ select_sql ~ '\n) as __tablestream_offset where 1 = 0') }}
{% endmacro %}


{% macro spark__offsets_log_append_sql(relation, select_sql) %}
  {{ return('insert into ' ~ relation ~ '\n' ~ select_sql) }}
{% endmacro %}

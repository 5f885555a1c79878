{#-- Appending to the offsets log: created empty from the row's own select, then appended. --#}


{#-- `compact`: Delta compacts the log's small files after the append (spark__stream_compaction_sql);
     under the reapply protocol, where no setting may be made, the log's table property does
     (stream_compaction_properties). --#}
{% macro append_offsets_row(relation, select_sql, columns=none, compact=false) %}
  {{ return(adapter.dispatch('append_offsets_row', 'dbt_tablestream')(relation, select_sql, columns, compact)) }}
{% endmacro %}


{#-- dbt's relation cache already lists the target schema's tables, so a log that exists costs no
     statement; only a first run creates it. --#}
{% macro spark__append_offsets_row(relation, select_sql, columns=none, compact=false) %}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {% call statement('create_stream_offsets') -%}
      {{ dbt_tablestream.offsets_log_create_sql(relation, select_sql, dbt_tablestream.stream_compaction_properties()) }}
    {%- endcall %}
    {%- do adapter.cache_added(relation) -%}
  {%- elif columns is not none and 'note' in columns -%}
    {#-- Only a row with a note reads the log's columns: a log older than the column gains it. --#}
    {%- set present = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
    {%- if 'note' not in present -%}
      {%- do run_query('alter table ' ~ relation ~ ' add columns (note string)') -%}
    {%- endif -%}
  {%- endif %}
  {%- set compact = compact and dbt_tablestream.stream_commit_protocol() != 'reapply' -%}
  {%- for statement_sql in dbt_tablestream.stream_compaction_sql(true) if compact -%}{%- do run_query(statement_sql) -%}{%- endfor -%}
  {% call statement('append_stream_offset') -%}
    {{ dbt_tablestream.offsets_log_append_sql(relation, select_sql, columns) }}
  {%- endcall %}
  {%- for statement_sql in dbt_tablestream.stream_compaction_sql(false) if compact -%}{%- do run_query(statement_sql) -%}{%- endfor -%}
{% endmacro %}


{#-- `properties`: table properties of the new log (stream_compaction_properties). --#}
{% macro offsets_log_create_sql(relation, select_sql, properties={}) %}
  {{ return(adapter.dispatch('offsets_log_create_sql', 'dbt_tablestream')(relation, select_sql, properties)) }}
{% endmacro %}


{#-- The offsets log is created empty from the row's own select (so its columns are the row's) and
     then appended: blind appends of different streams do not conflict in Delta. --#}
{% macro spark__offsets_log_create_sql(relation, select_sql, properties={}) %}
  {%- set pairs = [] -%}
  {%- for key, value in properties.items() -%}{%- do pairs.append(dbt_tablestream.sql_string(key) ~ ' = ' ~ dbt_tablestream.sql_string(value)) -%}{%- endfor -%}
  {{ return('create table if not exists ' ~ relation ~ ' using delta' ~ (' tblproperties (' ~ pairs | join(', ') ~ ')' if pairs else '')
            ~ ' as\nselect * from (\n' ~ select_sql ~ '\n) as __tablestream_offset where 1 = 0') }}
{% endmacro %}


{% macro offsets_log_append_sql(relation, select_sql, columns=none) %}
  {{ return(adapter.dispatch('offsets_log_append_sql', 'dbt_tablestream')(relation, select_sql, columns)) }}
{% endmacro %}


{% macro spark__offsets_log_append_sql(relation, select_sql, columns=none) %}
  {{ return('insert into ' ~ relation ~ (' (' ~ columns | join(', ') ~ ')' if columns else '') ~ '\n' ~ select_sql) }}
{% endmacro %}

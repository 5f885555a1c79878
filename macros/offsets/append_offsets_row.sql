{#-- Appending to the offsets log: created empty from the row's own select, then appended. --#}


{#-- `compact`: Delta compacts the log's small files after the append, by the session settings of
     the protocol's _offsets_compaction_sql; under the reapply protocol, where no setting may be
     made, the log's table property does (stream_compaction_properties). `unlogged_only`: the
     names of the rows' streams, to append only the rows whose window the log does not hold yet
     (spark__offsets_log_append_sql).
     Returns how many rows were appended, or none where Spark does not say. --#}
{% macro append_offsets_row(relation, select_sql, columns=none, compact=false, unlogged_only=[]) %}
  {{ return(adapter.dispatch('append_offsets_row', 'dbt_tablestream')(
      relation, select_sql, columns, compact, unlogged_only)) }}
{% endmacro %}


{#-- dbt's relation cache already lists the target schema's tables, so a log that exists costs no
     statement; only a first run creates it. --#}
{% macro spark__append_offsets_row(relation, select_sql, columns=none, compact=false, unlogged_only=[]) %}
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
  {%- set compaction = dbt_tablestream._protocol_step('offsets_compaction_sql') -%}
  {%- set write = "the compacting append to " ~ relation -%}
  {%- if compact -%}{%- do dbt_tablestream._open_write_settings(compaction(true), write) -%}{%- endif -%}
  {% call statement('append_stream_offset', fetch_result=True) -%}
    {{ dbt_tablestream.offsets_log_append_sql(relation, select_sql, columns, unlogged_only) }}
  {%- endcall %}
  {%- if compact -%}{%- do dbt_tablestream._close_write_settings(compaction(false), write) -%}{%- endif -%}
  {%- set result = load_result('append_stream_offset') -%}
  {%- if result.table is not none and 'num_inserted_rows' in result.table.column_names
      and result.table.rows | length > 0 -%}
    {{ return(result.table.rows[0]['num_inserted_rows'] | int) }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}


{#-- `properties`: table properties of the new log (stream_compaction_properties). --#}
{% macro offsets_log_create_sql(relation, select_sql, properties={}) %}
  {{ return(adapter.dispatch('offsets_log_create_sql', 'dbt_tablestream')(relation, select_sql, properties)) }}
{% endmacro %}


{#-- The offsets log is created empty from the row's own select (so its columns are the row's) and
     then appended, partitioned by stream: Delta tells concurrent writers apart by the partitions
     they read and add to, so a conditional append (unlogged_only) of one stream conflicts only
     with another run of that stream, never with the other streams of the schema (a blind append
     conflicts with none); and a run's read of its position opens only its stream's files. --#}
{% macro spark__offsets_log_create_sql(relation, select_sql, properties={}) %}
  {%- set pairs = [] -%}
  {%- for key, value in properties.items() -%}
    {%- do pairs.append(dbt_tablestream._sql_string(key) ~ ' = ' ~ dbt_tablestream._sql_string(value)) -%}
  {%- endfor -%}
  {{ return('create table if not exists ' ~ relation ~ ' using delta partitioned by (stream_name)'
            ~ (' tblproperties (' ~ pairs | join(', ') ~ ')' if pairs else '')
            ~ ' as\nselect * from (\n' ~ select_sql ~ '\n) as __tablestream_offset where 1 = 0') }}
{% endmacro %}


{% macro offsets_log_append_sql(relation, select_sql, columns=none, unlogged_only=[]) %}
  {{ return(adapter.dispatch('offsets_log_append_sql', 'dbt_tablestream')(
      relation, select_sql, columns, unlogged_only)) }}
{% endmacro %}


{#-- A blind INSERT, or with `unlogged_only` (the rows' stream names; the reapply protocol, where
     two runs may apply one window) an insert-only MERGE that skips a row whose stream the log
     already holds at that window end in that epoch. Delta checks the MERGE's read of those
     streams' partitions at commit: of two runs logging one window at once, the later fails
     (DELTA_CONCURRENT_APPEND) instead of logging it again. --#}
{% macro spark__offsets_log_append_sql(relation, select_sql, columns=none, unlogged_only=[]) %}
  {%- set columns = columns or dbt_tablestream._offsets_columns() -%}
  {%- if not unlogged_only -%}
    {{ return('insert into ' ~ relation ~ ' (' ~ columns | join(', ') ~ ')\n' ~ select_sql) }}
  {%- endif -%}
  {%- set streams = [] -%}
  {%- for name in unlogged_only | unique -%}{%- do streams.append(dbt_tablestream._sql_string(name)) -%}{%- endfor -%}
  {%- set merge_sql -%}
merge into {{ relation }} as __tablestream_log
using (
{{ select_sql }}
) as __tablestream_row
on __tablestream_log.stream_name in ({{ streams | join(', ') }})
  and __tablestream_log.stream_name = __tablestream_row.stream_name
  and __tablestream_log.epoch = __tablestream_row.epoch
  and __tablestream_log.to_version >= __tablestream_row.to_version
when not matched then insert ({{ columns | join(', ') }})
  values ({% for column in columns %}__tablestream_row.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}

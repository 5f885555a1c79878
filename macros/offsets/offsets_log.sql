{#-- The offsets log: `<target schema>.tablestream_offsets`, append-only, one row per stream run,
     plus a row per reset ('reset') or drop ('dropped') of a stream. A stream's position is its
     latest row (highest epoch, then highest to_version). --#}

{% macro _offsets_relation(schema=none) %}
  {%- set schema = schema or (this.schema if this is defined and this is not none else target.schema) -%}
  {%- set database = this.database if this is defined and this is not none else none -%}
  {{ return(api.Relation.create(database=database, schema=schema, identifier='tablestream_offsets', type='table')) }}
{% endmacro %}


{% macro read_stream_offset(stream_name) %}
  {{ return(adapter.dispatch('read_stream_offset', 'dbt_tablestream')(stream_name)) }}
{% endmacro %}


{% macro spark__read_stream_offset(stream_name) %}
  {%- set relation = dbt_tablestream._offsets_relation() -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set rows = run_query(dbt_tablestream.read_stream_offset_sql(relation, stream_name)).rows -%}
  {%- if rows | length == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return({'epoch': rows[0][0], 'to_version': rows[0][1], 'source_table_id': rows[0][2], 'mode': rows[0][3],
             'source': rows[0][4], 'runs': rows[0][5] | int}) }}
{% endmacro %}


{% macro offsets_position_order_sql(newest_first=false) %}
  {{ return(adapter.dispatch('offsets_position_order_sql', 'dbt_tablestream')(newest_first)) }}
{% endmacro %}


{#-- The order of a stream's offsets rows, oldest first: by epoch, then by the version reached (a
     reset back to start_at reaches none, which comes first), then by when the row was written. The
     last row is the stream's position. `newest_first` reverses it. The Python reader of the log
     (dbt_tablestream/_offsets.py) orders by _offsets_position_columns, so the order is written
     here once. --#}
{% macro spark__offsets_position_order_sql(newest_first=false) %}
  {%- set ordered = [] -%}
  {%- for column in dbt_tablestream._offsets_position_columns() -%}
    {%- do ordered.append(column ~ (' desc nulls last' if newest_first else ' nulls first')) -%}
  {%- endfor -%}
  {{ return(ordered | join(', ')) }}
{% endmacro %}


{#-- The columns that order a stream's offsets rows (offsets_position_order_sql), a NULL first. --#}
{% macro _offsets_position_columns() %}
  {{ return(['epoch', 'to_version', 'committed_at']) }}
{% endmacro %}


{% macro read_stream_offset_sql(relation, stream_name) %}
  {{ return(adapter.dispatch('read_stream_offset_sql', 'dbt_tablestream')(relation, stream_name)) }}
{% endmacro %}


{#-- The stream's latest row, and how many rows it has (`runs`: _stream_compaction_due). --#}
{% macro spark__read_stream_offset_sql(relation, stream_name) %}
  {%- set query -%}
select epoch, to_version, source_table_id, mode, source, count(*) over () as runs
from {{ relation }}
where stream_name = {{ dbt_tablestream._sql_string(stream_name) }}
order by {{ dbt_tablestream.offsets_position_order_sql(true) }}
limit 1
  {%- endset -%}
  {{ return(query) }}
{% endmacro %}


{% macro latest_stream_offsets_sql(relation) %}
  {{ return(adapter.dispatch('latest_stream_offsets_sql', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{#-- Every stream's latest row in the log, with its stream mode from its latest run. --#}
{% macro spark__latest_stream_offsets_sql(relation) %}
  {%- set query -%}
select * from (
  select *,
    row_number() over (partition by stream_name order by {{ dbt_tablestream.offsets_position_order_sql(true) }})
      as __position,
    last_value(case when mode not in ('reset', 'dropped') then mode end, true) over (
      partition by stream_name order by {{ dbt_tablestream.offsets_position_order_sql() }}
      rows between unbounded preceding and unbounded following) as stream_mode
  from {{ relation }}
) as __tablestream_positions
where __position = 1
order by stream_name
  {%- endset -%}
  {{ return(query) }}
{% endmacro %}


{% macro offsets_row_sql(stream, rows_written, with_note=false) %}
  {{ return(adapter.dispatch('offsets_row_sql', 'dbt_tablestream')(stream, rows_written, with_note)) }}
{% endmacro %}


{#-- `with_note`: the row has a note column, NULL when the stream has no note, so it unions with
     rows that have one. --#}
{% macro spark__offsets_row_sql(stream, rows_written, with_note=false) %}
  {{ return(dbt_tablestream.offsets_values_sql({
      'stream_name': stream.stream, 'epoch': stream.epoch, 'stream_id': stream.stream_id, 'source': stream.source,
      'source_table_id': stream.source_table_id, 'mode': stream.mode, 'from_version': stream.after,
      'to_version': stream.through, 'target': this.schema ~ '.' ~ this.identifier, 'rows_written': rows_written,
      'note': stream.note, 'note_column': with_note})) }}
{% endmacro %}


{% macro offsets_values_sql(values) %}
  {{ return(adapter.dispatch('offsets_values_sql', 'dbt_tablestream')(values)) }}
{% endmacro %}


{#-- One offsets-log row as a select, in the log's column order. --#}
{% macro spark__offsets_values_sql(values) %}
  {%- set row_sql %}
  select
    {{ dbt_tablestream._sql_string(values.stream_name) }} as stream_name,
    cast({{ values.epoch }} as bigint) as epoch,
    {{ dbt_tablestream._sql_string(values.stream_id) }} as stream_id,
    {{ dbt_tablestream._sql_string(values.source) }} as source,
    {{ dbt_tablestream._sql_string(values.source_table_id) }} as source_table_id,
    {{ dbt_tablestream._sql_string(values.mode) }} as mode,
    cast({{ values.from_version if values.from_version is not none else 'null' }} as bigint) as from_version,
    cast({{ values.to_version if values.to_version is not none else 'null' }} as bigint) as to_version,
    {{ dbt_tablestream._sql_string(values.target) }} as target,
    cast({{ values.rows_written if values.rows_written is not none else 'null' }} as bigint) as rows_written,
    {{ dbt_tablestream._sql_string(invocation_id) }} as invocation_id,
    current_timestamp() as committed_at
    {%- if values.get('note') is not none or values.get('note_column') %},
    {{ dbt_tablestream._sql_string(values.note) }} as note
    {%- endif %}
  {% endset %}
  {{ return(row_sql) }}
{% endmacro %}


{#-- The offsets log's columns. `note` (why a run recovered from a stale source) is added to a log
     the first time a row carries one; every row names its columns, so a row without a note fits
     a log with or without the column. --#}
{% macro _offsets_columns(with_note=false) %}
  {{ return(['stream_name', 'epoch', 'stream_id', 'source', 'source_table_id', 'mode', 'from_version', 'to_version',
             'target', 'rows_written', 'invocation_id', 'committed_at'] + (['note'] if with_note else [])) }}
{% endmacro %}


{% macro append_stream_offset(stream, rows_written) %}
  {{ return(adapter.dispatch('append_stream_offset', 'dbt_tablestream')(stream, rows_written)) }}
{% endmacro %}


{#-- The run's offsets rows, in one statement: a model reading several streams moves them together,
     each input's row carrying the rows its one commit wrote. Under the reapply protocol a
     concurrent run may have applied and logged the same window meanwhile, so only an unlogged
     window is appended. Returns how many rows were appended (none where Spark does not say). --#}
{% macro spark__append_stream_offset(stream, rows_written) %}
  {%- set relation = dbt_tablestream._offsets_relation() -%}
  {%- set with_note = stream.inputs | map(attribute='note') | reject('none') | list | length > 0 -%}
  {%- set rows = [] -%}
  {%- for input in stream.inputs -%}
    {%- do rows.append(dbt_tablestream.offsets_row_sql(input, rows_written, with_note)) -%}
  {%- endfor -%}
  {%- set unlogged_only = dbt_tablestream._protocol_step('unlogged_only')(stream) -%}
  {%- set appended = dbt_tablestream.append_offsets_row(relation, rows | join('\n  union all\n'),
                                                        dbt_tablestream._offsets_columns(with_note),
                                                        dbt_tablestream._stream_compaction_due(stream.inputs),
                                                        unlogged_only) -%}
  {#-- The log may be new in this invocation; later models and tests look it up in dbt's cache. --#}
  {%- do adapter.cache_added(relation) -%}
  {{ return(appended) }}
{% endmacro %}

{#-- table_stream: append the stream's change rows to the target, an append-only change log.
     Commit protocol (docs/architecture.md, "One stream run, traced"): the window was pinned when
     the model compiled; the target write is one Delta commit carrying the stream's marker; only
     then is the offsets log appended. An empty window writes nothing to the target and still moves the offset.
     The run is _stream_materialization's; this file names its parts. --#}
{% materialization table_stream, default %}
  {{ return(dbt_tablestream._stream_materialization({
      'check': dbt_tablestream._table_stream_check,
      'rebuild': dbt_tablestream._table_stream_rebuild,
      'window': dbt_tablestream._table_stream_append,
      'reads_compared': true})) }}
{% endmaterialization %}


{#-- Before any write, on a window with rows: the protocol's check, then for a keyed table_stream
     with net_changes the output's columns and NULL keys, and the rows become each key's net change.
     The rows written are compared on a schema change and checked by an enforced contract. --#}
{% macro _table_stream_check(run) %}
  {%- set stream, settings, keys = run.stream, run.settings, run.settings.unique_key -%}
  {%- set rows_sql = compiled_code -%}
  {%- set rows_read = none -%}
  {%- if stream.view is not none -%}
    {%- do dbt_tablestream._protocol_step('check', settings.protocol)(stream, settings, compiled_code) -%}
  {%- endif -%}
  {%- if keys and settings.net_changes and stream.view is not none -%}
    {%- set columns = dbt_tablestream._stream_output_columns(stream, compiled_code, keys) -%}
    {%- set rows_read = dbt_tablestream.inspect_stream_window(stream, compiled_code, keys).rows_read -%}
    {%- set rows_sql = dbt_tablestream.net_changes_sql(compiled_code, keys, columns) -%}
  {%- endif -%}
  {{ return({'rows_sql': rows_sql, 'rows_read': rows_read, 'written_sql': rows_sql, 'compared_sql': rows_sql}) }}
{% endmacro %}


{#-- A first build or a rebuild: the target replaced by the window's rows, compacted as it grows. --#}
{% macro _table_stream_rebuild(run) %}
  {%- set table_properties = dict(dbt_tablestream.stream_compaction_properties(),
                                  **dbt_tablestream.stream_kept_table_properties(run.existing)) -%}
  {%- set write_sql = dbt_tablestream.stream_write_sql(run.target, run.rows_sql, 'overwrite', run.stream,
                                                       table_properties) -%}
  {{ return(dbt_tablestream.stream_commit(run.target, write_sql, 'overwrite', run.stream)) }}
{% endmacro %}


{#-- A window: its rows appended in the target's columns, from the compared rows' view when
     on_schema_change compared them (run.compared), else straight from their select. --#}
{% macro _table_stream_append(run) %}
  {%- set columns = dbt_tablestream.stream_relation_columns(run.target) -%}
  {%- set select_sql = dbt_tablestream.stream_append_select_sql(columns, run.rows_sql, run.compared) -%}
  {%- set write_sql = dbt_tablestream.stream_write_sql(run.target, select_sql, 'append', run.stream) -%}
  {%- set write_options = {'compact': dbt_tablestream._stream_compaction_due(run.stream.inputs)} -%}
  {{ return(dbt_tablestream.stream_commit(run.target, write_sql, 'append', run.stream, write_options)) }}
{% endmacro %}

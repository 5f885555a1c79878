{#-- table_stream: append the stream's change rows to the target, an append-only change log.
     Commit protocol (docs/architecture.md, "One stream run, traced"): the window was pinned when
     the model compiled; the target write is one Delta commit carrying the stream's marker; only
     then is the offsets log appended. An empty window writes nothing to the target and still moves the offset. --#}
{% materialization table_stream, default %}
  {%- set settings = dbt_tablestream._stream_settings() -%}
  {%- set stream = dbt_tablestream._stream_of_compiled_code(compiled_code) -%}
  {%- do dbt_tablestream._check_stream_model_features(stream) -%}
  {%- set keys = settings.unique_key -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set on_schema_change = settings.on_schema_change -%}
  {%- set rows_sql = compiled_code -%}
  {%- set rows_read = none -%}
  {%- if stream.view is not none -%}
    {%- do dbt_tablestream._protocol_step('check', settings.protocol)(stream, settings, compiled_code) -%}
  {%- endif -%}
  {%- if keys and settings.net_changes and stream.view is not none -%}
    {%- set columns = dbt_tablestream._stream_output_columns(stream, compiled_code, keys) -%}
    {%- set rows_read = dbt_tablestream.check_stream_keys_not_null(stream, compiled_code, keys).rows_read -%}
    {%- set rows_sql = dbt_tablestream.net_changes_sql(compiled_code, keys, columns) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- set existing_relation = dbt_tablestream.existing_table(existing_relation) -%}

  {%- set rebuild = existing_relation is none or stream.restart -%}
  {%- do dbt_tablestream.check_stream_contract(stream, rows_sql if rebuild or stream.view is not none else none,
                                               rebuild) -%}
  {%- do dbt_tablestream.fault_point('before_target_commit') -%}
  {%- set response = none -%}
  {%- if rebuild -%}
    {%- set table_properties = dict(dbt_tablestream.stream_compaction_properties(),
                                    **dbt_tablestream.stream_kept_table_properties(existing_relation)) -%}
    {%- set write_sql = dbt_tablestream.stream_write_sql(target_relation, rows_sql, 'overwrite', stream,
                                                         table_properties) -%}
    {%- set response = dbt_tablestream.stream_commit(target_relation, write_sql, 'overwrite', stream) -%}
  {%- elif stream.view is none -%}
    {%- call noop_statement('main', 'NO-OP empty ' ~ dbt_tablestream._stream_window_text(stream), 'NO-OP', 0) -%}
    {%- endcall -%}
  {%- else -%}
    {#-- 'ignore' compares nothing unless the window starts at a schema change, so it needs no view
         of the output otherwise: the rows are appended straight from their select. --#}
    {%- set compared = on_schema_change != 'ignore' or dbt_tablestream._stream_schema_change(stream) -%}
    {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') if compared else none -%}
    {%- if compared -%}
      {%- call statement('create_tmp_relation') -%}
        {{ create_temporary_view(tmp_relation, rows_sql) }}
      {%- endcall -%}
      {%- do dbt_tablestream._apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) -%}
    {%- endif -%}
    {%- set dest_columns = [] -%}
    {%- for column in adapter.get_columns_in_relation(target_relation) -%}
      {%- do dest_columns.append(dbt_tablestream._sql_identifier(column.name)) -%}
    {%- endfor -%}
    {%- set select_sql = 'select ' ~ dest_columns | join(', ') ~ ' from '
        ~ (tmp_relation if compared else '(' ~ rows_sql ~ ') as __tablestream_rows') -%}
    {%- set write_sql = dbt_tablestream.stream_write_sql(target_relation, select_sql, 'append', stream) -%}
    {%- set layout = {'compact': dbt_tablestream._stream_compaction_due(stream.inputs)} -%}
    {%- set response = dbt_tablestream.stream_commit(target_relation, write_sql, 'append', stream, layout) -%}
    {%- if compared -%}{%- do adapter.drop_relation(tmp_relation) -%}{%- endif -%}
  {%- endif -%}

  {%- set built = {'relation': target_relation, 'existing': existing_relation, 'rebuilt': rebuild} -%}
  {%- do dbt_tablestream._finish_stream_run(stream, response, rows_read, built) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

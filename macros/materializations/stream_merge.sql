{#-- stream_merge: apply the stream's net changes to a keyed target with one MERGE, exactly once.
     INSERT / UPDATE_AFTER upsert the row; DELETE deletes it (delete_mode hard), marks it
     `_deleted` (soft) or is dropped (ignore). The first run, or a reset, builds the target from the
     window (start_at snapshot: the source's current rows), so the target mirrors the source. --#}
{% materialization stream_merge, default %}
  {%- set settings = dbt_tablestream.validate_stream_merge_config() -%}
  {%- set keys = settings['keys'] -%}
  {%- set stream = dbt_tablestream.stream_of_compiled_code(compiled_code) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set on_schema_change = config.get('on_schema_change', 'ignore') -%}
  {%- set columns = dbt_tablestream.stream_output_columns(stream, compiled_code, keys) -%}
  {%- set data_columns = [] -%}
  {%- for column in columns if column not in ['__change_type', '__commit_version', '__commit_timestamp'] -%}
    {%- do data_columns.append(column) -%}
  {%- endfor -%}
  {%- set quoted_data = [] -%}
  {%- for column in data_columns -%}{%- do quoted_data.append(adapter.quote(column)) -%}{%- endfor -%}
  {%- set soft = settings['delete_mode'] == 'soft' -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ adapter.drop_relation(existing_relation) }}
    {%- set existing_relation = none -%}
  {%- endif -%}

  {%- set response = none -%}
  {%- if existing_relation is not none and not stream.restart and stream.view is none -%}
    {%- call noop_statement('main', 'NO-OP empty window (' ~ stream.after ~ ', ' ~ stream.through ~ ']', 'NO-OP', 0) -%}
    {%- endcall -%}
  {%- else -%}
    {%- if stream.view is not none -%}
      {%- do dbt_tablestream.check_stream_keys_not_null(stream, compiled_code, keys) -%}
    {%- endif -%}
    {%- set netted = dbt_tablestream.net_changes_sql(compiled_code, keys, columns) -%}
    {%- do dbt_tablestream.fault_point('before_target_commit') -%}
    {%- if existing_relation is none or stream.restart -%}
      {%- set build_sql -%}
        select {{ quoted_data | join(', ') }}
        {%- if soft %}, false as _deleted, cast(null as bigint) as _deleted_version, cast(null as timestamp) as _deleted_at{% endif %}
        from ({{ netted }}) as __tablestream_net
        where __change_type in ('INSERT', 'UPDATE_AFTER')
      {%- endset -%}
      {%- call statement('main') -%}
        {{ dbt_tablestream.stream_write_sql(target_relation, build_sql, 'overwrite', stream) }}
      {%- endcall -%}
    {%- else -%}
      {%- set upserts_sql -%}
        select {{ quoted_data | join(', ') }} from ({{ netted }}) as __tablestream_net where __change_type <> 'DELETE'
      {%- endset -%}
      {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
      {%- call statement('create_tmp_relation') -%}
        {{ create_temporary_view(tmp_relation, upserts_sql) }}
      {%- endcall -%}
      {%- do dbt_tablestream.apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) -%}
      {%- do adapter.drop_relation(tmp_relation) -%}
      {%- set merge_source -%}
        select {{ quoted_data | join(', ') }}, __change_type, __commit_version,
          {{ '__commit_timestamp' if '__commit_timestamp' in columns else 'cast(null as timestamp) as __commit_timestamp' }}
        from ({{ netted }}) as __tablestream_net
        where __change_type <> 'UPDATE_BEFORE'
      {%- endset -%}
      {%- set update_columns = settings['update_columns'] -%}
      {%- if update_columns is none -%}
        {%- set update_columns = data_columns | reject('in', settings['exclude_columns'] or []) | list -%}
      {%- endif -%}
      {%- call statement('main') -%}
        {{ dbt_tablestream.stream_merge_sql(target_relation, merge_source, keys, settings['delete_mode'], update_columns, stream) }}
      {%- endcall -%}
    {%- endif -%}
    {%- set response = load_result('main').response -%}
  {%- endif -%}

  {%- do dbt_tablestream.finish_stream_run(stream, response) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

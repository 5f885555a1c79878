{#-- The embedded engine's stream pieces: each is an engine directive (see the adapter's
     directive.sql) carried out in Python against the Delta log, or as one delta-rs commit. --#}

{% macro tablestream__stream_source_state(relation, stream_name, at_timestamp, want_earliest) %}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({'source': relation.schema ~ '.' ~ relation.identifier, 'stream': stream_name,
                      'at_timestamp': at_timestamp, 'want_earliest': want_earliest}) -%}
  {%- set row = run_query(tablestream_directive('source_state', args)).rows[0] -%}
  {{ return({
      'latest_version': row['latest_version'] | int,
      'table_id': row['table_id'],
      'latest_timestamp': row['latest_timestamp'],
      'change_feed_enabled': row['change_feed_enabled'],
      'earliest_change_version': row['earliest_change_version'],
      'version_at_timestamp': row['version_at_timestamp'],
  }) }}
{% endmacro %}


{% macro tablestream__stream_target_marker(target, stream_name) %}
  {%- set args = tablestream_relation_args(target) -%}
  {%- do args.update({'stream': stream_name}) -%}
  {%- set rows = run_query(tablestream_directive('target_marker', args)).rows -%}
  {{ return(fromjson(rows[0][0]) if rows | length > 0 else none) }}
{% endmacro %}


{% macro tablestream__register_stream_window(relation, stream, table_id) %}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({
      'source': stream.source, 'stream': stream.stream, 'view': stream.view, 'model': model.name,
      'kind': 'snapshot' if stream.snapshot else 'changes',
      'after': stream.after if not stream.snapshot else stream.through - 1,
      'through': stream.through, 'table_id': table_id, 'timestamp': stream.timestamp}) -%}
  {%- do run_query(tablestream_directive('stream_window', args)) -%}
  {{ return(stream.view) }}
{% endmacro %}


{% macro tablestream__stream_write_sql(target, sql, mode, stream) %}
  {%- set args = tablestream_relation_args(target) -%}
  {%- do args.update({
      'mode': mode,
      'partition_by': tablestream_partition_by(),
      'properties': config.get('tblproperties', none),
      'marker': dbt_tablestream.tablestream_stream_marker(stream, mode != 'overwrite')}) -%}
  {{ return(tablestream_directive('write', args) ~ '\n' ~ sql) }}
{% endmacro %}


{% macro tablestream__stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream) %}
  {%- set args = tablestream_relation_args(target) -%}
  {%- set is_delete = "source.`__change_type` = 'DELETE'" -%}
  {%- set is_upsert = "source.`__change_type` <> 'DELETE'" -%}
  {%- do args.update({
      'keys': keys,
      'update_columns': update_columns,
      'update_when': is_upsert,
      'insert_when': is_upsert,
      'marker': dbt_tablestream.tablestream_stream_marker(stream, true)}) -%}
  {%- if delete_mode == 'hard' -%}
    {%- do args.update({'delete_when': is_delete}) -%}
  {%- elif delete_mode == 'soft' -%}
    {%- do args.update({
        'soft_delete_when': is_delete,
        'soft_delete_set': {'_deleted': 'true', '_deleted_version': 'source.`__commit_version`', '_deleted_at': 'source.`__commit_timestamp`'},
        'extra_set': {'_deleted': 'false', '_deleted_version': 'null', '_deleted_at': 'null'}}) -%}
  {%- endif -%}
  {{ return(tablestream_directive('merge', args) ~ '\n' ~ source_sql) }}
{% endmacro %}


{#-- The model's output, netted per key by the engine on the driver (embedded/_netting.py, the
     rule of net_changes_sql) instead of by a Spark window job. --#}
{% macro tablestream__stream_merge_source(sql, keys, columns, data_columns) %}
  {{ return('/* tablestream:net ' ~ tojson({'keys': keys, 'data_columns': data_columns}) ~ ' */\n' ~ sql) }}
{% endmacro %}


{#-- The engine checks the marker and commits under a lock on the target (a directive). --#}
{% macro tablestream__stream_commit(target, sql, mode, stream) %}
  {%- call statement('main') -%}
    {{ sql }}
  {%- endcall -%}
  {{ return(load_result('main').response) }}
{% endmacro %}


{#-- The commit marker of a stream write. An incremental write also names the version its window
     starts after, so the engine can refuse it if a concurrent run moved the stream meanwhile. --#}
{% macro tablestream_stream_marker(stream, incremental) %}
  {%- set metadata = dbt_tablestream.stream_marker_metadata(stream) -%}
  {#-- Also as commitInfo.userMetadata, where delta-spark writes it and DESCRIBE HISTORY shows it,
       so either engine can continue a stream the other started. --#}
  {%- do metadata.update({'userMetadata': tojson(metadata)}) -%}
  {%- set marker = {'app_id': stream.stream_id, 'version': stream.through, 'metadata': metadata} -%}
  {%- if incremental -%}{%- do marker.update({'after': stream.after}) -%}{%- endif -%}
  {{ return(marker) }}
{% endmacro %}


{#-- Counted on the driver from the key columns: the output of a model over a small window is a
     local relation, which Spark projects without a job, while an aggregate would run one. --#}
{% macro tablestream__stream_key_counts(sql, keys) %}
  {%- set row = run_query(tablestream_directive('key_counts', {'keys': keys}) ~ '\n' ~ sql).rows[0] -%}
  {{ return([row[0], row[1]]) }}
{% endmacro %}


{#-- Read with delta-rs, not through a Spark job over the log. --#}
{% macro tablestream__stream_offset_rows(relation, stream_name) %}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({'stream': stream_name}) -%}
  {{ return(run_query(tablestream_directive('stream_offset', args)).rows) }}
{% endmacro %}


{% macro tablestream__append_offsets_row(relation, select_sql) %}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({'mode': 'append'}) -%}
  {% call statement('append_stream_offset') -%}
    {{ tablestream_directive('write', args) }}
    {{ select_sql }}
  {%- endcall %}
{% endmacro %}


{% macro tablestream__stream_health(row) %}
  {%- set values = {} -%}
  {%- for key in ['stream_name', 'epoch', 'source', 'source_table_id', 'mode', 'to_version', 'target', 'rows_written', 'committed_at'] -%}
    {%- do values.update({key: row[key] if row[key] is none or row[key] is number else row[key] | string}) -%}
  {%- endfor -%}
  {%- set found = run_query(tablestream_directive('stream_health', {'row': values})).rows[0] -%}
  {{ return(fromjson(found[0])) }}
{% endmacro %}


{% macro tablestream__pause_point(point, seconds) %}
  {%- do run_query(tablestream_directive('pause', {'point': point, 'seconds': seconds})) -%}
{% endmacro %}


{% macro tablestream__fault_point(point) %}
  {%- do run_query(tablestream_directive('fault', {'point': point})) -%}
{% endmacro %}


{#-- Listing and diff in the engine (embedded/_directory.py), applied with one delta-rs commit. --#}
{% macro tablestream__sync_directory_table(relation, settings, rebuild) %}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({
      'location': settings.location, 'project_dir': adapter.project_root(),
      'recursive': settings.recursive, 'include': settings.include, 'exclude': settings.exclude,
      'rebuild': rebuild, 'properties': config.get('tblproperties', none)}) -%}
  {%- set row = run_query(tablestream_directive('directory_sync', args)).rows[0] -%}
  {{ return({'files': row['files'], 'inserted': row['inserted'], 'updated': row['updated'],
             'deleted': row['deleted'], 'committed': row['version'] is not none}) }}
{% endmacro %}

{#-- stream_merge: apply the stream's net changes to a keyed target with one MERGE, exactly once.
     INSERT / UPDATE_AFTER upsert the row; DELETE deletes it (delete_mode hard), marks it
     `_deleted` (soft) or is dropped (ignore). The first run, or a reset, builds the target from the
     window (start_at snapshot: the source's current rows), so the target mirrors the source.
     With `sequence_by` the source is a CDC event source: per key the newest event by sequence
     wins, within the window and against what the target already holds (docs/architecture.md,
     "Event sources"). With `scd_type: 2` the target keeps every version of each key instead of its
     current row, with dbt snapshot's columns (docs/architecture.md, "History"). --#}
{% materialization stream_merge, default %}
  {%- set settings = dbt_tablestream.stream_settings() -%}
  {%- set keys = settings.unique_key -%}
  {%- set events = settings.events -%}
  {%- set history = settings.history -%}
  {%- set stream = dbt_tablestream.stream_of_compiled_code(compiled_code) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set on_schema_change = settings.on_schema_change -%}
  {%- set sequence = events['sequence'] if events else [] -%}
  {%- set schema = dbt_tablestream.stream_output_schema(stream, compiled_code, keys, sequence, history is not none) -%}
  {%- set columns = schema | map(attribute='name') | list -%}
  {%- do dbt_tablestream.check_stream_merge_columns(stream, columns, settings) -%}
  {%- set data_columns = [] -%}
  {%- for column in columns if column not in ['__change_type', '__commit_version', '__commit_timestamp'] + settings['target_exclude_columns'] -%}
    {%- do data_columns.append(column) -%}
  {%- endfor -%}
  {%- set soft = settings['delete_mode'] == 'soft' -%}
  {%- set tombstones = dbt_tablestream.stream_tombstones_relation(target_relation) if events and settings['delete_mode'] == 'hard' and not history else none -%}
  {%- if history -%}
    {%- do history.update({'tracked': dbt_tablestream.history_tracked_columns(stream, history, data_columns, keys, sequence)}) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ adapter.drop_relation(existing_relation) }}
    {%- set existing_relation = none -%}
  {%- endif -%}

  {%- set response = none -%}
  {%- set rows_read = none -%}
  {%- set key_ranges = [] -%}
  {#-- Key-ordered files of bounded size, never compacted: bin-packing would mix key ranges. --#}
  {%- set layout = {'max_rows_per_file': settings.max_rows_per_file} -%}
  {%- set rebuild = existing_relation is none or stream.restart -%}
  {%- if not rebuild and stream.view is none -%}
    {%- call noop_statement('main', 'NO-OP empty ' ~ dbt_tablestream.stream_window_text(stream), 'NO-OP', 0) -%}
    {%- endcall -%}
  {%- else -%}
    {%- if stream.view is not none -%}
      {%- set checked = dbt_tablestream.check_stream_keys_not_null(stream, compiled_code, keys, sequence,
                                                                   none if rebuild else dbt_tablestream.stream_key_ranges_spec(schema, keys[0], settings['merge_key_ranges'])) -%}
      {%- set rows_read = checked.rows_read -%}
      {%- set key_ranges = checked.key_ranges -%}
    {%- endif -%}
    {%- if history -%}
      {%- set changes = dbt_tablestream.history_versions_sql(compiled_code, keys, columns, data_columns, history, events, none if rebuild else existing_relation) -%}
    {%- elif events -%}
      {%- set tombstones_exist = tombstones is not none and not rebuild
                                 and adapter.get_relation(tombstones.database, tombstones.schema, tombstones.identifier) is not none -%}
      {%- set applied = [] if rebuild else [existing_relation] + ([tombstones] if tombstones_exist else []) -%}
      {%- set changes = dbt_tablestream.sequenced_changes_sql(compiled_code, keys, columns, events, applied) -%}
      {%- if tombstones is not none -%}
        {%- call statement('stream_tombstones') -%}
          {{ dbt_tablestream.stream_tombstones_sql(tombstones, changes, keys, sequence, events['tombstone_retention'], not tombstones_exist) }}
        {%- endcall -%}
      {%- endif -%}
    {%- else -%}
      {%- set changes = dbt_tablestream.net_changes_sql(compiled_code, keys, columns) -%}
    {%- endif -%}
    {%- do dbt_tablestream.fault_point('before_target_commit') -%}
    {%- if rebuild -%}
      {%- if history -%}
        {%- set build_sql = dbt_tablestream.stream_history_build_sql(changes, keys) -%}
      {%- else -%}
        {#-- With sequence_by, a soft-deleted row is the key's tombstone, so a delete builds one too. --#}
        {%- set build_sql = dbt_tablestream.stream_merge_build_sql(changes, data_columns, soft, keys, columns if events else none) -%}
      {%- endif -%}
      {%- set response = dbt_tablestream.stream_commit(target_relation, dbt_tablestream.stream_write_sql(target_relation, build_sql, 'overwrite', stream, dbt_tablestream.stream_kept_table_properties(existing_relation)), 'overwrite', stream, layout) -%}
    {%- else -%}
      {%- set upserts_sql -%}
        {%- if history -%}
        {{ changes }}
        {%- else -%}
        select {{ dbt_tablestream.quoted_columns(data_columns) }} from ({{ changes }}) as __tablestream_net where __change_type <> 'DELETE'
        {%- endif -%}
      {%- endset -%}
      {#-- 'ignore' compares nothing unless the window starts at a schema change, so it needs no view
           of the output otherwise. --#}
      {%- if on_schema_change != 'ignore' or dbt_tablestream.stream_schema_change(stream) -%}
        {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
        {%- call statement('create_tmp_relation') -%}
          {{ create_temporary_view(tmp_relation, upserts_sql) }}
        {%- endcall -%}
        {%- do dbt_tablestream.apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) -%}
        {%- do adapter.drop_relation(tmp_relation) -%}
      {%- endif -%}
      {%- set update_columns = settings.merge_update_columns -%}
      {%- if update_columns is none -%}
        {%- set update_columns = data_columns | reject('in', settings.merge_exclude_columns or []) | list -%}
      {%- endif -%}
      {%- if history -%}
        {%- set merge_sql = dbt_tablestream.stream_history_merge_sql(target_relation, changes, data_columns, history, keys, key_ranges) -%}
      {%- elif events -%}
        {%- set merge_sql = dbt_tablestream.stream_events_merge_sql(target_relation, changes, keys, settings['delete_mode'], update_columns, data_columns, events, tombstones, columns, key_ranges) -%}
      {%- else -%}
        {%- set merge_source = dbt_tablestream.stream_merge_source_sql(changes, data_columns, '__commit_timestamp' in columns) -%}
        {%- set merge_sql = dbt_tablestream.stream_merge_sql(target_relation, merge_source, keys, settings['delete_mode'], update_columns, data_columns, stream, key_ranges) -%}
      {%- endif -%}
      {%- set response = dbt_tablestream.stream_commit(target_relation, merge_sql, 'merge', stream, layout) -%}
    {%- endif -%}
  {%- endif -%}

  {%- do dbt_tablestream.finish_stream_run(stream, response, rows_read) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{#-- The ranges check_stream_keys_not_null computes for the MERGE's file skipping: of the first key
     column, when its type has ranges (key_range_type) and merge_key_ranges is not 0; else none. --#}
{% macro stream_key_ranges_spec(schema, key, cap) %}
  {%- set found = [] -%}
  {%- for column in schema if column.name | lower == key | lower -%}{%- do found.append(column.dtype) -%}{%- endfor -%}
  {%- set key_type = dbt_tablestream.key_range_type(found[0]) if found else none -%}
  {{ return({'column': key, 'type': key_type, 'cap': cap} if key_type is not none and cap > 0 else none) }}
{% endmacro %}


{#-- The target of a first run or a reset: the net rows that exist at the window's end (with
     `deleted_columns`, the model's columns, for sequence_by: under delete_mode soft also the
     deleted keys, as soft-deleted rows, since they are the tombstones), written in
     key order. Netting shuffles rows by a hash of the key, so without the order every file would
     hold keys from the whole range and every later MERGE would rewrite every file; in key order a
     MERGE rewrites only the files whose key ranges changed (docs/architecture.md, "Cost"). --#}
{% macro stream_merge_build_sql(netted, data_columns, soft, keys, deleted_columns=none) %}
  {%- set build_sql -%}
select {{ dbt_tablestream.quoted_columns(data_columns) }}
{%- if soft and deleted_columns is not none %},
  __change_type = 'DELETE' as _deleted,
  case when __change_type = 'DELETE' then {{ '__commit_version' if '__commit_version' in deleted_columns else 'null' }} end as _deleted_version,
  case when __change_type = 'DELETE' then {{ '__commit_timestamp' if '__commit_timestamp' in deleted_columns else 'cast(null as timestamp)' }} end as _deleted_at
{%- elif soft %}, false as _deleted, cast(null as bigint) as _deleted_version, cast(null as timestamp) as _deleted_at{% endif %}
from ({{ netted }}) as __tablestream_net
{%- if deleted_columns is none or not soft %}
where __change_type in ('INSERT', 'UPDATE_AFTER')
{%- endif %}
order by {{ dbt_tablestream.quoted_columns(keys) }}
  {%- endset -%}
  {{ return(build_sql) }}
{% endmacro %}


{#-- The target of a first run or reset of an SCD type 2 stream_merge: the window's versions
     (history_versions_sql), in key order and each key's versions in time order. --#}
{% macro stream_history_build_sql(versions, keys) %}
  {{ return('select * from (' ~ versions ~ ') as __tablestream_versions order by ' ~ dbt_tablestream.quoted_columns(keys) ~ ', dbt_valid_from') }}
{% endmacro %}


{% macro stream_merge_source_sql(netted, data_columns, has_commit_timestamp) %}
  {%- set source_sql -%}
select {{ dbt_tablestream.quoted_columns(data_columns) }}, __change_type, __commit_version,
  {{ '__commit_timestamp' if has_commit_timestamp else 'cast(null as timestamp) as __commit_timestamp' }}
from ({{ netted }}) as __tablestream_net
where __change_type <> 'UPDATE_BEFORE'
  {%- endset -%}
  {{ return(source_sql) }}
{% endmacro %}


{% macro quoted_columns(columns) %}
  {%- set quoted = [] -%}
  {%- for column in columns -%}{%- do quoted.append(adapter.quote(column)) -%}{%- endfor -%}
  {{ return(quoted | join(', ')) }}
{% endmacro %}

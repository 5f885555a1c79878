{#-- stream_merge: apply the stream's net changes to a keyed target with one MERGE, exactly once.
     INSERT / UPDATE_AFTER upsert the row; DELETE deletes it (delete_mode hard), marks it
     `_deleted` (soft) or is dropped (ignore). The first run, or a reset, builds the target from the
     window (start_at snapshot: the source's current rows), so the target mirrors the source.
     With `sequence_by` the source is a CDC event source: per key the newest event by sequence
     wins, within the window and against what the target already holds (docs/architecture.md,
     "Event sources"). With `scd_type: 2` the target keeps every version of each key instead of its
     current row, with dbt snapshot's columns (docs/architecture.md, "History"). The strategy is
     chosen once, in the settings (_settings_from_configs); its SQL is stream_merge_strategies.sql's,
     the run is _stream_materialization's, and this file names its parts. --#}
{% materialization stream_merge, default %}
  {{ return(dbt_tablestream._stream_materialization({
      'check': dbt_tablestream._stream_merge_check,
      'caches_window': dbt_tablestream._stream_merge_caches_window, 'lazy_cache': true,
      'prepare': dbt_tablestream._stream_merge_plan,
      'rebuild': dbt_tablestream._stream_merge_rebuild,
      'window': dbt_tablestream._stream_merge_window})) }}
{% endmaterialization %}


{#-- Before any write: the output's columns and the configs that name them, then the protocol's
     check. An empty window writes nothing, so its run sends only what proved it empty: the output
     is checked when there is output to write. --#}
{% macro _stream_merge_check(run) %}
  {%- if run.kind == 'empty' -%}{{ return({}) }}{%- endif -%}
  {%- set settings, stream = run.settings, run.stream -%}
  {%- set schema = dbt_tablestream._stream_output_schema(stream, compiled_code, settings.unique_key, settings.sequence,
                                                         settings.strategy == 'history') -%}
  {%- set columns = schema | map(attribute='name') | list -%}
  {%- set stream_columns = ['__change_type', '__commit_version', '__commit_timestamp'] -%}
  {%- set data_columns = columns | reject('in', stream_columns + settings.target_exclude_columns) | list -%}
  {%- do dbt_tablestream._check_stream_merge_columns(stream, columns, data_columns, settings) -%}
  {%- do dbt_tablestream._protocol_step('check', settings.protocol)(stream, settings, compiled_code, columns) -%}
  {{ return({'schema': schema, 'columns': columns, 'data_columns': data_columns}) }}
{% endmacro %}


{#-- Whether a stream_merge run caches its window (stream_window_cache_sql, lazily): the key check
     and the write each read it (a rewrite twice), so a later run whose window opens 8 files or
     more (_window_files; unknown counts as many) reads it once where the protocol can cache, the
     cache filled by the check's read. A smaller window is read again rather than pay the cache's
     four statements. --#}
{% macro _stream_merge_caches_window(stream, protocol, rebuild) %}
  {%- set window_files = stream.inputs | map(attribute='window_files') | list -%}
  {{ return(not rebuild and stream.view is not none and dbt_tablestream._protocol_step('caches_windows', protocol)()
            and (none in window_files or window_files | sum >= 8)) }}
{% endmacro %}


{#-- The window's keys read once (NULL keys refused; their ranges, count, files and, when few,
     the keys themselves), the write chosen from them (_stream_net_write_choice), and the
     strategy's plan (stream_merge_strategy_sql): the statements to run first, the write, and the
     rows on_schema_change compares. --#}
{% macro _stream_merge_plan(run) %}
  {%- set settings, stream, keys = run.settings, run.stream, run.settings.unique_key -%}
  {#-- The protocol's cap applies before the window's keys are listed. --#}
  {%- set listed_keys = dbt_tablestream._protocol_step('replace_where_keys', settings.protocol)(
      settings.replace_where_keys) -%}
  {%- set rows_read = none -%}
  {%- set key_ranges = [] -%}
  {%- set window_keys = {'count': none, 'listed': none, 'type': none, 'files': none, 'target_rows': none} -%}
  {%- if stream.view is not none -%}
    {%- set ranges_spec = none if run.rebuild
                          else dbt_tablestream._stream_key_ranges_spec(run.schema, keys[0], settings.merge_key_ranges,
                                                                       listed_keys, settings.max_rows_per_file,
                                                                       run.existing) -%}
    {%- set checked = dbt_tablestream.inspect_stream_window(stream, run.rows_sql, keys, settings.sequence,
                                                                 ranges_spec) -%}
    {%- set rows_read = checked.rows_read -%}
    {%- set key_ranges = checked.key_ranges -%}
    {%- set window_keys = {'count': checked.distinct_keys, 'listed': checked.listed_keys, 'files': checked.key_files,
                           'target_rows': checked.target_rows,
                           'type': ranges_spec.type if ranges_spec is not none else none} -%}
  {%- endif -%}
  {%- set write_choice = dbt_tablestream._stream_net_write_choice(
        {'count': window_keys.count, 'listed': window_keys.listed, 'files': window_keys.files},
        dict(settings.target_layout, rows=window_keys.target_rows),
        {'merge_write': settings.merge_write, 'replace_where_keys': listed_keys,
         'max_rows_per_file': settings.max_rows_per_file}) -%}
  {%- set plan = dbt_tablestream.stream_merge_strategy_sql(settings.strategy, {
      'compiled_code': run.rows_sql, 'keys': keys, 'columns': run.columns, 'data_columns': run.data_columns,
      'settings': settings, 'stream': stream, 'target': run.target, 'existing': none if run.rebuild else run.existing,
      'rebuild': run.rebuild, 'key_ranges': key_ranges, 'window_keys': window_keys, 'write_choice': write_choice,
      'relation_exists': dbt_tablestream.stream_relation_exists,
      'relation_columns': dbt_tablestream.stream_relation_columns}) -%}
  {{ return({'rows_read': rows_read, 'window_keys': window_keys, 'plan': plan, 'statements': plan.statements,
             'written_sql': plan.write_sql if run.rebuild else plan.upserts_sql, 'compared_sql': plan.upserts_sql}) }}
{% endmacro %}


{#-- A first build or a rebuild: the target replaced by the plan's rows, in key order. --#}
{% macro _stream_merge_rebuild(run) %}
  {%- set kept_properties = dbt_tablestream.stream_kept_table_properties(run.existing) -%}
  {%- set write_sql = dbt_tablestream.stream_write_sql(run.target, run.plan.write_sql, 'overwrite', run.stream,
                                                       kept_properties) -%}
  {{ return(dbt_tablestream.stream_commit(run.target, write_sql, 'overwrite', run.stream,
                                          dbt_tablestream._stream_key_ordered_layout(run.settings))) }}
{% endmacro %}


{#-- A window: the plan's write (a MERGE, a replace of the window's keys or a rewrite). Delta counts
     every row a rewrite wrote; the run reports the keys it changed. --#}
{% macro _stream_merge_window(run) %}
  {%- set rows_written = run.window_keys.count if run.plan.get('write') == 'rewrite' else none -%}
  {%- set write_options = run.plan.get('write_options', dbt_tablestream._stream_key_ordered_layout(run.settings)) -%}
  {{ return(dbt_tablestream.stream_commit(run.target, run.plan.write_sql, 'merge', run.stream,
                                          dict(write_options, rows_written=rows_written))) }}
{% endmacro %}

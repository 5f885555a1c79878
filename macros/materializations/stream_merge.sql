{#-- stream_merge: apply the stream's net changes to a keyed target with one MERGE, exactly once.
     INSERT / UPDATE_AFTER upsert the row; DELETE deletes it (delete_mode hard), marks it
     `_deleted` (soft) or is dropped (ignore). The first run, or a reset, builds the target from the
     window (start_at snapshot: the source's current rows), so the target mirrors the source.
     With `sequence_by` the source is a CDC event source: per key the newest event by sequence
     wins, within the window and against what the target already holds (docs/architecture.md,
     "Event sources"). With `scd_type: 2` the target keeps every version of each key instead of its
     current row, with dbt snapshot's columns (docs/architecture.md, "History"). The strategy is
     chosen once, in the settings (_stream_settings_of); its SQL is stream_merge_strategies.sql's,
     and this file only orchestrates. --#}
{% materialization stream_merge, default %}
  {%- set settings = dbt_tablestream._stream_settings() -%}
  {%- set keys = settings.unique_key -%}
  {%- set stream = dbt_tablestream._stream_of_compiled_code(compiled_code) -%}
  {%- do dbt_tablestream._check_stream_model_features(stream) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {#-- An empty window writes nothing, so its run sends only what proved it empty: the output is
       checked when there is output to write. --#}
  {%- set empty = existing_relation is not none and not existing_relation.is_view and not stream.restart
                  and stream.view is none -%}
  {%- if not empty -%}
    {%- set schema = dbt_tablestream._stream_output_schema(stream, compiled_code, keys, settings.sequence,
                                                           settings.strategy == 'history') -%}
    {%- set columns = schema | map(attribute='name') | list -%}
    {%- set stream_columns = ['__change_type', '__commit_version', '__commit_timestamp'] -%}
    {%- set data_columns = columns | reject('in', stream_columns + settings.target_exclude_columns) | list -%}
    {%- do dbt_tablestream._check_stream_merge_columns(stream, columns, data_columns, settings) -%}
    {%- do dbt_tablestream._protocol_step('check', settings.protocol)(stream, settings, compiled_code, columns) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- set existing_relation = dbt_tablestream.existing_table(existing_relation) -%}

  {%- set response = none -%}
  {%- set rows_read = none -%}
  {%- set key_ranges = [] -%}
  {%- set window_keys = {'count': none, 'listed': none, 'type': none, 'files': none, 'target_rows': none} -%}
  {#-- Key-ordered files of bounded size, never compacted: bin-packing would mix key ranges. --#}
  {%- set layout = {'max_rows_per_file': settings.max_rows_per_file} -%}
  {%- set rebuild = existing_relation is none or stream.restart -%}
  {%- if empty -%}
    {%- call noop_statement('main', 'NO-OP empty ' ~ dbt_tablestream._stream_window_text(stream), 'NO-OP', 0) -%}
    {%- endcall -%}
  {%- else -%}
    {#-- The protocol's cap applies before the window's keys are listed. --#}
    {%- set listed_keys = dbt_tablestream._protocol_step('replace_where_keys', settings.protocol)(
        settings.replace_where_keys) -%}
    {%- set caches = dbt_tablestream._stream_merge_caches_window(stream, settings.protocol, rebuild) -%}
    {%- set cached = '__tablestream_window_' ~ this.identifier if caches else none -%}
    {%- if cached is not none -%}
      {%- for statement_sql in dbt_tablestream.stream_window_cache_sql(cached, compiled_code, lazy=true) -%}
        {%- call statement('cache_window') -%}{{ statement_sql }}{%- endcall -%}
      {%- endfor -%}
    {%- endif -%}
    {%- set rows_sql = compiled_code if cached is none
                       else 'select * from ' ~ dbt_tablestream._sql_identifier(cached) -%}
    {%- if stream.view is not none -%}
      {%- set ranges_spec = none if rebuild
                            else dbt_tablestream._stream_key_ranges_spec(schema, keys[0], settings.merge_key_ranges,
                                                                         listed_keys, settings.max_rows_per_file,
                                                                         existing_relation) -%}
      {%- set checked = dbt_tablestream.check_stream_keys_not_null(stream, rows_sql, keys, settings.sequence,
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
        'compiled_code': rows_sql, 'keys': keys, 'columns': columns, 'data_columns': data_columns, 'settings': settings,
        'stream': stream, 'target': target_relation, 'existing': none if rebuild else existing_relation,
        'rebuild': rebuild, 'key_ranges': key_ranges, 'window_keys': window_keys, 'write_choice': write_choice,
        'relation_exists': dbt_tablestream.stream_relation_exists,
        'relation_columns': dbt_tablestream.stream_relation_columns}) -%}
    {%- do dbt_tablestream.check_stream_contract(stream, plan.write_sql if rebuild else plan.upserts_sql, rebuild) -%}
    {%- for step in plan.statements -%}
      {%- call statement(step.name) -%}{{ step.sql }}{%- endcall -%}
    {%- endfor -%}
    {%- do dbt_tablestream.fault_point('before_target_commit') -%}
    {%- if rebuild -%}
      {%- set kept_properties = dbt_tablestream.stream_kept_table_properties(existing_relation) -%}
      {%- set write_sql = dbt_tablestream.stream_write_sql(target_relation, plan.write_sql, 'overwrite', stream,
                                                           kept_properties) -%}
      {%- set response = dbt_tablestream.stream_commit(target_relation, write_sql, 'overwrite', stream, layout) -%}
    {%- else -%}
      {#-- 'ignore' compares nothing unless the window starts at a schema change, so it needs no view
           of the output otherwise. --#}
      {%- if settings.on_schema_change != 'ignore' or dbt_tablestream._stream_schema_change(stream) -%}
        {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
        {%- call statement('create_tmp_relation') -%}
          {{ create_temporary_view(tmp_relation, plan.upserts_sql) }}
        {%- endcall -%}
        {%- do dbt_tablestream._apply_stream_schema_changes(stream, settings.on_schema_change, tmp_relation,
                                                            existing_relation) -%}
        {%- do adapter.drop_relation(tmp_relation) -%}
      {%- endif -%}
      {#-- Delta counts every row a rewrite wrote; the run reports the keys it changed. --#}
      {%- set rows_written = window_keys.count if plan.get('write') == 'rewrite' else none -%}
      {%- set response = dbt_tablestream.stream_commit(target_relation, plan.write_sql, 'merge', stream,
                                                       dict(plan.get('layout', layout), rows_written=rows_written)) -%}
    {%- endif -%}
    {%- if cached is not none -%}
      {%- for statement_sql in dbt_tablestream.stream_window_uncache_sql(cached) -%}
        {%- call statement('uncache_window') -%}{{ statement_sql }}{%- endcall -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endif -%}

  {%- set built = {'relation': target_relation, 'existing': existing_relation, 'rebuilt': rebuild} -%}
  {%- do dbt_tablestream._finish_stream_run(stream, response, rows_read, built) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


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


{% macro stream_relation_exists(relation) %}
  {{ return(adapter.dispatch('stream_relation_exists', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{#-- Whether a relation exists (the strategies ask it of the tombstones table). --#}
{% macro spark__stream_relation_exists(relation) %}
  {{ return(adapter.get_relation(relation.database, relation.schema, relation.identifier) is not none) }}
{% endmacro %}


{% macro stream_relation_columns(relation) %}
  {{ return(adapter.dispatch('stream_relation_columns', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{#-- A relation's column names in its order (the net strategy asks it of a target it replaces
     keys in, one DESCRIBE). --#}
{% macro spark__stream_relation_columns(relation) %}
  {{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | list) }}
{% endmacro %}

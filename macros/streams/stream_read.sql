{#-- Shared by source_stream() and ref_stream(): resolve the stream's window and render its read.
     At parse time nothing executes, so a placeholder with the source's columns is rendered. A
     stream_aggregate reads its window or, switched by one literal (_stream_current_rows), the
     source's rows as of the window's end. --#}
{% macro _stream_read(relation, default_suffix) %}
  {%- if not execute -%}
    {{ return("(select * from " ~ relation ~ " where 1 = 0)") }}
  {%- endif -%}
  {%- set resolved = dbt_tablestream.resolve_stream(relation, default_suffix) -%}
  {{ return(dbt_tablestream._stream_read_sql(resolved.stream, relation, resolved.columns, resolved.materialized)) }}
{% endmacro %}


{#-- The read of a resolved stream (`columns`: the source's): its change rows, and for a
     stream_aggregate (`materialized`, the settings') with a window, beside them the source's rows
     as of the window's end, the two picked by _stream_rows_switch. --#}
{% macro _stream_read_sql(stream, relation, columns, materialized) %}
  {%- set rows_sql = dbt_tablestream.change_rows_sql(stream, relation, columns) -%}
  {%- if materialized == 'stream_aggregate' and not stream.snapshot -%}
    {%- set current = dbt_tablestream._stream_input_with(stream, {'snapshot': true}) -%}
    {%- set current = dbt_tablestream._stream_input_with(current,
        {'view': dbt_tablestream.window_relation_sql(relation, current, columns)}) -%}
    {%- set switch = dbt_tablestream._stream_rows_switch('window') -%}
    {{ return("(\n  select * from " ~ rows_sql ~ " as __tablestream_window_rows where " ~ switch ~ " = 'window'"
              ~ "\n  union all\n  select * from "
              ~ dbt_tablestream.change_rows_sql(current, relation, columns, marked=false)
              ~ " as __tablestream_now_rows where " ~ switch ~ " = 'current'\n)") }}
  {%- endif -%}
  {{ return(rows_sql) }}
{% endmacro %}


{#-- The literal that picks which rows a stream_aggregate's read gives: 'window' (its change rows)
     or 'current' (the source as of the window's end, as INSERT rows). Spark folds the comparison,
     so the read not picked is never planned past analysis. --#}
{% macro _stream_rows_switch(rows) %}
  {{ return('/* tablestream:rows */ ' ~ dbt_tablestream._sql_string(rows)) }}
{% endmacro %}


{#-- A stream_aggregate's compiled code with its reads switched to the source's rows as of its
     window's end. --#}
{% macro _stream_current_rows(compiled_code) %}
  {{ return(compiled_code | replace(dbt_tablestream._stream_rows_switch('window'),
                                    dbt_tablestream._stream_rows_switch('current'))) }}
{% endmacro %}


{% macro window_columns(relation, stream) %}
  {{ return(adapter.dispatch('window_columns', 'dbt_tablestream')(relation, stream)) }}
{% endmacro %}


{#-- The columns a read of the window gives (_window_schema_relation's): the source's current ones
     from dbt's relation cache, else described as of the window's `schema_version`. --#}
{% macro spark__window_columns(relation, stream) %}
  {%- if stream.schema_version is none -%}{{ return(adapter.get_columns_in_relation(relation)) }}{%- endif -%}
  {{ return(dbt_tablestream.described_columns('select * from '
      ~ dbt_tablestream._window_schema_relation(relation, stream))) }}
{% endmacro %}


{#-- The columns a read of the source as of `version` gives (DESCRIBE QUERY with time travel). --#}
{% macro _source_columns_as_of(relation, version) %}
  {{ return(dbt_tablestream.described_columns('select * from ' ~ relation ~ ' version as of ' ~ version)) }}
{% endmacro %}


{% macro described_columns(select_sql) %}
  {{ return(adapter.dispatch('described_columns', 'dbt_tablestream')(select_sql)) }}
{% endmacro %}


{#-- The columns a select gives, {name, dtype} each, as DESCRIBE QUERY lists them. --#}
{% macro spark__described_columns(select_sql) %}
  {%- set columns = [] -%}
  {%- for row in run_query('describe query ' ~ select_sql).rows -%}
    {%- do columns.append({'name': row[0], 'dtype': row[1]}) -%}
  {%- endfor -%}
  {{ return(columns) }}
{% endmacro %}


{% macro resolve_stream(relation, default_suffix) %}
  {{ return(adapter.dispatch('resolve_stream', 'dbt_tablestream')(relation, default_suffix)) }}
{% endmacro %}


{#-- The stream's identity, offset and window, pinned now: the offset is the larger of the offsets
     log and the target's own marker (docs/architecture.md, "One stream run, traced", step 1); `to`
     is the source's latest version. Returns {stream, columns, materialized}: the stream, its
     window's columns (window_columns) and the model's materialization, from its settings. --#}
{% macro spark__resolve_stream(relation, default_suffix) %}
  {%- set settings = dbt_tablestream._stream_settings() -%}
  {%- set stream_name = settings.stream_name or (this.identifier ~ '__' ~ default_suffix) -%}
  {%- set start_at = settings.start_at -%}
  {%- set at_timestamp = start_at.timestamp if start_at is mapping and 'timestamp' in start_at else none -%}

  {%- set read = settings.stream_read -%}
  {%- if read == 'changelog' -%}{%- do dbt_tablestream.prepare_changelog_session(stream_name) -%}{%- endif -%}
  {%- set target_exists = adapter.get_relation(this.database, this.schema, this.identifier) is not none -%}
  {#-- Read even when the target is gone: a rebuild must open an epoch above every one logged, or the
       log's newest epoch (an older run's) would win the next position and re-apply its window. --#}
  {%- set logged = dbt_tablestream.read_stream_offset(stream_name) -%}
  {%- set marker = dbt_tablestream._stream_target_marker(this, stream_name) if target_exists else none -%}
  {%- set position = dbt_tablestream._stream_position(logged, marker, target_exists, should_full_refresh()) -%}
  {#-- The source's latest commits are read with its latest version: a continuing stream's window
       is usually among them, so its check reads no more (_stream_window_commits). A snapshot or
       start_at latest needs the latest version alone. --#}
  {%- set recent = 1 if position.restart and start_at in ['snapshot', 'latest']
                   else dbt_tablestream._stream_recent_history() -%}
  {%- set state = dbt_tablestream.stream_source_state(relation, stream_name, at_timestamp, start_at == 'earliest', read,
                                                      recent) -%}
  {%- set from_log = dbt_tablestream._stream_reads_log(read, settings.on_feed_off) -%}
  {%- if not state.tracked and not from_log -%}
    {{ exceptions.raise_compiler_error(dbt_tablestream._stream_untracked_message(
        dbt_tablestream._stream_subject(stream_name), dbt_tablestream._stream_source_name(relation), read,
        target_exists)) }}
  {%- endif -%}

  {%- set restart, epoch, table_id = position.restart, position.epoch, position.table_id -%}
  {%- if restart -%}
    {%- set other_offset = dbt_tablestream._stream_offset_to_start_at(stream_name, start_at.stream, relation, state)
                           if start_at is mapping and 'stream' in start_at else none -%}
    {%- set after = dbt_tablestream._stream_start_after(start_at, state, stream_name,
                                                        dbt_tablestream._stream_source_name(relation), other_offset) -%}
  {%- else -%}
    {%- set after = position.after -%}
  {%- endif -%}

  {%- set snapshot = restart and start_at == 'snapshot' -%}
  {#-- A bounded run reads whole commits up to `max_versions_per_run` past the offset; the next run
       continues from there. A snapshot reads one version, so it has nothing to bound. --#}
  {%- set max_versions = settings.max_versions_per_run -%}
  {%- set through = state.latest_version -%}
  {%- if max_versions is not none and not snapshot and after < through -%}
    {%- set through = [through, after + (max_versions | int)] | min -%}
  {%- endif -%}
  {%- set stream = dbt_tablestream._stream_input(settings, {
      'stream': stream_name, 'epoch': epoch, 'source': dbt_tablestream._stream_source_name(relation),
      'source_table_id': state.table_id,
      'after': after, 'through': through, 'latest': state.latest_version, 'restart': restart, 'snapshot': snapshot,
      'timestamp': state.latest_timestamp, 'file_retention': state.file_retention,
      'runs': logged.runs if logged is not none else none,
      'files': dbt_tablestream._stream_files(state.files, settings.unique_key) if from_log else none,
  }) -%}
  {%- do dbt_tablestream.fault_point('window_pinned') -%}
  {%- set window_rows = dbt_tablestream._stream_window_commits(relation, stream, state.history) -%}
  {%- set parts = dbt_tablestream._stream_window_parts(stream, table_id, window_rows) -%}
  {%- set recreated = parts.pop('recreated') -%}
  {%- set stream = dbt_tablestream._stream_input_with(stream, parts) -%}
  {%- if snapshot or after < through or recreated -%}
    {#-- With on_stale other than fail, a stale or recreated source is recovered from, not refused
         (_recover_stale_stream); any other problem is refused. --#}
    {%- set on_stale = settings.on_stale -%}
    {%- set problem = dbt_tablestream.stream_window_problem(relation, stream, table_id, window_rows) -%}
    {%- set recovered = problem is not none and on_stale != 'fail' and not restart
                        and problem.kind in ['stale', 'recreated', 'restored'] -%}
    {%- if recovered -%}
      {%- set stream = dbt_tablestream._recover_stale_stream(stream, on_stale, problem.message,
          [epoch, (logged.epoch | int) if logged is not none else 0] | max + 1) -%}
    {%- elif problem is not none -%}
      {{ exceptions.raise_compiler_error(problem.message) }}
    {%- endif -%}
    {%- if from_log and not stream.snapshot -%}
      {%- set stream = dbt_tablestream._stream_input_with(stream,
          {'files': dict(stream.files, versions=dbt_tablestream._window_log_versions(stream, window_rows))}) -%}
    {%- endif -%}
  {%- endif -%}
  {#-- Described once, for the window's read and the change rows' select list; an empty window's
       rows are none of the source's, selected with `*` (change_rows_sql), so it describes nothing. --#}
  {%- set columns = none -%}
  {%- if stream.snapshot or stream.after < stream.through -%}
    {%- set columns = dbt_tablestream.window_columns(relation, stream) -%}
    {%- set stream = dbt_tablestream._stream_input_with(stream,
        {'view': dbt_tablestream._register_stream_window(relation, stream, table_id, true, columns)}) -%}
  {%- endif -%}
  {{ return({'stream': stream, 'columns': columns, 'materialized': settings.materialized}) }}
{% endmacro %}


{#-- How many of the source's newest commits a stream run reads with its latest version: windows of
     up to this many versions need no second DESCRIBE HISTORY. --#}
{% macro _stream_recent_history() %}
  {{ return(10) }}
{% endmacro %}


{#-- on_stale: a stream whose source went stale (its window's log entries or files are gone) or
     was recreated moves to a new epoch at the source's latest version instead of failing:
     `resnapshot` rebuilds the target from a snapshot there, `skip_to_latest` applies nothing and
     leaves the versions in between unapplied. Either way a warning says what happened, and the
     offsets row's note records why. Returns the input in its new epoch. --#}
{% macro _recover_stale_stream(stream, on_stale, problem, epoch) %}
  {%- set skipped = stream.after ~ ', ' ~ stream.latest -%}
  {#-- The window it replaces is not read, nor the older schema it would have been read with. --#}
  {%- set resnapshot = on_stale == 'resnapshot' -%}
  {%- set moved = {'epoch': epoch, 'split': none, 'schema_version': none, 'schema_change': none,
                   'after': stream.latest, 'through': stream.latest, 'note': on_stale ~ ' after: ' ~ problem} -%}
  {%- set stream = dbt_tablestream._stream_input_with(stream,
      dict(moved, restart=true, snapshot=true) if resnapshot else moved) -%}
  {%- if resnapshot -%}
    {%- do exceptions.warn(dbt_tablestream._stream_subject(stream.stream)
        ~ " (on_stale: resnapshot): the target is rebuilt from a snapshot of " ~ stream.source ~ " at version "
        ~ stream.latest ~ ", in epoch " ~ epoch ~ ", because: " ~ problem) -%}
  {%- else -%}
    {%- do exceptions.warn(dbt_tablestream._stream_subject(stream.stream)
        ~ " (on_stale: skip_to_latest): skipped the versions (" ~ skipped ~ "] of " ~ stream.source
        ~ "; their changes are not in the target. The offset moves to version " ~ stream.latest ~ ", in epoch " ~ epoch
        ~ ", because: " ~ problem) -%}
  {%- endif -%}
  {{ return(stream) }}
{% endmacro %}


{#-- The source's name as the stream records it (offsets log, marker, messages): `schema.table`,
     or `catalog.schema.table` when the relation names a catalog (Unity Catalog), so the operations
     that parse it back (_parse_relation) reach the same table. --#}
{% macro _stream_source_name(relation) %}
  {%- set catalog = relation.database if relation.database and relation.database != relation.schema else none -%}
  {{ return((catalog ~ '.' if catalog else '') ~ relation.schema ~ '.' ~ relation.identifier) }}
{% endmacro %}


{#-- Why a reader (`subject`: "Stream <name>", or a change query) cannot read its source with
     `read`: what the source does not record, and the operation that turns it on. A stream that
     has written its target (`established`) has also missed the changes committed while the feed
     was off; only a rebuild brings those in. `log_read`: the caller can read the Delta log instead
     (not the PySpark API). --#}
{% macro _stream_untracked_message(subject, source, read, established=false, log_read=true) %}
  {%- if read == 'changelog' -%}
    {{ return(subject ~ ": stream_read: changelog reads Delta's changelog (Spark's CHANGES clause), which needs row "
        ~ "tracking on the source " ~ source ~ ", and it is not enabled. Nothing was written. Enable it with `dbt "
        ~ "run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ source ~ ", mode: changelog}'` "
        ~ "(the stream sees changes committed from then on), or use stream_read: table_changes.") }}
  {%- endif -%}
  {{ return(subject ~ ": the change data feed is not enabled on the source " ~ source ~ ", so there are no changes to "
      ~ "stream. Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ source
      ~ "}'`; the stream sees changes committed from then on."
      ~ (" Changes committed while the feed was off are in no feed: once it is enabled, run this model with "
         ~ "`--full-refresh` to rebuild its target from the source's current state." if established else "")
      ~ (" Or read its commits from the files the Delta log says each added and removed, with no feed: "
         ~ "stream_read: delta_log." if log_read else "")) }}
{% endmacro %}


{#-- start_at: {stream: <name>}: the offset another stream of the same source stands at now (its
     latest row in this model's offsets log), so a second consumer or a blue/green rebuild starts
     where that stream is. --#}
{% macro _stream_offset_to_start_at(stream_name, other_name, relation, state) %}
  {%- set source = dbt_tablestream._stream_source_name(relation) -%}
  {%- set other = dbt_tablestream.read_stream_offset(other_name) -%}
  {%- set log = dbt_tablestream._offsets_relation() -%}
  {%- if other is none or other.to_version is none -%}
    {{ exceptions.raise_compiler_error(dbt_tablestream._stream_subject(stream_name) ~ ": start_at names the stream "
        ~ other_name ~ ", which has "
        ~ ("no row in " ~ log if other is none else "no offset (it was reset or dropped and has not run since)")
        ~ ", so there is no offset to start at. Nothing was written. Name a stream that has run on " ~ source
        ~ " and logs to " ~ log ~ ", or use another start_at.") }}
  {%- endif -%}
  {%- if other.source != source or other.source_table_id != state.table_id -%}
    {{ exceptions.raise_compiler_error(dbt_tablestream._stream_subject(stream_name) ~ ": start_at names the stream "
        ~ other_name ~ ", which reads "
        ~ (other.source if other.source != source
           else other.source ~ " as it was before it was dropped and recreated (Delta table id "
                ~ other.source_table_id ~ ", now " ~ state.table_id ~ ")")
        ~ ", not " ~ source ~ ", so its offset is not a version of this source. Nothing was written. Name a stream of "
        ~ source ~ ", or use another start_at.") }}
  {%- endif -%}
  {{ return(other.to_version | int) }}
{% endmacro %}

{#-- The commit of a stream run (docs/architecture.md, "One stream run, traced"): the entry to the
     protocol's write step, and the marked protocol's parts (the marker's settings, the proof that
     the commit is this run's own, compaction, the rows written). --#}


{#-- Runs a write built by stream_write_sql / stream_merge_sql (mode 'overwrite', 'append' or
     'merge') as the run's one commit, under the run's protocol. Returns its response: code
     'SKIPPED' when a concurrent run had already applied the window, and rows_affected. `layout`:
     how the write lays out its files (stream_commit_open_sql). --#}
{% macro stream_commit(target, sql, mode, stream, layout={}) %}
  {{ return(adapter.dispatch('stream_commit', 'dbt_tablestream')(target, sql, mode, stream, layout)) }}
{% endmacro %}


{#-- The commit protocol's write step (macros/protocols/): _marked_commit or _reapply_commit. --#}
{% macro spark__stream_commit(target, sql, mode, stream, layout={}) %}
  {{ return(dbt_tablestream._protocol_step('commit')(target, sql, mode, stream, layout)) }}
{% endmacro %}


{#-- The target's newest commits after the write, read until they hold this run's own commit
     (usually the newest) or reach 50 (stream_history_reads): a concurrent run's commit of the window
     is among the 50 when Delta skipped this run's write. --#}
{% macro history_with_own_commit(target, stream) %}
  {%- set read = namespace(rows=[], done=false) -%}
  {%- for limit in dbt_tablestream.stream_history_reads() if limit is not none and not read.done -%}
    {%- set read.rows = run_query(dbt_tablestream.describe_history_sql(target, limit)).rows -%}
    {%- set own = dbt_tablestream.own_commit(read.rows, stream) -%}
    {#-- Found in the read's oldest row, the write itself could be older still (a compaction after it
         carries its marker). --#}
    {%- set read.done = read.rows | length < limit or (own is not none and own.commit_version > read.rows[-1]['version'] | int) -%}
  {%- endfor -%}
  {{ return(read.rows) }}
{% endmacro %}


{% macro stream_commit_verdict(target, stream) %}
  {{ return(adapter.dispatch('stream_commit_verdict', 'dbt_tablestream')(target, stream)) }}
{% endmacro %}


{#-- stream_marker_verdict for each input of the group with a window to apply, from one read of
     the target's history: 'applied' only when a concurrent run applied all of them (it committed
     them together); a group of which only some inputs were applied is refused. --#}
{% macro spark__stream_commit_verdict(target, stream) %}
  {%- set reading = stream.inputs | rejectattr('view', 'none') | list -%}
  {%- set markers = dbt_tablestream.stream_target_markers(target, reading | map(attribute='stream') | list) -%}
  {%- set applied = [] -%}
  {%- for input in reading if dbt_tablestream.stream_marker_verdict(input, markers[input.stream]) == 'applied' -%}
    {%- do applied.append(input.stream) -%}
  {%- endfor -%}
  {%- if applied and applied | length < reading | length -%}
    {{ exceptions.raise_compiler_error(
        "Streams " ~ stream.stream ~ " are being consumed by another run: it applied " ~ applied | join(', ')
        ~ " after this run read them, and not the others. Nothing was written; run again to apply what is left.") }}
  {%- endif -%}
  {{ return('applied' if applied else 'apply') }}
{% endmacro %}


{% macro own_commit(history_rows, stream) %}
  {{ return(adapter.dispatch('own_commit', 'dbt_tablestream')(history_rows, stream)) }}
{% endmacro %}


{#-- This run's own commit of the window: the oldest recent commit whose marker names this stream
     id, this window's end and this invocation. Commits made while the marker was set (Delta's
     auto-compaction right after the write) carry it too, so the oldest is the write itself. --#}
{% macro spark__own_commit(history_rows, stream) %}
  {%- set found = namespace(marker=none) -%}
  {%- for commit in dbt_tablestream.stream_commit_markers(history_rows) -%}
    {%- set own = commit.own -%}
    {%- if own.get('stream_id') == stream.stream_id and (own.get('to') | int) == stream.through and own.get('invocation_id') == invocation_id -%}
      {%- set found.marker = {'commit_version': commit.commit_version, 'stream_id': stream.stream_id, 'to': stream.through} -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found.marker) }}
{% endmacro %}


{% macro stream_commit_open_sql(stream, layout={}) %}
  {{ return(adapter.dispatch('stream_commit_open_sql', 'dbt_tablestream')(stream, layout)) }}
{% endmacro %}


{#-- The session settings that make the next DML one marked, idempotent Delta commit: a
     SetTransaction (app id = stream id, version = the window's end) and commitInfo.userMetadata
     carrying the marker. The value is backquoted so no character of it ends the statement.
     Then the write's `layout` (docs/architecture.md, "Cost"): with `max_rows_per_file` its files
     hold at most that many rows (with the key order of builds and MERGE output, each file then
     holds a narrow key range); with `compact`, Delta compacts the table's small files after the
     write (stream_compaction_sql). --#}
{% macro spark__stream_commit_open_sql(stream, layout={}) %}
  {%- set metadata = tojson(dbt_tablestream.stream_marker_metadata(stream)) | replace('`', '``') -%}
  {{ return([
      'set spark.databricks.delta.write.txnAppId = ' ~ stream.stream_id,
      'set spark.databricks.delta.write.txnVersion = ' ~ stream.through,
      'set spark.databricks.delta.commitInfo.userMetadata = `' ~ metadata ~ '`',
  ] + (['set spark.sql.files.maxRecordsPerFile = ' ~ layout.max_rows_per_file] if layout.get('max_rows_per_file') else [])
    + (dbt_tablestream.stream_compaction_sql(true) if layout.get('compact') else [])) }}
{% endmacro %}


{% macro stream_commit_close_sql(layout={}) %}
  {{ return(adapter.dispatch('stream_commit_close_sql', 'dbt_tablestream')(layout)) }}
{% endmacro %}


{#-- Delta leaves the settings in place after a write, and a later DML on the session would then
     be marked, or skipped, as this stream's: reset them every time. --#}
{% macro spark__stream_commit_close_sql(layout={}) %}
  {{ return([
      'reset spark.databricks.delta.write.txnAppId',
      'reset spark.databricks.delta.write.txnVersion',
      'reset spark.databricks.delta.commitInfo.userMetadata',
  ] + (['reset spark.sql.files.maxRecordsPerFile'] if layout.get('max_rows_per_file') else [])
    + (dbt_tablestream.stream_compaction_sql(false) if layout.get('compact') else [])) }}
{% endmacro %}


{% macro stream_compaction_sql(on) %}
  {{ return(adapter.dispatch('stream_compaction_sql', 'dbt_tablestream')(on)) }}
{% endmacro %}


{#-- A year of runs appends tens of thousands of small files to the offsets log and to a
     table_stream target, and every read of them would open each one. Every
     `tablestream_compact_every`-th run of a stream (default 50, counted in the offsets log;
     stream_compaction_due) turns on Delta's auto-compaction for its write: after the commit,
     Delta bin-packs the table's files under 16 MB into files of up to 128 MB, in a commit of its
     own with dataChange = false, which the change feed and row tracking do not show as changes,
     so streams reading the table see nothing. Delta logs and ignores a compaction that fails (a
     concurrent one won), so the run's outcome never depends on it. minNumFiles 1: Delta counts
     small files in the driver's memory, blind to files other processes wrote, and the package
     has already decided that it is time. --#}
{% macro spark__stream_compaction_sql(on) %}
  {%- set settings = {'enabled': 'true', 'minNumFiles': '1', 'minFileSize': '16777216', 'maxFileSize': '134217728'} -%}
  {%- set statements = [] -%}
  {%- for name, value in settings.items() -%}
    {%- do statements.append(('set spark.databricks.delta.autoCompact.' ~ name ~ ' = ' ~ value) if on else ('reset spark.databricks.delta.autoCompact.' ~ name)) -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}


{#-- The table properties the package sets on a table_stream target or an offsets log it creates
     (the protocol's _table_properties); a model's own tblproperties win. --#}
{% macro stream_compaction_properties() %}
  {{ return(dbt_tablestream._protocol_step('table_properties')()) }}
{% endmacro %}


{#-- Whether this run compacts (spark__stream_compaction_sql): every `tablestream_compact_every`-th
     run of any of the inputs, counting each input's rows in the offsets log. --#}
{% macro stream_compaction_due(inputs) %}
  {%- set every = var('tablestream_compact_every', 50) | int -%}
  {%- for input in inputs if every > 0 and input.runs is not none and (input.runs + 1) % every == 0 -%}
    {{ return(true) }}
  {%- endfor -%}
  {{ return(false) }}
{% endmacro %}


{% macro rows_written(result, history, marker) %}
  {{ return(adapter.dispatch('rows_written', 'dbt_tablestream')(result, history, marker)) }}
{% endmacro %}


{#-- MERGE reports num_affected_rows; an INSERT or CREATE reports nothing, so the write's own
     commit's operationMetrics (numOutputRows) in the target's history are read instead. --#}
{% macro spark__rows_written(result, history, marker) %}
  {%- if result.table is not none and 'num_affected_rows' in result.table.column_names and result.table.rows | length > 0 -%}
    {{ return(result.table.rows[0]['num_affected_rows'] | int) }}
  {%- endif -%}
  {{ return(dbt_tablestream.commit_output_rows(history, marker.commit_version) if marker is not none else none) }}
{% endmacro %}


{% macro commit_output_rows(history, commit_version) %}
  {{ return(adapter.dispatch('commit_output_rows', 'dbt_tablestream')(history, commit_version)) }}
{% endmacro %}


{#-- numOutputRows of one commit in DESCRIBE HISTORY rows: that commit's, never a later commit's
     (auto-compaction rewrites rows in a commit of its own, carrying the same marker). --#}
{% macro spark__commit_output_rows(history, commit_version) %}
  {%- for row in history if (row['version'] | int) == commit_version -%}
    {%- set metrics = row['operationMetrics'] -%}
    {%- if metrics is mapping and 'numOutputRows' in metrics -%}
      {{ return(metrics['numOutputRows'] | int) }}
    {%- endif -%}
    {%- set found = modules.re.search('numOutputRows\\W+(\\d+)', metrics | string) -%}
    {{ return(found.group(1) | int if found else none) }}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- The commitInfo marker of a stream commit (docs/architecture.md, "One stream run, traced",
     step 5): the group's own id, SetTransaction version and invocation, then each input's marker.
     A commit of one stream written by an earlier version of the package carries that stream's
     marker alone, at the top level; stream_commit_markers reads both shapes. --#}
{% macro stream_marker_metadata(stream) %}
  {%- set inputs = [] -%}
  {%- for input in stream.inputs -%}
    {%- do inputs.append({
        'tablestream.stream': input.stream,
        'tablestream.stream_id': input.stream_id,
        'tablestream.epoch': input.epoch,
        'tablestream.from': input.after,
        'tablestream.to': input.through,
        'tablestream.source': input.source,
        'tablestream.source_table_id': input.source_table_id,
        'tablestream.invocation_id': invocation_id,
    }) -%}
  {%- endfor -%}
  {{ return({
      'tablestream.stream': stream.stream,
      'tablestream.stream_id': stream.stream_id,
      'tablestream.to': stream.through,
      'tablestream.source': stream.source,
      'tablestream.invocation_id': invocation_id,
      'tablestream.inputs': inputs,
  }) }}
{% endmacro %}


{#-- What the target's marker says of a window about to be applied (mode append or merge):
     'apply', or 'applied' when a concurrent run already applied all of it. A marker between the
     window's start and end means a concurrent run moved the stream mid-window: refused. --#}
{% macro stream_marker_verdict(stream, marker) %}
  {%- set applied = (marker.to | int) if marker is not none and marker.stream_id == stream.stream_id else none -%}
  {%- if applied is not none and applied >= stream.through -%}
    {{ return('applied') }}
  {%- endif -%}
  {%- if applied is not none and applied > stream.after -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream.stream_subject(stream.stream) ~ " is being consumed by another run: it applied the source up to version "
        ~ applied ~ " after this run read from version " ~ stream.after ~ ". Nothing was written; run again to apply what is left.") }}
  {%- endif -%}
  {{ return('apply') }}
{% endmacro %}

{#-- The commit of a stream run (docs/architecture.md, "One stream run, traced"): the entry to the
     protocol's write step, the session settings a marked write opens and closes, and the rows
     it wrote. --#}


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


{% macro stream_commit_open_sql(stream, layout={}) %}
  {{ return(adapter.dispatch('stream_commit_open_sql', 'dbt_tablestream')(stream, layout)) }}
{% endmacro %}


{#-- The session settings that make the next DML one marked, idempotent Delta commit: a
     SetTransaction (app id = stream id, version = the window's end) and commitInfo.userMetadata
     carrying the marker. The value is backquoted so no character of it ends the statement.
     Then the write's `layout` (docs/architecture.md, "Cost"): with `max_rows_per_file` its files
     hold at most that many rows (a build, in key order, then writes files of narrow key ranges);
     with `compact`, Delta compacts the table's small files after the
     write (stream_compaction_sql); with `copy_files`, a MERGE into a target with deletion vectors
     copies the files it touches instead of marking rows in vectors (Delta's
     merge.deletionVectors.persistent; docs/architecture.md, "A window's write"); with `replaces`
     (a replaceWhere of the window's keys, stream_replace_where_sql), Delta does not check each
     inserted row against the key list, a check whose cost grows with keys times rows: every
     inserted row is a key of the list by construction; and Parquet does not test its row groups
     and pages against the list, which costs more than the scan it would save (100,000 keys in a
     10M-row target: 8.86 s against 3.33 s, bench/README.md, "Finding the listed keys"). --#}
{% macro spark__stream_commit_open_sql(stream, layout={}) %}
  {%- set metadata = tojson(dbt_tablestream._stream_marker_metadata(stream)) | replace('`', '``') -%}
  {{ return([
      'set spark.databricks.delta.write.txnAppId = ' ~ stream.stream_id,
      'set spark.databricks.delta.write.txnVersion = ' ~ stream.through,
      'set spark.databricks.delta.commitInfo.userMetadata = `' ~ metadata ~ '`',
  ] + (['set spark.sql.files.maxRecordsPerFile = ' ~ layout.max_rows_per_file] if layout.get('max_rows_per_file') else [])
    + (['set spark.databricks.delta.merge.deletionVectors.persistent = false'] if layout.get('copy_files') else [])
    + (['set spark.databricks.delta.replaceWhere.constraintCheck.enabled = false',
        'set spark.sql.parquet.filterPushdown = false'] if layout.get('replaces') else [])
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
    + (['reset spark.databricks.delta.merge.deletionVectors.persistent'] if layout.get('copy_files') else [])
    + (['reset spark.databricks.delta.replaceWhere.constraintCheck.enabled',
        'reset spark.sql.parquet.filterPushdown'] if layout.get('replaces') else [])
    + (dbt_tablestream.stream_compaction_sql(false) if layout.get('compact') else [])) }}
{% endmacro %}


{#-- MERGE reports num_affected_rows; an INSERT or CREATE reports nothing, so the write's own
     commit's operationMetrics (numOutputRows) in the target's history are read instead. --#}
{% macro _rows_written(result, history, marker) %}
  {%- if result.table is not none and 'num_affected_rows' in result.table.column_names and result.table.rows | length > 0 -%}
    {{ return(result.table.rows[0]['num_affected_rows'] | int) }}
  {%- endif -%}
  {{ return(dbt_tablestream._commit_output_rows(history, marker.commit_version) if marker is not none else none) }}
{% endmacro %}


{#-- numOutputRows of one commit in DESCRIBE HISTORY rows: that commit's, never a later commit's
     (auto-compaction rewrites rows in a commit of its own, carrying the same marker). --#}
{% macro _commit_output_rows(history, commit_version) %}
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

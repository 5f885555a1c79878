{#-- The commit of a stream run (docs/architecture.md, "One stream run, traced"): the entry to the
     protocol's write step, the session settings a marked write opens and closes, and the rows
     it wrote. --#}


{#-- Runs a write built by stream_write_sql / stream_merge_sql (mode 'overwrite', 'append' or
     'merge') as the run's one commit, under the run's protocol. Returns its response: code
     'SKIPPED' when a concurrent run had already applied the window, and rows_affected. `write_options`:
     how the write lays out its files (stream_commit_open_sql), and `rows_written`, the rows to
     report when the run counted them itself (a rewrite's, whose commit counts every row of the
     table): no read of the commit's metrics. --#}
{% macro stream_commit(target, sql, mode, stream, write_options={}) %}
  {{ return(adapter.dispatch('stream_commit', 'dbt_tablestream')(target, sql, mode, stream, write_options)) }}
{% endmacro %}


{#-- The commit protocol's write step (macros/protocols/): _marked_commit or _reapply_commit. --#}
{% macro spark__stream_commit(target, sql, mode, stream, write_options={}) %}
  {{ return(dbt_tablestream._protocol_step('commit')(target, sql, mode, stream, write_options)) }}
{% endmacro %}


{% macro stream_commit_open_sql(stream, write_options={}, clear=true) %}
  {{ return(adapter.dispatch('stream_commit_open_sql', 'dbt_tablestream')(stream, write_options, clear)) }}
{% endmacro %}


{#-- The session settings that make the next DML one marked, idempotent Delta commit
     (_stream_marker_settings), and the write's options (_stream_write_option_settings). With `clear`, it
     first resets each write option's setting this write does not make, so one left by an earlier write
     that failed before its close never applies to this one; a session that cannot hold one (a
     session per model, or the local profile's, which restores a failed model's settings) needs
     no clearing (docs/architecture.md, "A failed write"). --#}
{% macro spark__stream_commit_open_sql(stream, write_options={}, clear=true) %}
  {%- set option_settings = dbt_tablestream._stream_write_option_settings(write_options) -%}
  {%- set statements = [] -%}
  {%- for key, value in option_settings if clear and value is none -%}
    {%- do statements.append('reset ' ~ key) -%}
  {%- endfor -%}
  {%- for key, value in dbt_tablestream._stream_marker_settings(stream) + option_settings if value is not none -%}
    {%- do statements.append('set ' ~ key ~ ' = ' ~ value) -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}


{% macro stream_commit_close_sql(write_options={}) %}
  {{ return(adapter.dispatch('stream_commit_close_sql', 'dbt_tablestream')(write_options)) }}
{% endmacro %}


{#-- Delta leaves the settings in place after a write, and a later DML on the session would then
     be marked, or skipped, as this stream's: reset every one the open made. --#}
{% macro spark__stream_commit_close_sql(write_options={}) %}
  {%- set statements = [] -%}
  {%- for key, value in dbt_tablestream._stream_marker_settings() -%}
    {%- do statements.append('reset ' ~ key) -%}
  {%- endfor -%}
  {%- for key, value in dbt_tablestream._stream_write_option_settings(write_options) if value is not none -%}
    {%- do statements.append('reset ' ~ key) -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}


{#-- Delta's idempotent-write settings, [key, value] pairs, which every marked write makes: a
     SetTransaction (app id = stream id, version = the window's end) and commitInfo.userMetadata
     carrying the marker, the app id and the marker backquoted (_sql_identifier) so no character
     of a stream's name ends the statement. Without a stream, the keys with no value. --#}
{% macro _stream_marker_settings(stream=none) %}
  {%- if stream is none -%}
    {{ return([['spark.databricks.delta.write.txnAppId', none], ['spark.databricks.delta.write.txnVersion', none],
               ['spark.databricks.delta.commitInfo.userMetadata', none]]) }}
  {%- endif -%}
  {%- set metadata = tojson(dbt_tablestream._stream_marker_metadata(stream)) -%}
  {{ return([['spark.databricks.delta.write.txnAppId', dbt_tablestream._sql_identifier(stream.stream_id)],
             ['spark.databricks.delta.write.txnVersion', stream.through],
             ['spark.databricks.delta.commitInfo.userMetadata', dbt_tablestream._sql_identifier(metadata)]]) }}
{% endmacro %}


{#-- Every setting of a write's `write_options` (docs/architecture.md, "Cost"), [key, value] pairs, value
     none where this write leaves the key as the session started. With `max_rows_per_file` its
     files hold at most that many rows (a build, in key order, then writes files of narrow key
     ranges); with `compact`, Delta compacts the table's small files after the write
     (stream_compaction_sql); with `copy_files`, a MERGE into a target with deletion vectors copies
     the files it touches instead of marking rows in vectors (Delta's
     merge.deletionVectors.persistent; docs/architecture.md, "A window's write"); with `replaces` (a
     replaceWhere of the window's keys, stream_replace_where_sql), Delta does not check each
     inserted row against the key list, a check whose cost grows with keys times rows: every
     inserted row is a key of the list by construction; and Parquet does not test its row groups
     and pages against the list, which costs more than the scan it would save (bench/README.md,
     "Finding the listed keys"). --#}
{% macro _stream_write_option_settings(write_options={}) %}
  {%- set replaces = 'false' if write_options.get('replaces') else none -%}
  {%- set settings = [
      ['spark.sql.files.maxRecordsPerFile', write_options.get('max_rows_per_file') or none],
      ['spark.databricks.delta.merge.deletionVectors.persistent', 'false' if write_options.get('copy_files') else none],
      ['spark.databricks.delta.replaceWhere.constraintCheck.enabled', replaces],
      ['spark.sql.parquet.filterPushdown', replaces],
      ['spark.sql.files.openCostInBytes', '1099511627776' if write_options.get('aligned') else none],
  ] -%}
  {%- for key, value in dbt_tablestream._stream_compaction_settings().items() -%}
    {%- do settings.append([key, value if write_options.get('compact') else none]) -%}
  {%- endfor -%}
  {{ return(settings) }}
{% endmacro %}


{#-- MERGE reports num_affected_rows; an INSERT or CREATE reports nothing, so the write's own
     commit's operationMetrics (numOutputRows) in the target's history are read instead. --#}
{% macro _rows_written(result, history, marker) %}
  {%- if result.table is not none and 'num_affected_rows' in result.table.column_names
      and result.table.rows | length > 0 -%}
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

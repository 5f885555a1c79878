{#-- The engine-specific pieces of a stream run, dispatched: tablestream__ (embedded engine, in
     tablestream.sql) and spark__ (cluster engine: delta-spark and Databricks, in spark.sql). --#}

{% macro stream_source_state(relation, stream_name, at_timestamp, want_earliest) %}
  {{ return(adapter.dispatch('stream_source_state', 'dbt_tablestream')(relation, stream_name, at_timestamp, want_earliest)) }}
{% endmacro %}

{% macro stream_target_marker(target, stream_name) %}
  {{ return(adapter.dispatch('stream_target_marker', 'dbt_tablestream')(target, stream_name)) }}
{% endmacro %}

{#-- Checks the window and returns the relation its raw change rows are read from. --#}
{% macro register_stream_window(relation, stream, table_id) %}
  {{ return(adapter.dispatch('register_stream_window', 'dbt_tablestream')(relation, stream, table_id)) }}
{% endmacro %}

{#-- SQL that writes `sql` into `target` (mode 'overwrite' or 'append') as one Delta commit carrying
     the stream's marker. --#}
{% macro stream_write_sql(target, sql, mode, stream) %}
  {{ return(adapter.dispatch('stream_write_sql', 'dbt_tablestream')(target, sql, mode, stream)) }}
{% endmacro %}

{#-- SQL that MERGEs a stream's net changes (one row per key: INSERT, UPDATE_AFTER or DELETE) into
     the target as one Delta commit carrying the stream's marker. --#}
{% macro stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream) %}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt_tablestream')(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream)) }}
{% endmacro %}

{#-- Runs a write built by stream_write_sql / stream_merge_sql (mode 'overwrite', 'append' or
     'merge') as the run's one marked commit. Returns its response: code 'SKIPPED' when a
     concurrent run had already applied the window, and rows_affected. --#}
{% macro stream_commit(target, sql, mode, stream) %}
  {{ return(adapter.dispatch('stream_commit', 'dbt_tablestream')(target, sql, mode, stream)) }}
{% endmacro %}

{#-- Where a stream stands against its source, from its latest offsets-log row: offset_time,
     source_version, source_time, stale, problem (with the remedy), at_risk_from (when its oldest
     unconsumed change may be lost to log cleanup or VACUUM). Reads no change rows. --#}
{% macro stream_health(row) %}
  {{ return(adapter.dispatch('stream_health', 'dbt_tablestream')(row)) }}
{% endmacro %}

{% macro append_offsets_row(relation, select_sql) %}
  {{ return(adapter.dispatch('append_offsets_row', 'dbt_tablestream')(relation, select_sql)) }}
{% endmacro %}

{#-- Test-only hooks at the steps of the commit protocol (before_target_commit,
     after_target_commit, after_offsets_append): DBT_TABLESTREAM_FAULT=<point> kills the process
     there; DBT_TABLESTREAM_PAUSE=<point>:<seconds> holds it there, to line up concurrent runs. --#}
{% macro fault_point(point) %}
  {%- set pause = env_var('DBT_TABLESTREAM_PAUSE', '') -%}
  {%- if pause and pause.split(':')[0] == point -%}
    {%- do adapter.dispatch('pause_point', 'dbt_tablestream')(point, pause.split(':')[1] | float) -%}
  {%- endif -%}
  {%- if env_var('DBT_TABLESTREAM_FAULT', '') == point -%}
    {{ return(adapter.dispatch('fault_point', 'dbt_tablestream')(point)) }}
  {%- endif -%}
{% endmacro %}

{#-- The commitInfo marker of a stream commit (DESIGN.md section 6). --#}
{% macro stream_marker_metadata(stream) %}
  {{ return({
      'tablestream.stream': stream.stream,
      'tablestream.stream_id': stream.stream_id,
      'tablestream.epoch': stream.epoch,
      'tablestream.from': stream.after,
      'tablestream.to': stream.through,
      'tablestream.source': stream.source,
      'tablestream.source_table_id': stream.source_table_id,
      'tablestream.invocation_id': invocation_id,
  }) }}
{% endmacro %}


{% macro default__stream_source_state(relation, stream_name, at_timestamp, want_earliest) %}
  {{ dbt_tablestream.engine_not_supported('stream_source_state') }}
{% endmacro %}
{% macro default__stream_target_marker(target, stream_name) %}
  {{ dbt_tablestream.engine_not_supported('stream_target_marker') }}
{% endmacro %}
{% macro default__register_stream_window(relation, stream, table_id) %}
  {{ dbt_tablestream.engine_not_supported('register_stream_window') }}
{% endmacro %}
{% macro default__stream_write_sql(target, sql, mode, stream) %}
  {{ dbt_tablestream.engine_not_supported('stream_write_sql') }}
{% endmacro %}
{% macro default__stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream) %}
  {{ dbt_tablestream.engine_not_supported('stream_merge_sql') }}
{% endmacro %}
{% macro default__stream_commit(target, sql, mode, stream) %}
  {{ dbt_tablestream.engine_not_supported('stream_commit') }}
{% endmacro %}
{% macro default__stream_health(row) %}
  {{ dbt_tablestream.engine_not_supported('stream_health') }}
{% endmacro %}
{% macro default__append_offsets_row(relation, select_sql) %}
  {{ dbt_tablestream.engine_not_supported('append_offsets_row') }}
{% endmacro %}
{% macro default__pause_point(point, seconds) %}
  {{ dbt_tablestream.engine_not_supported('pause_point') }}
{% endmacro %}
{% macro default__fault_point(point) %}
  {{ exceptions.raise_compiler_error("tablestream test fault at " ~ point) }}
{% endmacro %}

{% macro engine_not_supported(what) %}
  {{ exceptions.raise_compiler_error(
      "dbt_tablestream: streams are not available on adapter type '" ~ adapter.type()
      ~ "' (" ~ what ~ "). Supported: type: tablestream (the embedded engine), type: spark with delta-spark, "
      ~ "and type: databricks.") }}
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
        "Stream " ~ stream.stream ~ " is being consumed by another run: it applied the source up to version "
        ~ applied ~ " after this run read from version " ~ stream.after ~ ". Nothing was written; run again to apply what is left.") }}
  {%- endif -%}
  {{ return('apply') }}
{% endmacro %}


{#-- The remedy for a stream that can no longer continue from its offset. --#}
{% macro stream_reset_remedy() %}
  {{ return("Reset the stream with `dbt run --full-refresh -s " ~ model.name ~ "`: it rebuilds the target and starts the stream again from its start_at.") }}
{% endmacro %}

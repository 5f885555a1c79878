{#-- The engine-specific pieces of a stream run, dispatched: tablestream__ (embedded engine) here;
     spark__ (cluster engine) lands with the cluster-engine issue and until then says so. --#}

{% macro stream_source_state(relation, stream_name, at_timestamp, want_earliest) %}
  {{ return(adapter.dispatch('stream_source_state', 'dbt_tablestream')(relation, stream_name, at_timestamp, want_earliest)) }}
{% endmacro %}

{% macro stream_target_marker(target, stream_name) %}
  {{ return(adapter.dispatch('stream_target_marker', 'dbt_tablestream')(target, stream_name)) }}
{% endmacro %}

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
{% macro stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, stream) %}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt_tablestream')(target, source_sql, keys, delete_mode, update_columns, stream)) }}
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
{% macro default__stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, stream) %}
  {{ dbt_tablestream.engine_not_supported('stream_merge_sql') }}
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
      "dbt_tablestream: streams are not yet available on adapter type '" ~ adapter.type()
      ~ "' (" ~ what ~ "). Supported today: type: tablestream (the embedded engine).") }}
{% endmacro %}

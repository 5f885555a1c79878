{#-- The marked commit protocol (docs/architecture.md, "One stream run, traced"): the target DML
     is one Delta commit carrying Delta's idempotent-write session settings and the stream's
     marker, and the target's history proves the commit is this run's own. Each macro is one step
     of a run, reached through _protocol_step; macros/protocols/reapply.sql holds the same steps
     for the reapply protocol. --#}


{#-- The step `commit`: the target DML as one marked Delta commit. Before it, the target's marker
     says whether the window is still this run's to apply; after it, whether Delta applied it or
     skipped it because a concurrent run had (a SetTransaction at or above this version). --#}
{% macro _marked_commit(target, sql, mode, stream, write_options={}) %}
  {%- if mode != 'overwrite' -%}
    {%- set verdict = dbt_tablestream._stream_commit_verdict(target, stream) -%}
    {%- if verdict == 'applied' -%}
      {#-- dbt requires every materialization to record its 'main' statement: an explicit no-op. --#}
      {%- call noop_statement('main', 'SKIPPED ' ~ dbt_tablestream._stream_window_text(stream)
                                      ~ ' applied by a concurrent run', 'SKIPPED', 0) -%}
      {%- endcall -%}
      {{ return({'code': 'SKIPPED', 'rows_affected': 0}) }}
    {%- endif -%}
  {%- endif -%}
  {%- set write = "the write of stream " ~ stream.stream ~ " to " ~ target ~ " for its "
      ~ dbt_tablestream._stream_window_text(stream) -%}
  {%- set open_sql = dbt_tablestream.stream_commit_open_sql(stream, write_options,
                                                            clear=dbt_tablestream._stream_session_shared()) -%}
  {%- do dbt_tablestream._open_write_settings(open_sql, write) -%}
  {%- call statement('main', fetch_result=True) -%}
    {{ sql }}
  {%- endcall -%}
  {%- do dbt_tablestream._close_write_settings(dbt_tablestream.stream_commit_close_sql(write_options), write) -%}
  {%- set history = dbt_tablestream.history_with_own_commit(target, stream) -%}
  {%- set own = dbt_tablestream._own_commit(history, stream) -%}
  {%- if own is not none -%}
    {%- set rows_written = write_options.get('rows_written') -%}
    {{ return({'code': 'OK', 'rows_affected': rows_written if rows_written is not none
                                              else dbt_tablestream._rows_written(load_result('main'), history, own)}) }}
  {%- endif -%}
  {%- set marker = dbt_tablestream._find_commit_marker(history, stream.stream) -%}
  {%- if marker is not none and marker.stream_id == stream.stream_id and (marker.to | int) >= stream.through -%}
    {#-- Delta skipped the write: another run had recorded this window for the stream's app id. --#}
    {{ return({'code': 'SKIPPED', 'rows_affected': 0}) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(
      dbt_tablestream._stream_subject(stream.stream) ~ ": the write to " ~ target ~ " for the "
      ~ dbt_tablestream._stream_window_text(stream) ~ " cannot be shown to be this run's own commit: no commit of the "
      ~ "target carries this run's marker (" ~ stream.stream_id ~ ", invocation " ~ invocation_id ~ "). The offset did "
      ~ "not move. Check the target's DESCRIBE HISTORY, then run again: the next run continues from the target's "
      ~ "marker or the offsets log, whichever is further.") }}
{% endmacro %}


{#-- The step `append_sql`: a later table_stream run's append, a plain insert (a window is never
     applied twice: Delta skips a write whose marker it already holds). --#}
{% macro _marked_append_sql(target, sql, stream) %}
  {{ return('insert into ' ~ target ~ '\n' ~ sql) }}
{% endmacro %}


{#-- The step `settings_check`: no setting to refuse; the marker makes every write exactly once. --#}
{% macro _marked_settings_check(settings, subject, protocol) %}
  {{ return(none) }}
{% endmacro %}


{#-- The step `check`: nothing to refuse before SQL runs; the marker makes every write exactly once. --#}
{% macro _marked_check(stream, settings, sql, output_columns=none) %}
  {{ return(none) }}
{% endmacro %}


{#-- The step `table_properties`: none; a run compacts through session settings
     (spark__stream_compaction_sql) when _stream_compaction_due says so. --#}
{% macro _marked_table_properties() %}
  {{ return({}) }}
{% endmacro %}


{#-- The step `offsets_compaction_sql`: the offsets log is compacted as a target is, by the session
     settings around its append. --#}
{% macro _marked_offsets_compaction_sql(on) %}
  {{ return(dbt_tablestream.stream_compaction_sql(on)) }}
{% endmacro %}


{#-- The step `unlogged_only`: none; the offsets row is appended blind, as the target's marker
     already kept a concurrent run from applying the window twice. --#}
{% macro _marked_unlogged_only(stream) %}
  {{ return([]) }}
{% endmacro %}


{#-- The step `session_refusal`: none; the session may set what a read needs. --#}
{% macro _marked_session_refusal(subject, setting, remedy) %}
  {{ return(none) }}
{% endmacro %}


{#-- The step `reapplies_windows`: false; a window is applied once, so the SQL builders need not
     make a second application a no-op. --#}
{% macro _marked_reapplies_windows() %}
  {{ return(false) }}
{% endmacro %}


{#-- The step `caches_windows`: true; a run that reads its window more than once (a
     stream_aggregate's listing of groups and its MERGE) reads it into Spark's cache once, with
     CACHE TABLE (stream_window_cache_sql). --#}
{% macro _marked_caches_windows() %}
  {{ return(true) }}
{% endmacro %}


{#-- The step `replace_where_keys`: the most keys a replaceWhere may list, the model's own: the
     commit turns off Delta's check of each inserted row against the list
     (stream_commit_open_sql's `replaces`), whose cost grows with keys times rows. --#}
{% macro _marked_replace_where_keys(limit) %}
  {{ return(limit) }}
{% endmacro %}

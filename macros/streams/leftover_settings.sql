{#-- What keeps a failed write's session settings from later writes (docs/architecture.md, "A
     failed write"). A marked write sets Delta's idempotent-write settings on the session and
     resets them after it; Jinja has no `finally`, so a write that fails inside Delta leaves them
     set, and every later write on that session would carry the stream's marker, or be skipped by
     Delta as the stream's window already applied. The local profile restores a model's settings
     itself when a statement fails; dbt-spark's Thrift connections and dbt-databricks' start a
     session per model. dbt-spark's session method runs every model and hook on one SparkSession:
     there a write's settings are flagged, and the invocation's start and end check the flags. --#}


{#-- Runs a write's setting `statements` (stream_commit_open_sql's, stream_compaction_sql's), after
     the flag of `subject` (the write, named for the user) where the session is shared. --#}
{% macro _open_write_settings(statements, subject) %}
  {%- set flag = dbt_tablestream._write_settings_flag(subject) -%}
  {%- if flag is not none -%}
    {%- do run_query('set ' ~ flag[0] ~ ' = ' ~ dbt_tablestream._sql_identifier(flag[1])) -%}
  {%- endif -%}
  {%- for statement_sql in statements -%}
    {%- do run_query(statement_sql) -%}
  {%- endfor -%}
{% endmacro %}


{#-- Runs the statements that reset what _open_write_settings set, then resets its flag. --#}
{% macro _close_write_settings(statements, subject) %}
  {%- for statement_sql in statements -%}
    {%- do run_query(statement_sql) -%}
  {%- endfor -%}
  {%- set flag = dbt_tablestream._write_settings_flag(subject) -%}
  {%- if flag is not none -%}
    {%- do run_query('reset ' ~ flag[0]) -%}
  {%- endif -%}
{% endmacro %}


{#-- [key, value] of the flag a write sets before its settings on a shared session, or none: a key
     of its own (no later write's open or close touches it), whose value names the write. --#}
{% macro _write_settings_flag(subject) %}
  {%- if not dbt_tablestream._stream_session_shared() -%}{{ return(none) }}{%- endif -%}
  {{ return([dbt_tablestream._write_flag_prefix() ~ local_md5(subject ~ ' ' ~ invocation_id), subject]) }}
{% endmacro %}


{% macro _write_flag_prefix() %}
  {{ return('spark.tablestream.openWrite.') }}
{% endmacro %}


{#-- Whether every model and hook of the invocation runs on one session: dbt-spark's session
     method. --#}
{% macro _stream_session_shared() %}
  {%- set method = adapter.config.credentials.method | string if adapter.type() == 'spark' else none -%}
  {{ return(method in ['session', 'SparkConnectionMethod.SESSION']) }}
{% endmacro %}


{% macro check_stream_session_settings(results=none) %}
  {{ return(adapter.dispatch('check_stream_session_settings', 'dbt_tablestream')(results)) }}
{% endmacro %}


{#-- Run by this package's hooks on a shared session. At the invocation's start (`results` none) the
     flags of an earlier invocation's failed writes are reset, with the package's settings, before
     any model can inherit them. At its end they are reset, and the invocation fails naming the
     failed writes, the stream models that failed and every model that ran after the first of them. --#}
{% macro spark__check_stream_session_settings(results=none) %}
  {%- if not execute or not dbt_tablestream._stream_session_shared() -%}{{ return('') }}{%- endif -%}
  {%- set prefix = dbt_tablestream._write_flag_prefix() -%}
  {%- set failed_writes = {} -%}
  {%- for row in run_query('set').rows if row[0].startswith(prefix) -%}
    {%- do failed_writes.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- if not failed_writes -%}{{ return('') }}{%- endif -%}
  {%- set settings = dbt_tablestream._stream_marker_settings() + dbt_tablestream._stream_write_option_settings() -%}
  {%- for key in (settings | map(attribute=0) | list) + (failed_writes | list) -%}
    {%- do run_query('reset ' ~ key) -%}
  {%- endfor -%}
  {%- set subject = "dbt_tablestream: " ~ failed_writes.values() | sort | join('; ') ~ " failed and left its session "
      ~ "settings (Delta's idempotent-write settings among them) on the session every model of the invocation runs on; "
      ~ "they are now reset" -%}
  {%- if results is none -%}
    {{ log(subject ~ ". The invocation that ran it ended before it could reset them.", info=True) }}
    {{ return('') }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(subject ~ ". " ~ dbt_tablestream._models_after_failure(results) ~ " Look for that "
      ~ "stream's marker in each one's latest commit (DESCRIBE HISTORY's userMetadata), and run again every one whose "
      ~ "write Delta skipped (no new version). With type: tablestream or a Thrift server a failed write's settings end "
      ~ "with its model.") }}
{% endmacro %}


{#-- As a sentence: the stream models of `results` (an on-run-end hook's) that failed, and the models
     that ran after the first of them ended. --#}
{% macro _models_after_failure(results) %}
  {%- set failed = [] -%}
  {%- for result in results if result.status == 'error' and result.node.resource_type == 'model'
        and result.node.config.materialized in dbt_tablestream._stream_materializations()
        and result.timing -%}
    {%- do failed.append(result) -%}
  {%- endfor -%}
  {%- if not failed -%}
    {{ return("No stream model of this invocation failed.") }}
  {%- endif -%}
  {%- set ended = failed | map(attribute='timing') | map('last') | map(attribute='completed_at') | min -%}
  {%- set after = [] -%}
  {%- for result in results if result.node.resource_type in ['model', 'seed', 'snapshot'] and result.timing
        and result.timing[0].started_at > ended -%}
    {%- do after.append(result.node.name) -%}
  {%- endfor -%}
  {{ return("Failed: " ~ failed | map(attribute='node.name') | join(', ') ~ ". Ran on the session after the failure, "
      ~ "so their writes may carry the stream's marker or have been skipped by Delta: "
      ~ (after | join(', ') or 'none') ~ ".") }}
{% endmacro %}

{#-- {name, reason}: the reason is said in the messages that refuse what a protocol cannot do. --#}
{% macro _stream_commit_protocol() %}
  {%- set chosen = dbt_tablestream._stream_project_var('tablestream_commit_protocol') -%}
  {%- if chosen != 'auto' -%}
    {{ return({'name': chosen, 'reason': "the project var tablestream_commit_protocol is '" ~ chosen ~ "'"}) }}
  {%- endif -%}
  {%- if not dbt_tablestream._session_settings_refused() -%}
    {{ return({'name': 'marked', 'reason': "the session may set Delta's idempotent-write settings"}) }}
  {%- endif -%}
  {{ return({'name': 'reapply',
             'reason': "the local profile's emulate_sql_warehouse refuses session settings"
                       if target.get('emulate_sql_warehouse')
                       else "a Databricks SQL warehouse (an http_path under /warehouses/) refuses session settings"}) }}
{% endmacro %}


{#-- The protocol's macro for one step of a run (`_marked_<step>` or `_reapply_<step>`), so that
     no caller tests which protocol runs. `protocol`: the run's (_stream_settings' `protocol`);
     outside a model run, _stream_commit_protocol's. --#}
{% macro _protocol_step(step, protocol=none) %}
  {%- if step not in dbt_tablestream._protocol_steps() -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream: no commit protocol step '" ~ step ~ "'; the steps are "
        ~ dbt_tablestream._protocol_steps() | join(', ') ~ " (_protocol_steps).") }}
  {%- endif -%}
  {%- set chosen = protocol if protocol is not none else dbt_tablestream._stream_commit_protocol() -%}
  {{ return(dbt_tablestream['_' ~ chosen.name ~ '_' ~ step]) }}
{% endmacro %}


{#-- The names _protocol_step builds at run time, in one table so that a reader finds each macro
     by grep: every protocol defines `_<protocol>_<step>` for each step, and nothing else by that
     pattern (tests/unit/test_dispatch_tables.py). marked.sql holds `_marked_<step>`, reapply.sql
     `_reapply_<step>`:
     - settings_check: refuses the settings the protocol cannot keep exactly once, whatever the
       stream (_settings_from_configs);
     - check: refuses before any SQL what the protocol cannot apply exactly once to the stream;
     - commit: the target's DML as one commit, with what proves it this run's to apply;
     - append_sql: a table_stream window's append;
     - table_properties: the properties a target the package creates gets (its compaction);
     - offsets_compaction_sql: the offsets log's compaction;
     - unlogged_only: the inputs whose offsets row goes in only while the log lacks the window;
     - session_refusal: the refusal of a read that needs a session setting, or none;
     - reapplies_windows: whether a window may be applied again on top of itself;
     - caches_windows: whether a run may cache its window;
     - replace_where_keys: the most keys a replaceWhere may list. --#}
{% macro _protocol_steps() %}
  {{ return(['settings_check', 'check', 'commit', 'append_sql', 'table_properties', 'offsets_compaction_sql',
             'unlogged_only', 'session_refusal', 'reapplies_windows', 'caches_windows', 'replace_where_keys']) }}
{% endmacro %}


{#-- The commit protocols, each a file under macros/protocols/ (_stream_commit_protocol chooses). --#}
{% macro _commit_protocols() %}
  {{ return(['marked', 'reapply']) }}
{% endmacro %}


{#-- Whether the connection refuses to SET the settings a Databricks SQL warehouse refuses, Delta's
     idempotent-write settings and its VACUUM retention check among them: a warehouse, and the
     local profile's emulate_sql_warehouse. --#}
{% macro _session_settings_refused() %}
  {#-- A warehouse's HTTP path is /sql/1.0/warehouses/<id>; a cluster's /sql/protocolv1/o/<org>/<id>. --#}
  {%- set on_warehouse = target.get('emulate_sql_warehouse')
      or (target.type == 'databricks' and '/warehouses/' in (target.get('http_path') or '')) -%}
  {{ return(true if on_warehouse else false) }}
{% endmacro %}

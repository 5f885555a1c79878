{#-- {name, reason}: the reason is said in the messages that refuse what a protocol cannot do. --#}
{% macro _stream_commit_protocol() %}
  {%- set chosen = var('tablestream_commit_protocol', 'auto') -%}
  {%- if chosen not in ['auto', 'marked', 'reapply'] -%}
    {{ exceptions.raise_compiler_error(
        "dbt_tablestream: the project var tablestream_commit_protocol is '" ~ chosen ~ "'. Accepted values: auto (the "
        ~ "default: reapply on a Databricks SQL warehouse, marked elsewhere), marked (the commit carries Delta's "
        ~ "idempotent-write session settings), reapply (no session settings: an unlogged window is re-applied). "
        ~ "Nothing was written.") }}
  {%- endif -%}
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
  {%- set chosen = protocol if protocol is not none else dbt_tablestream._stream_commit_protocol() -%}
  {{ return(dbt_tablestream['_' ~ chosen.name ~ '_' ~ step]) }}
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

{#-- Which commit protocol a run uses (docs/architecture.md, "Exactly once without session
     settings"): 'marked', where the session may SET Delta's idempotent-write settings (a local
     session, a Spark cluster, a Databricks cluster), or 'reapply', where it may not (a Databricks
     SQL warehouse, and the local profile's emulate_sql_warehouse). The project var
     `tablestream_commit_protocol` chooses one for every target; its default, 'auto', tells them
     apart by the connection. --#}
{% macro stream_commit_protocol() %}
  {{ return(adapter.dispatch('stream_commit_protocol', 'dbt_tablestream')()) }}
{% endmacro %}


{% macro spark__stream_commit_protocol() %}
  {%- set chosen = var('tablestream_commit_protocol', 'auto') -%}
  {%- if chosen not in ['auto', 'marked', 'reapply'] -%}
    {{ exceptions.raise_compiler_error(
        "dbt_tablestream: the project var tablestream_commit_protocol is '" ~ chosen ~ "'. Accepted values: auto (the default: "
        ~ "reapply on a Databricks SQL warehouse, marked elsewhere), marked (the commit carries Delta's idempotent-write "
        ~ "session settings), reapply (no session settings: an unlogged window is re-applied). Nothing was written.") }}
  {%- endif -%}
  {%- if chosen != 'auto' -%}{{ return(chosen) }}{%- endif -%}
  {{ return('reapply' if dbt_tablestream.session_settings_refused() else 'marked') }}
{% endmacro %}


{#-- Whether the connection refuses to SET the settings a Databricks SQL warehouse refuses, Delta's
     idempotent-write settings and its VACUUM retention check among them: a warehouse, and the
     local profile's emulate_sql_warehouse. --#}
{% macro session_settings_refused() %}
  {{ return(adapter.dispatch('session_settings_refused', 'dbt_tablestream')()) }}
{% endmacro %}


{% macro spark__session_settings_refused() %}
  {#-- A warehouse's HTTP path is /sql/1.0/warehouses/<id>; a cluster's /sql/protocolv1/o/<org>/<id>. --#}
  {%- set on_warehouse = target.get('emulate_sql_warehouse') or (target.type == 'databricks' and '/warehouses/' in (target.get('http_path') or '')) -%}
  {{ return(true if on_warehouse else false) }}
{% endmacro %}

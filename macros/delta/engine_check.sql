{#-- Every engine piece of the package is a dispatched macro with a spark__ implementation, which
     dbt-spark, the tablestream adapter and dbt-databricks all reach (docs/architecture.md,
     "Dispatch"). A project can override any of them with its own dispatch search order. Adapters
     without an implementation are refused once, here, at each entry point: the stream
     materializations, source_stream() / ref_stream() / changes(), and the run-operations. --#}
{% macro stream_engine_check(what) %}
  {{ return(adapter.dispatch('stream_engine_check', 'dbt_tablestream')(what)) }}
{% endmacro %}


{% macro spark__stream_engine_check(what) %}
  {{ return(none) }}
{% endmacro %}


{% macro default__stream_engine_check(what) %}
  {{ exceptions.raise_compiler_error(
      "dbt_tablestream: streams are not available on adapter type '" ~ adapter.type()
      ~ "' (" ~ what ~ "). Supported: type: tablestream (a local delta-spark session), type: spark with delta-spark, "
      ~ "and type: databricks.") }}
{% endmacro %}

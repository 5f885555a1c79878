{#-- Every dispatched stream piece has a spark__ implementation (dbt-spark, the tablestream adapter
     and dbt-databricks use it) and a default__ that says which adapters are supported. --#}


{% macro engine_not_supported(what) %}
  {{ exceptions.raise_compiler_error(
      "dbt_tablestream: streams are not available on adapter type '" ~ adapter.type()
      ~ "' (" ~ what ~ "). Supported: type: tablestream (a local delta-spark session), type: spark with delta-spark, "
      ~ "and type: databricks.") }}
{% endmacro %}

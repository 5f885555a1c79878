{#-- dbt-spark 1.11's spark__get_columns_in_relation macro returns `describe extended`'s raw rows,
     not columns. dbt's snapshots read the snapshot's column names through this macro, so with
     `hard_deletes: new_record` every deletion record was written with null source columns
     (dbt-labs/dbt-adapters#1401). The adapter's own get_columns_in_relation parses those rows
     into columns (dbt-databricks made the same fix). --#}
{% macro tablestream__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}

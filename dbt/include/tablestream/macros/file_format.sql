{#-- Stock models on the local profile are Delta unless they say otherwise, as on dbt-databricks:
     tables, seeds and incremental models (whose merge strategy needs Delta). --#}
{% macro tablestream__file_format_clause() %}
  {%- set file_format = config.get('file_format', 'delta') -%}
  using {{ file_format }}
{%- endmacro %}


{#-- dbt-spark's incremental materialization reads the format with a parquet default before
     validating it; unset, it is delta here. --#}
{% macro dbt_spark_validate_get_file_format(raw_file_format) %}
  {%- set raw_file_format = config.get('file_format', 'delta') -%}
  {%- set accepted_formats = ['text', 'csv', 'json', 'jdbc', 'parquet', 'orc', 'hive', 'delta', 'iceberg', 'libsvm', 'hudi'] -%}
  {%- if raw_file_format not in accepted_formats -%}
    {%- do exceptions.raise_compiler_error(
        "Invalid file format provided: " ~ raw_file_format ~ ". Expected one of: " ~ accepted_formats | join(', ')) -%}
  {%- endif -%}
  {%- do return(raw_file_format) -%}
{% endmacro %}

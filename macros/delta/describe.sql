{#-- Delta's metadata statements, as SQL builders that run nothing (golden- and parser-tested in
     tests/spark_sql). Each piece of table metadata is read once per run. --#}


{% macro describe_history_sql(relation, limit) %}
  {{ return(adapter.dispatch('describe_history_sql', 'dbt_tablestream')(relation, limit)) }}
{% endmacro %}


{#-- Delta's own grammar: (DESC | DESCRIBE) HISTORY table (LIMIT n)?; newest commit first. --#}
{% macro spark__describe_history_sql(relation, limit) %}
  {{ return('describe history ' ~ dbt_tablestream._delta_table_name(relation)
      ~ (' limit ' ~ limit if limit is not none else '')) }}
{% endmacro %}


{#-- The relation's name with each part quoted: Delta's grammar takes a word such as `history` in an
     unquoted name (a model named history) for its own, and fails. A name given as text is kept. --#}
{% macro _delta_table_name(relation) %}
  {%- if relation is string or relation.identifier is not defined -%}{{ return(relation | string) }}{%- endif -%}
  {%- set parts = [] -%}
  {%- for part in [relation.schema, relation.identifier] if part -%}
    {%- do parts.append(dbt_tablestream._sql_identifier(part)) -%}
  {%- endfor -%}
  {{ return(parts | join('.')) }}
{% endmacro %}


{#-- The DESCRIBE HISTORY operations that change a table's rows: Delta's own `changesData`
     operations (DeltaOperations) and Databricks' COPY INTO. Every other commit (OPTIMIZE, VACUUM,
     ALTER, table properties, a CREATE TABLE without AS SELECT) has no change rows for a stream. --#}
{% macro _delta_data_operations() %}
  {{ return(['WRITE', 'MERGE', 'DELETE', 'UPDATE', 'STREAMING UPDATE', 'TRUNCATE', 'COPY INTO', 'CONVERT', 'CLONE',
      'RESTORE', 'CREATE TABLE AS SELECT', 'REPLACE TABLE', 'REPLACE TABLE AS SELECT', 'CREATE OR REPLACE TABLE',
      'CREATE OR REPLACE TABLE AS SELECT']) }}
{% endmacro %}


{% macro describe_detail_sql(relation) %}
  {{ return(adapter.dispatch('describe_detail_sql', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{% macro spark__describe_detail_sql(relation) %}
  {{ return('describe detail ' ~ relation) }}
{% endmacro %}


{% macro table_properties_sql(relation) %}
  {{ return(adapter.dispatch('table_properties_sql', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{% macro spark__table_properties_sql(relation) %}
  {{ return('show tblproperties ' ~ relation) }}
{% endmacro %}


{% macro timestamp_sql(at_timestamp) %}
  {{ return(adapter.dispatch('timestamp_sql', 'dbt_tablestream')(at_timestamp)) }}
{% endmacro %}


{#-- Spark normalises the user's start_at timestamp, so it compares with DESCRIBE HISTORY's in the
     same session time zone. try_cast: under ANSI mode (Spark 4's default, Databricks) a cast of a
     malformed value fails the statement before the package can say what is wrong. --#}
{% macro spark__timestamp_sql(at_timestamp) %}
  {{ return("select try_cast(" ~ dbt_tablestream._sql_string(at_timestamp) ~ " as timestamp) as at_timestamp") }}
{% endmacro %}

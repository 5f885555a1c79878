{#-- Set Delta table properties in one commit. --#}
{% macro set_table_properties(relation, properties) %}
  {{ return(adapter.dispatch('set_table_properties', 'dbt_tablestream')(relation, properties)) }}
{% endmacro %}


{% macro spark__set_table_properties(relation, properties) %}
  {% call statement('set_table_properties') -%}
    {{ dbt_tablestream.set_table_properties_sql(relation, properties) }}
  {%- endcall %}
{% endmacro %}


{% macro set_table_properties_sql(relation, properties) %}
  {{ return(adapter.dispatch('set_table_properties_sql', 'dbt_tablestream')(relation, properties)) }}
{% endmacro %}


{% macro spark__set_table_properties_sql(relation, properties) %}
  {%- set assignments = [] -%}
  {%- for key, value in properties.items() -%}
    {%- do assignments.append(dbt_tablestream._sql_string(key) ~ ' = ' ~ dbt_tablestream._sql_string(value)) -%}
  {%- endfor -%}
  {{ return('alter table ' ~ relation ~ ' set tblproperties (' ~ assignments | join(', ') ~ ')') }}
{% endmacro %}

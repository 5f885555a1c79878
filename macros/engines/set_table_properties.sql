{#-- Set Delta table properties in one commit. --#}
{% macro set_table_properties(relation, properties) %}
  {{ return(adapter.dispatch('set_table_properties', 'dbt_tablestream')(relation, properties)) }}
{% endmacro %}


{% macro spark__set_table_properties(relation, properties) %}
  {% call statement('set_table_properties') -%}
    alter table {{ relation }} set tblproperties (
      {%- for key, value in properties.items() %}
      '{{ key }}' = '{{ value }}'{% if not loop.last %},{% endif %}
      {%- endfor %}
    )
  {%- endcall %}
{% endmacro %}


{% macro tablestream__set_table_properties(relation, properties) %}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({'properties': properties}) -%}
  {% call statement('set_table_properties') -%}
    {{ tablestream_directive('set_properties', args) }}
  {%- endcall %}
{% endmacro %}

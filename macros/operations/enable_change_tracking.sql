{#-- Turn on Delta's change data feed for a table: the Delta equivalent of
     ALTER TABLE ... SET PROPERTIES ('change_tracking' = 'true'). Changes are recorded from the
     version this commits on; earlier versions have no change rows. --#}
{% macro enable_change_tracking(relation) %}
  {%- set target = dbt_tablestream.parse_relation(relation) -%}
  {%- set properties = {} -%}
  {%- for row in run_query(dbt_tablestream.spark__table_properties_sql(target)).rows -%}
    {%- do properties.update({row[0]: row[1] | string | lower}) -%}
  {%- endfor -%}
  {#-- Setting it again would still add a commit to the table. --#}
  {%- if properties.get('delta.enableChangeDataFeed') == 'true' -%}
    {{ log("Change data feed already enabled on " ~ target ~ "; nothing to do.", info=True) }}
    {{ return(none) }}
  {%- endif -%}
  {%- do dbt_tablestream.set_table_properties(target, {'delta.enableChangeDataFeed': 'true'}) -%}
  {{ log("Change data feed enabled on " ~ target ~ "; streams see changes committed from now on.", info=True) }}
{% endmacro %}


{#-- `schema.table` or `catalog.schema.table` (a string), or a Relation, to a Relation. --#}
{% macro parse_relation(relation) %}
  {%- if relation is string -%}
    {%- set parts = relation.split('.') -%}
    {%- if parts | length == 3 -%}
      {{ return(api.Relation.create(database=parts[0], schema=parts[1], identifier=parts[2], type='table')) }}
    {%- endif -%}
    {%- if parts | length != 2 -%}
      {{ exceptions.raise_compiler_error("Expected a relation as `schema.table` (or `catalog.schema.table`), got '" ~ relation ~ "'.") }}
    {%- endif -%}
    {{ return(api.Relation.create(schema=parts[0], identifier=parts[1], type='table')) }}
  {%- endif -%}
  {{ return(relation) }}
{% endmacro %}

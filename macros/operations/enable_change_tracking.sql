{#-- Turn on Delta's change data feed for a table: the Delta equivalent of
     ALTER TABLE ... SET PROPERTIES ('change_tracking' = 'true'). Changes are recorded from the
     version this commits on; earlier versions have no change rows. --#}
{% macro enable_change_tracking(relation) %}
  {%- set target = dbt_tablestream.parse_relation(relation) -%}
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

{#-- Every relation the suite builds (models, seeds, offsets logs) goes into the schema named by
     var integration_prefix, so run.py can drop it at the end and parallel runs keep apart. --#}
{% macro generate_schema_name(custom_schema_name, node) -%}
  {{ var('integration_prefix', 'tablestream_it') }}{{ '_' ~ custom_schema_name if custom_schema_name else '' }}
{%- endmacro %}

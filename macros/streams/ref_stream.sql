{#-- The pending changes of another model's Delta output (it needs the change data feed on,
     e.g. `tblproperties: {delta.enableChangeDataFeed: 'true'}`, or row tracking for
     stream_read: changelog). Registers lineage like ref(). --#}
{% macro ref_stream(model_name) %}
  {%- set relation = ref(model_name) -%}
  {{ return(dbt_tablestream._stream_read(relation, model_name)) }}
{% endmacro %}

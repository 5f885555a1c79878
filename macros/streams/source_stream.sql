{#-- The pending changes of a Delta source since this model's stream last committed.
     Registers lineage like source(). Reading never advances the stream: only a successful
     table_stream / stream_merge run does. --#}
{% macro source_stream(source_name, table_name) %}
  {%- set relation = source(source_name, table_name) -%}
  {{ return(dbt_tablestream._stream_read(relation, source_name ~ '_' ~ table_name)) }}
{% endmacro %}

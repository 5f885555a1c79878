{% macro create_offsets_logs() %}
  {{ return(adapter.dispatch('create_offsets_logs', 'dbt_tablestream')()) }}
{% endmacro %}


{#-- Run by this package's on-run-start hook: with several threads, the offsets log of every schema a
     selected stream model writes to is created before the threads start. Threads that each created
     it on first use would race for the table's version 0, and all but one commit would fail. With
     one thread the first stream run creates it, so a run refused for bad input writes nothing. --#}
{% macro spark__create_offsets_logs() %}
  {%- if not execute or (target.threads | int) <= 1 -%}{{ return('') }}{%- endif -%}
  {%- set schemas = [] -%}
  {%- for node in graph.nodes.values()
        if node.resource_type == 'model'
        and node.config.materialized in dbt_tablestream._stream_materializations()
        and node.unique_id in selected_resources and node.schema not in schemas -%}
    {%- do schemas.append(node.schema) -%}
  {%- endfor -%}
  {%- for schema in schemas -%}
    {%- set relation = dbt_tablestream._offsets_relation(schema) -%}
    {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
      {%- do dbt_tablestream.create_offsets_log(relation) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}


{% macro create_offsets_log(relation) %}
  {{ return(adapter.dispatch('create_offsets_log', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{% macro spark__create_offsets_log(relation) %}
  {%- set typed_row = dbt_tablestream.offsets_values_sql({
      'stream_name': none, 'epoch': 0, 'stream_id': none, 'source': none, 'source_table_id': none, 'mode': none,
      'from_version': none, 'to_version': none, 'target': none, 'rows_written': none}) -%}
  {%- do run_query(dbt_tablestream.offsets_log_create_sql(relation, typed_row,
                                                          dbt_tablestream.stream_compaction_properties())) -%}
  {%- do adapter.cache_added(relation) -%}
{% endmacro %}


{#-- Elsewhere streams are refused when they run (stream_engine_check); a hook must not fail
     projects that select no stream. --#}
{% macro default__create_offsets_log(relation) %}
{% endmacro %}

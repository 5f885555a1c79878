{#-- A table model is CREATE OR REPLACE on Delta: a new version of the same table, so its history
     (and any stream on it) survives a rebuild. A view of the same name is dropped first. --#}
{% materialization table, adapter='tablestream', supported_languages=['sql'] %}
  {%- do tablestream_validate_file_format() -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {%- do tablestream_replace_table(existing_relation, target_relation, compiled_code) -%}

  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

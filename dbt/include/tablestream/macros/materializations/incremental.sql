{#-- Incremental models on Delta. Validation runs before any SQL. --#}
{% macro tablestream_validate_incremental_strategy(raw_strategy, unique_key) %}
  {%- set accepted = ['append', 'merge'] -%}
  {%- if raw_strategy not in accepted -%}
    {{ exceptions.raise_compiler_error(
        "Invalid incremental_strategy '" ~ raw_strategy ~ "' for " ~ this ~ ". Accepted values: " ~ accepted | join(', ')) }}
  {%- endif -%}
  {%- if raw_strategy == 'merge' and not unique_key -%}
    {{ exceptions.raise_compiler_error(
        "incremental_strategy 'merge' on " ~ this ~ " needs a unique_key (a column or a list of columns).") }}
  {%- endif -%}
  {{ return(raw_strategy) }}
{% endmacro %}


{% materialization incremental, adapter='tablestream', supported_languages=['sql'] -%}
  {%- do tablestream_validate_file_format() -%}
  {%- set unique_key = config.get('unique_key', none) -%}
  {%- set strategy = tablestream_validate_incremental_strategy(config.get('incremental_strategy') or 'append', unique_key) -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
    {%- do tablestream_replace_table(existing_relation, target_relation, compiled_code) -%}
  {%- else -%}
    {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
    {%- call statement('create_tmp_relation') -%}
      {{ create_table_as(True, tmp_relation, compiled_code) }}
    {%- endcall -%}
    {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
    {%- set args = tablestream_relation_args(target_relation) -%}
    {%- call statement('main') -%}
      {%- if strategy == 'append' -%}
        {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
        {%- do args.update({'mode': 'append'}) -%}
        {{ tablestream_directive('write', args) }}
        select {{ dest_columns | map(attribute='quoted') | join(', ') }} from {{ tmp_relation }}
      {%- else -%}
        {%- set keys = [unique_key] if unique_key is string else unique_key -%}
        {%- do args.update({'keys': keys, 'update_columns': get_merge_update_columns(config.get('merge_update_columns'), config.get('merge_exclude_columns'), adapter.get_columns_in_relation(target_relation))}) -%}
        {{ tablestream_directive('merge', args) }}
        select * from {{ tmp_relation }}
      {%- endif -%}
    {%- endcall -%}
    {%- do adapter.drop_relation(tmp_relation) -%}
  {%- endif -%}

  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}

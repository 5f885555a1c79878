{#-- An engine directive: the embedded engine carries out `op` with delta-rs, as one Delta commit,
     over the result of the query that follows the comment. `/` is JSON-escaped so that no value
     can close the comment early. --#}
{% macro tablestream_directive(op, args={}) -%}
  {%- set payload = {'op': op} -%}
  {%- do payload.update(args) -%}
  /* tablestream:{{ tojson(payload) | replace('/', '\\/') }} */
{%- endmacro %}


{% macro tablestream_relation_args(relation) -%}
  {{ return({'schema': relation.schema, 'name': relation.identifier}) }}
{%- endmacro %}


{% macro tablestream_partition_by() -%}
  {%- set partition_by = config.get('partition_by', none) -%}
  {%- if partition_by is string -%}{%- set partition_by = [partition_by] -%}{%- endif -%}
  {{ return(partition_by) }}
{%- endmacro %}


{% macro tablestream_validate_file_format() -%}
  {%- set file_format = config.get('file_format', 'delta') -%}
  {%- if file_format != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ this ~ " asks for file_format '" ~ file_format ~ "', but the tablestream engine stores every table "
        ~ "as Delta. Accepted values: delta (the default). Remove the config or set it to delta.") }}
  {%- endif -%}
{%- endmacro %}


{#-- Build a table model's Delta table: CREATE OR REPLACE, after dropping a view of the same name. --#}
{% macro tablestream_replace_table(existing_relation, target_relation, compiled_code) -%}
  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ adapter.drop_relation(existing_relation) }}
  {%- endif -%}
  {%- call statement('main') -%}
    {{ create_table_as(False, target_relation, compiled_code) }}
  {%- endcall -%}
{%- endmacro %}

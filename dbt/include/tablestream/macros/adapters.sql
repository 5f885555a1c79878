{#-- Storage DDL of the embedded engine: each statement is a directive that the engine carries
     out with delta-rs (tables) or in its warehouse catalog (schemas, views). --#}

{% macro tablestream__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language != 'sql' -%}
    {{ exceptions.raise_compiler_error("The tablestream engine runs SQL models only; " ~ relation ~ " is a " ~ language ~ " model.") }}
  {%- endif -%}
  {%- if temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- else -%}
    {%- set args = tablestream_relation_args(relation) -%}
    {%- do args.update({'mode': 'overwrite', 'partition_by': tablestream_partition_by(), 'properties': config.get('tblproperties', none)}) -%}
    {{ tablestream_directive('write', args) }}
    {{ compiled_code }}
  {%- endif -%}
{%- endmacro %}


{% macro tablestream__create_view_as(relation, sql) -%}
  {{ tablestream_directive('create_view', tablestream_relation_args(relation)) }}
  {{ sql }}
{%- endmacro %}


{% macro tablestream__drop_relation(relation) -%}
  {% call statement('drop_relation', auto_begin=False) -%}
    {%- if relation.schema is none -%}
      drop view if exists {{ relation.identifier }}
    {%- else -%}
      {{ tablestream_directive('drop', tablestream_relation_args(relation)) }}
    {%- endif -%}
  {%- endcall %}
{% endmacro %}


{% macro tablestream__rename_relation(from_relation, to_relation) -%}
  {%- set args = tablestream_relation_args(from_relation) -%}
  {%- do args.update({'to_schema': to_relation.schema or from_relation.schema, 'to_name': to_relation.identifier}) -%}
  {% call statement('rename_relation') -%}
    {{ tablestream_directive('rename', args) }}
  {%- endcall %}
{% endmacro %}


{% macro tablestream__truncate_relation(relation) -%}
  {% call statement('truncate_relation') -%}
    {{ tablestream_directive('truncate', tablestream_relation_args(relation)) }}
  {%- endcall %}
{% endmacro %}


{% macro tablestream__create_schema(relation) -%}
  {%- call statement('create_schema') -%}
    {{ tablestream_directive('create_schema', {'schema': relation.schema}) }}
  {%- endcall -%}
{% endmacro %}


{% macro tablestream__drop_schema(relation) -%}
  {%- call statement('drop_schema') -%}
    {{ tablestream_directive('drop_schema', {'schema': relation.schema}) }}
  {%- endcall -%}
{% endmacro %}


{% macro tablestream__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {% if remove_columns %}
    {{ exceptions.raise_compiler_error(
        "Delta tables written by the tablestream engine cannot drop columns (" ~ (remove_columns | map(attribute='name') | join(', '))
        ~ " of " ~ relation ~ "). Use on_schema_change 'append_new_columns' or 'ignore', or --full-refresh.") }}
  {% endif %}
  {%- set columns = [] -%}
  {%- for column in (add_columns or []) -%}
    {%- do columns.append([column.name, column.data_type]) -%}
  {%- endfor -%}
  {%- set args = tablestream_relation_args(relation) -%}
  {%- do args.update({'columns': columns}) -%}
  {% call statement('alter_relation_add_remove_columns') -%}
    {{ tablestream_directive('add_columns', args) }}
  {%- endcall %}
{% endmacro %}


{#-- Column comments and constraints are not kept by delta-rs writes; an explicit no-op. --#}
{% macro tablestream__alter_column_comment(relation, column_dict) %}
  {{ log("tablestream: column comments are not persisted on " ~ relation, info=False) }}
{% endmacro %}

{% macro tablestream__persist_constraints(relation, model) %}
  {{ log("tablestream: constraints are not enforced on " ~ relation, info=False) }}
{% endmacro %}

{#-- Seeds: the table is (re)created empty with the seed's column types, then each batch of rows
     is one append commit. --#}

{% macro tablestream__create_csv_table(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set args = tablestream_relation_args(this) -%}
  {%- do args.update({'mode': 'overwrite', 'partition_by': tablestream_partition_by()}) -%}
  {% set sql %}
    {{ tablestream_directive('write', args) }}
    select
      {%- for col_name in agate_table.column_names %}
        {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
        {%- set type = column_override.get(col_name, inferred_type) %}
      cast(null as {{ type }}) as {{ adapter.quote_seed_column(col_name | string, quote_seed_column) }}{% if not loop.last %},{% endif %}
      {%- endfor %}
    limit 0
  {% endset %}
  {% call statement('_') -%}
    {{ sql }}
  {%- endcall %}
  {{ return(sql) }}
{% endmacro %}


{% macro tablestream__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {% if old_relation is not none and old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}
  {{ return(create_csv_table(model, agate_table)) }}
{% endmacro %}


{% macro tablestream__load_csv_rows(model, agate_table) %}
  {%- set batch_size = get_batch_size() -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set args = tablestream_relation_args(this) -%}
  {%- do args.update({'mode': 'append'}) -%}
  {%- set statements = [] -%}
  {%- for chunk in agate_table.rows | batch(batch_size) -%}
    {%- set bindings = [] -%}
    {%- for row in chunk -%}
      {%- do bindings.extend(row) -%}
    {%- endfor -%}
    {% set sql %}
      {{ tablestream_directive('write', args) }}
      select * from values
      {%- for row in chunk %}
        ({%- for col_name in agate_table.column_names -%}
          {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
          {%- set type = column_override.get(col_name, inferred_type) -%}
          cast({{ get_binding_char() }} as {{ type }}){% if not loop.last %}, {% endif %}
        {%- endfor -%}){% if not loop.last %},{% endif %}
      {%- endfor %}
      as seed_rows(
        {%- for col_name in agate_table.column_names -%}
          {{ adapter.quote_seed_column(col_name | string, quote_seed_column) }}{% if not loop.last %}, {% endif %}
        {%- endfor -%})
    {% endset %}
    {%- do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) -%}
    {%- if loop.index0 == 0 -%}
      {%- do statements.append(sql) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(statements[0] if statements else '') }}
{% endmacro %}

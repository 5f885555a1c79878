{#-- The offsets log: `<target schema>.tablestream_offsets`, append-only, one row per stream run.
     A stream's offset is its latest row (highest epoch, then highest to_version). --#}

{% macro offsets_relation() %}
  {{ return(api.Relation.create(database=this.database, schema=this.schema, identifier='tablestream_offsets', type='table')) }}
{% endmacro %}


{% macro read_stream_offset(stream_name) %}
  {%- set relation = dbt_tablestream.offsets_relation() -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set rows = run_query(dbt_tablestream.read_stream_offset_sql(relation, stream_name)).rows -%}
  {%- if rows | length == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return({'epoch': rows[0][0], 'to_version': rows[0][1], 'source_table_id': rows[0][2]}) }}
{% endmacro %}


{% macro read_stream_offset_sql(relation, stream_name) %}
  {%- set query -%}
select epoch, to_version, source_table_id
from {{ relation }}
where stream_name = '{{ stream_name }}'
order by epoch desc, to_version desc, committed_at desc
limit 1
  {%- endset -%}
  {{ return(query) }}
{% endmacro %}


{% macro offsets_row_sql(stream, rows_written) %}
  select
    '{{ stream.stream }}' as stream_name,
    cast({{ stream.epoch }} as bigint) as epoch,
    '{{ stream.stream_id }}' as stream_id,
    '{{ stream.source }}' as source,
    '{{ stream.source_table_id }}' as source_table_id,
    '{{ stream.mode }}' as mode,
    cast({{ stream.after }} as bigint) as from_version,
    cast({{ stream.through }} as bigint) as to_version,
    '{{ this.schema }}.{{ this.identifier }}' as target,
    cast({{ rows_written if rows_written is not none else 'null' }} as bigint) as rows_written,
    '{{ invocation_id }}' as invocation_id,
    current_timestamp() as committed_at
{% endmacro %}


{% macro append_stream_offset(stream, rows_written) %}
  {%- set sql = dbt_tablestream.offsets_row_sql(stream, rows_written) -%}
  {%- do dbt_tablestream.append_offsets_row(dbt_tablestream.offsets_relation(), sql) -%}
{% endmacro %}

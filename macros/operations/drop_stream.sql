{#-- Forget a stream: it leaves show_streams, and if its model runs again it starts over from its
     start_at in a new epoch. The target table is kept; drop it yourself if it is no longer wanted.
     `stream_name` names a stream or a stream model (all its streams).
     `dbt run-operation dbt_tablestream.drop_stream --args '{stream_name: ...}'` --#}
{% macro drop_stream(stream_name, schema=none) %}
  {%- do dbt_tablestream.stream_engine_check('drop_stream') -%}
  {%- for position in dbt_tablestream.find_stream_positions(stream_name, schema) -%}
    {%- if position.mode == 'dropped' -%}
      {{ print("Stream " ~ position.stream_name ~ " is already dropped.") }}
    {%- else -%}
      {%- do dbt_tablestream.open_stream_epoch(position, 'dropped', none, position.source_table_id, position.offsets_schema) -%}
      {{ print("Stream " ~ position.stream_name ~ " dropped; " ~ position.target ~ " is kept.") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}

{#-- Forget a stream: it leaves show_streams, and if its model runs again it starts over from its
     start_at in a new epoch. The target table is kept; drop it yourself if it is no longer wanted.
     `dbt run-operation dbt_tablestream.drop_stream --args '{stream_name: ...}'` --#}
{% macro drop_stream(stream_name, schema=none) %}
  {%- do dbt_tablestream.stream_engine_check('drop_stream') -%}
  {%- set position = dbt_tablestream.find_stream_position(stream_name, schema) -%}
  {%- if position.mode == 'dropped' -%}
    {{ print("Stream " ~ stream_name ~ " is already dropped.") }}
    {{ return(none) }}
  {%- endif -%}
  {%- do dbt_tablestream.open_stream_epoch(position, 'dropped', none, position.source_table_id, schema) -%}
  {{ print("Stream " ~ stream_name ~ " dropped; " ~ position.target ~ " is kept.") }}
{% endmacro %}

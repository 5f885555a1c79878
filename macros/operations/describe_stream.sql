{#-- One stream in detail: its position, lag and health, when it will go stale if it is not run
     (from the source's retention settings), and its recent runs.
     `stream_name` names a stream or a stream model (each of its streams). `format: json` prints one
     JSON list instead: each stream's status (_stream_status_document) with `history`, its recent runs.
     `dbt run-operation dbt_tablestream.describe_stream --args '{stream_name: orders_changes__app_orders}'` --#}
{% macro describe_stream(stream_name, schema=none, format='text') %}
  {%- do dbt_tablestream.stream_engine_check('describe_stream') -%}
  {%- set described = [] -%}
  {%- for position in dbt_tablestream._find_stream_positions(stream_name, schema) -%}
    {%- do described.append(dbt_tablestream._describe_one_stream(position, format)) -%}
  {%- endfor -%}
  {%- if format == 'json' -%}{{ print(tojson(described)) }}{%- endif -%}
  {{ return(described[0] if described | length == 1 else described) }}
{% endmacro %}


{#-- describe_stream of one stream's position. --#}
{% macro _describe_one_stream(position, format='text') %}
  {%- set status = dbt_tablestream._stream_status(position) -%}
  {%- if format == 'json' -%}
    {%- set history = dbt_tablestream.stream_history(position.stream_name, position.offsets_schema, 5, 'entries') -%}
    {%- do status.update({'history': history}) -%}
    {{ return(status) }}
  {%- endif -%}
  {%- set lines = [
      ['stream', status.stream_name ~ ' (epoch ' ~ status.epoch ~ ', ' ~ status.stream_mode ~ ')'],
      ['source', status.source ~ ' (Delta table id ' ~ status.source_table_id ~ ')'],
      ['target', status.target],
      ['offset', (status.to_version if status.to_version is not none else 'none: restarts from start_at')
                 ~ (' committed ' ~ status.offset_time if status.offset_time else '')],
      ['source at', (status.source_version | string)
                    ~ (' committed ' ~ status.source_time if status.source_time else '')],
      ['lag', (status.lag_versions | string) ~ ' versions, ' ~ dbt_tablestream._format_duration(status.lag_seconds)],
      ['stale', ('YES (' ~ status.refusal ~ '): ' ~ status.problem) if status.stale else 'no'],
      ['goes stale', ('from ' ~ status.at_risk_from ~ ' if not run (the oldest unconsumed change passes the source\'s'
                      ~ ' log or file retention)')
                     if status.at_risk_from else 'not at risk: nothing unconsumed'],
      ['last run', (status.committed_at | string) ~ ', '
                   ~ (status.rows_written if status.rows_written is not none else 0) ~ ' rows written'],
  ] -%}
  {{ print(dbt_tablestream._text_table(['', ''], lines)) }}
  {%- if status.problem and not status.stale -%}{{ print(status.problem) }}{%- endif -%}
  {%- do dbt_tablestream.stream_history(position.stream_name, position.offsets_schema, 5) -%}
  {{ return(status) }}
{% endmacro %}

{#-- A stream's health against its source, for status, operations and generic tests. --#}


{#-- Where a stream stands against its source, from its latest offsets-log row: offset_time,
     source_version, source_time, stale, problem (with the remedy), at_risk_from (when its oldest
     unconsumed change may be lost to log cleanup or VACUUM). Reads no change rows. --#}
{% macro stream_health(row) %}
  {{ return(adapter.dispatch('stream_health', 'dbt_tablestream')(row)) }}
{% endmacro %}


{#-- A stream's position against its source (see stream_health). --#}
{% macro spark__stream_health(row) %}
  {%- set relation = dbt_tablestream.parse_relation(row['source']) -%}
  {%- set health = {'offset_time': none, 'source_version': none, 'source_time': none, 'stale': false,
                    'problem': none, 'at_risk_from': none} -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {%- do health.update({'stale': true, 'problem': "the source " ~ row['source'] ~ " does not exist. Create it, or drop the stream."}) -%}
    {{ return(health) }}
  {%- endif -%}
  {%- set latest = run_query(dbt_tablestream.spark__describe_history_sql(relation, 1)).rows[0] -%}
  {%- set latest_version = latest['version'] | int -%}
  {%- do health.update({'source_version': latest_version, 'source_time': latest['timestamp'] | string}) -%}
  {%- set offset = row['to_version'] -%}
  {%- if offset is none -%}
    {%- do health.update({'problem': 'reset: its next run starts again from start_at (a new epoch).'}) -%}
    {{ return(health) }}
  {%- endif -%}
  {%- set detail = run_query(dbt_tablestream.spark__describe_detail_sql(relation)).rows[0] -%}
  {%- set stream = {'stream': row['stream_name'], 'source': row['source'], 'after': offset | int, 'through': latest_version,
                    'source_table_id': detail['id']} -%}
  {%- set remedy = "Reset the stream with `dbt run --full-refresh -s " ~ (row['target'].split('.') | last) ~ "` or `tablestream reset " ~ row['stream_name'] ~ "`." -%}
  {#-- One read of the history since the offset serves both the window check and the offset's time. --#}
  {%- set since = run_query(dbt_tablestream.spark__describe_history_sql(relation, latest_version - offset + 1)).rows
                  if offset >= 0 and offset <= latest_version else none -%}
  {%- set problem = dbt_tablestream.spark__window_problem(relation, stream, row['source_table_id'], remedy, since) -%}
  {%- do health.update({'stale': problem is not none, 'problem': problem}) -%}
  {%- for commit in since or [] if (commit['version'] | int) == offset -%}
    {%- do health.update({'offset_time': commit['timestamp'] | string}) -%}
  {%- endfor -%}
  {{ return(health) }}
{% endmacro %}


{% macro default__stream_health(row) %}
  {{ dbt_tablestream.engine_not_supported('stream_health') }}
{% endmacro %}

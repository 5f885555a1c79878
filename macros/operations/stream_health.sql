{#-- A stream's health against its source, for status, operations and generic tests. --#}


{#-- Where a stream stands against its source, from its latest offsets-log row: offset_time,
     source_version, source_time, stale (its next run would be refused), refusal (why: a
     _window_refusal's kind, or `missing` for a source that does not exist), problem (with the
     remedy), at_risk_from (when its oldest unconsumed change may be lost to log cleanup or
     VACUUM) and at_risk_in_seconds (how long from now, on the session's clock). Reads no change
     rows. `lag_only`: just what the lag needs (source_version, source_time, offset_time), for
     stream_lag. --#}
{% macro stream_health(row, lag_only=false) %}
  {%- do dbt_tablestream.stream_engine_check('stream_health') -%}
  {{ return(adapter.dispatch('stream_health', 'dbt_tablestream')(row, lag_only)) }}
{% endmacro %}


{#-- A stream's position against its source (see stream_health). --#}
{% macro spark__stream_health(row, lag_only=false) %}
  {%- set relation = dbt_tablestream._parse_relation(row['source']) -%}
  {%- set health = {'offset_time': none, 'source_version': none, 'source_time': none, 'stale': false,
                    'refusal': none, 'problem': none, 'at_risk_from': none, 'at_risk_in_seconds': none} -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {%- do health.update({'stale': true, 'refusal': 'missing',
                          'problem': "the source " ~ row['source']
                                     ~ " does not exist. Create it, or drop the stream."}) -%}
    {{ return(health) }}
  {%- endif -%}
  {%- set latest = run_query(dbt_tablestream.describe_history_sql(relation, 1)).rows[0] -%}
  {%- set latest_version = latest['version'] | int -%}
  {%- do health.update({'source_version': latest_version, 'source_time': latest['timestamp'] | string}) -%}
  {%- set offset = row['to_version'] -%}
  {%- if offset is none -%}
    {%- do health.update({'problem': dbt_tablestream._stream_reset_problem()}) -%}
    {{ return(health) }}
  {%- endif -%}
  {%- if lag_only -%}
    {#-- At lag 0 the lag needs nothing more; behind, only the offset's commit time. --#}
    {%- if offset >= 0 and offset < latest_version -%}
      {%- for commit in dbt_tablestream.history_since(relation, offset, latest_version)
            if (commit['version'] | int) == offset -%}
        {%- do health.update({'offset_time': commit['timestamp'] | string}) -%}
      {%- endfor -%}
    {%- endif -%}
    {{ return(health) }}
  {%- endif -%}
  {%- set detail = run_query(dbt_tablestream.describe_detail_sql(relation)).rows[0] -%}
  {%- set properties = {} -%}
  {%- for property in run_query(dbt_tablestream.table_properties_sql(relation)).rows -%}
    {%- do properties.update({property[0]: property[1]}) -%}
  {%- endfor -%}
  {#-- The offsets log does not record how a stream reads; a source that records row tracking but
       no change feed can only be read through Delta's changelog, so its window is checked as such. --#}
  {%- set tracks = {} -%}
  {%- for read in ['table_changes', 'changelog'] -%}
    {%- set tracked = properties.get(dbt_tablestream._stream_tracking_property(read), 'false') | string | lower -%}
    {%- do tracks.update({read: tracked == 'true'}) -%}
  {%- endfor -%}
  {%- set stream_read = 'changelog' if tracks['changelog'] and not tracks['table_changes'] else none -%}
  {%- set settings = dbt_tablestream._settings_from_configs({'stream_read': stream_read},
                                                        dbt_tablestream._stream_subject(row['stream_name']), none) -%}
  {%- set stream = dbt_tablestream._stream_input(settings, {
      'stream': row['stream_name'], 'source': row['source'], 'after': offset | int, 'through': latest_version,
      'source_table_id': detail['id'], 'file_retention': dbt_tablestream._file_retention(properties),
      'remedy': "Reset the stream with `dbt run --full-refresh -s " ~ (row['target'].split('.') | last)
                ~ "` or `tablestream reset " ~ row['stream_name'] ~ "`."}) -%}
  {%- set retention = run_query(dbt_tablestream.retained_from_sql(stream.file_retention)).rows[0] -%}
  {#-- One read of the history since the offset serves both the window check and the offset's time. --#}
  {%- set since = dbt_tablestream.history_since(relation, offset, latest_version)
                  if offset >= 0 and offset <= latest_version else none -%}
  {%- set problem = dbt_tablestream._window_problem(relation, stream, row['source_table_id'], since,
                                                    retention['retained_from']) -%}
  {%- if problem is not none -%}
    {%- do health.update({'stale': true, 'refusal': problem.kind, 'problem': problem.message}) -%}
  {%- endif -%}
  {%- for commit in since or [] if (commit['version'] | int) == offset -%}
    {%- do health.update({'offset_time': commit['timestamp'] | string}) -%}
  {%- endfor -%}
  {#-- The oldest unconsumed commit passes the file retention then (the window check's rule). --#}
  {%- for commit in since or [] if (commit['version'] | int) == offset + 1
        and retention['retained_from'] is not none -%}
    {%- set at_risk_from = commit['timestamp'] + (retention['checked_at'] - retention['retained_from']) -%}
    {%- do health.update({'at_risk_from': at_risk_from | string,
                          'at_risk_in_seconds': (at_risk_from - retention['checked_at']).total_seconds()}) -%}
  {%- endfor -%}
  {{ return(health) }}
{% endmacro %}

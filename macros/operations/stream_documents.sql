{#-- What the stream operations report, as the documents `tablestream --output json` prints: one
     shape whether Spark or delta-rs read the logs. Pure (handed what was read), so the command's
     delta-rs path renders these same macros from Python. --#}


{#-- A stream's status: its latest offsets-log row (`position`, with `stream_mode`, the mode of its
     latest run) and its health against the source (stream_health's keys; `stale` none when not
     checked), with the lag in versions and in seconds. The keys are the offsets log's columns and
     stream_health's, in this order. --#}
{% macro _stream_status_document(position, health) %}
  {%- set offset = position.to_version -%}
  {%- set lag = (health.source_version - offset) if (offset is not none and health.source_version is not none)
                else none -%}
  {%- set lag_seconds = none -%}
  {%- if lag == 0 -%}
    {%- set lag_seconds = 0.0 -%}
  {%- elif health.offset_time and health.source_time -%}
    {%- set parse = modules.datetime.datetime.fromisoformat -%}
    {%- set lag_seconds = (parse(health.source_time | string | replace('Z', '+00:00'))
                           - parse(health.offset_time | string | replace('Z', '+00:00'))).total_seconds() -%}
  {%- endif -%}
  {{ return({
      'stream_name': position.stream_name, 'source': position.source, 'stream_mode': position.stream_mode,
      'epoch': position.epoch, 'to_version': offset, 'offset_time': health.offset_time,
      'source_version': health.source_version, 'source_time': health.source_time,
      'lag_versions': ([lag, 0] | max) if lag is not none else none, 'lag_seconds': lag_seconds,
      'stale': health.stale, 'refusal': health.refusal, 'problem': health.problem,
      'at_risk_from': health.at_risk_from, 'at_risk_in_seconds': health.at_risk_in_seconds,
      'target': position.target, 'committed_at': position.committed_at, 'rows_written': position.rows_written,
      'mode': position.mode, 'from_version': position.from_version, 'source_table_id': position.source_table_id,
      'stream_id': position.stream_id, 'invocation_id': position.invocation_id}) }}
{% endmacro %}


{#-- One offsets-log row as `history` reports it. --#}
{% macro _stream_history_entry(row) %}
  {{ return({'stream_name': row.stream_name, 'epoch': row.epoch, 'mode': row.mode, 'from_version': row.from_version,
             'to_version': row.to_version, 'rows_written': row.rows_written, 'committed_at': row.committed_at,
             'invocation_id': row.invocation_id}) }}
{% endmacro %}


{#-- The problem of a reset stream (no offset in its new epoch). --#}
{% macro _stream_reset_problem() %}
  {{ return('reset: its next run starts again from start_at (a new epoch).') }}
{% endmacro %}


{#-- The refusal of a name that is neither a stream nor a stream model in `logs` (offsets-log
     relations), listing the `streams` there. `tablestream` exits 1 ("no such stream") on it. --#}
{% macro _no_such_stream_message(name, logs, streams) %}
  {{ return("No stream or stream model " ~ name ~ " in " ~ logs | join(', ') ~ ". Streams there: "
            ~ (streams | join(', ') or 'none') ~ ". Name a stream or its model; pass schema: <the stream target's "
            ~ "schema> if it lives elsewhere.") }}
{% endmacro %}

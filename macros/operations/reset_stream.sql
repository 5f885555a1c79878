{#-- Move a stream deliberately, in a new epoch: to continue with the changes after a source
     version (to_version) or after the last version at or before a time (to_timestamp), or with
     neither back to its start_at (the next run rebuilds the target, like --full-refresh).
     `stream_name` names a stream or a stream model: a model's streams (one per source it reads)
     start over together, so a model reading several is reset back to start_at only. `dry_run`
     says what it would do and writes nothing. `format: json` prints one JSON list (stream_name,
     source, target, epoch, from_version, to_version, dry_run, message per stream) instead of the lines.
     `dbt run-operation dbt_tablestream.reset_stream --args '{stream_name: ..., to_version: 12}'` --#}
{% macro reset_stream(stream_name, to_version=none, to_timestamp=none, schema=none, dry_run=false, format='text') %}
  {%- do dbt_tablestream.stream_engine_check('reset_stream') -%}
  {%- if to_version is not none and to_timestamp is not none -%}
    {{ exceptions.raise_compiler_error("reset_stream " ~ stream_name
        ~ ": give to_version or to_timestamp, not both.") }}
  {%- endif -%}
  {%- set positions = dbt_tablestream._find_stream_positions(stream_name, schema) -%}
  {%- if positions | length > 1 and (to_version is not none or to_timestamp is not none) -%}
    {{ exceptions.raise_compiler_error(
        "reset_stream " ~ stream_name ~ ": the model reads several streams ("
        ~ positions | map(attribute='stream_name') | join(', ') ~ "), each a version of its own source; they start "
        ~ "over together. Reset the model back to its start_at (no to_version or to_timestamp), or reset each stream "
        ~ "by its name. Nothing was written.") }}
  {%- endif -%}
  {%- set moves = [] -%}
  {%- for position in positions -%}
    {%- set relation = dbt_tablestream._parse_relation(position.source) -%}
    {%- set state = dbt_tablestream.stream_source_state(relation, position.stream_name, to_timestamp, false) -%}
    {%- set version = to_version -%}
    {%- if to_timestamp is not none -%}{%- set version = state.version_at_timestamp -%}{%- endif -%}
    {%- if version is not none and (version is not number or version < 0 or version > state.latest_version) -%}
      {{ exceptions.raise_compiler_error(
          "reset_stream " ~ position.stream_name ~ ": to_version must be a version of " ~ position.source
          ~ " from 0 to " ~ state.latest_version ~ ", got " ~ version ~ ".") }}
    {%- endif -%}
    {%- do moves.append({'position': position, 'version': version, 'table_id': state.table_id}) -%}
  {%- endfor -%}
  {%- set results = [] -%}
  {%- for move in moves -%}
    {%- set position, version = move.position, move.version -%}
    {%- set epoch = (position.epoch | int) + 1 if dry_run
        else dbt_tablestream._open_stream_epoch(position, 'reset', version, move.table_id, position.offsets_schema) -%}
    {%- set verb = "would be reset (dry run: nothing written)" if dry_run else "reset" -%}
    {%- if version is none -%}
      {%- set message = dbt_tablestream._stream_subject(position.stream_name) ~ " " ~ verb ~ " (epoch " ~ epoch
          ~ "): its next run rebuilds " ~ position.target ~ " from its start_at." -%}
    {%- else -%}
      {%- set message = dbt_tablestream._stream_subject(position.stream_name) ~ " " ~ verb ~ " (epoch " ~ epoch
          ~ "): its next run applies the changes of " ~ position.source ~ " after version " ~ version
          ~ " (it was at " ~ position.to_version ~ ")." -%}
    {%- endif -%}
    {%- do results.append({'stream_name': position.stream_name, 'source': position.source, 'target': position.target,
                           'epoch': epoch, 'from_version': position.to_version, 'to_version': version,
                           'dry_run': dry_run, 'message': message}) -%}
    {%- if format != 'json' -%}{{ print(message) }}{%- endif -%}
  {%- endfor -%}
  {%- if format == 'json' -%}{{ print(tojson(results)) }}{%- endif -%}
  {{ return(results) }}
{% endmacro %}


{#-- Appends a reset or drop row to the offsets log, opening the stream's next epoch; returns it. --#}
{% macro _open_stream_epoch(position, mode, to_version, source_table_id, schema) %}
  {%- set epoch = (position.epoch | int) + 1 -%}
  {%- set row_sql = dbt_tablestream.offsets_values_sql({
      'stream_name': position.stream_name, 'epoch': epoch,
      'stream_id': dbt_tablestream._stream_app_id([position.stream_name], [epoch]),
      'source': position.source, 'source_table_id': source_table_id, 'mode': mode,
      'from_version': position.to_version, 'to_version': to_version, 'target': position.target,
      'rows_written': none}) -%}
  {%- do dbt_tablestream.append_offsets_row(dbt_tablestream._offsets_relation(schema), row_sql,
                                            dbt_tablestream._offsets_columns()) -%}
  {{ return(epoch) }}
{% endmacro %}

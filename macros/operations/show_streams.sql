{#-- Every stream whose target lives in `schema` (default: every schema of the project's stream
     models, _stream_offsets_schemas): position, lag, staleness, last run.
     `dbt run-operation dbt_tablestream.show_streams [--args '{schema: analytics, format: json}']` --#}
{% macro show_streams(schema=none, format='table') %}
  {%- do dbt_tablestream.stream_engine_check('show_streams') -%}
  {%- set statuses = [] -%}
  {%- for each_schema in dbt_tablestream._stream_offsets_schemas(schema) -%}
    {%- for position in dbt_tablestream.stream_positions(each_schema) -%}
      {%- do statuses.append(dbt_tablestream._stream_status(position)) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if format == 'json' -%}
    {{ print(tojson(statuses)) }}
    {{ return(statuses) }}
  {%- endif -%}
  {%- if not statuses -%}
    {{ print("No streams in " ~ dbt_tablestream._stream_offsets_schemas(schema) | join(', ') ~ " yet: a stream appears "
        ~ "after its model's first successful run.") }}
    {{ return(statuses) }}
  {%- endif -%}
  {%- set rows = [] -%}
  {%- for status in statuses -%}
    {%- do rows.append([status.stream_name, status.source, status.stream_mode,
        status.to_version if status.to_version is not none else '-',
        (status.offset_time or '-') | string | truncate(19, true, ''),
        status.source_version if status.source_version is not none else '-',
        status.lag_versions if status.lag_versions is not none else '-',
        dbt_tablestream._format_duration(status.lag_seconds),
        (status.refusal | upper) if status.stale else 'no', status.target,
        status.committed_at | string | truncate(19, true, ''),
        status.rows_written if status.rows_written is not none else '-']) -%}
  {%- endfor -%}
  {{ print(dbt_tablestream._text_table(['stream', 'source', 'mode', 'offset', 'offset time', 'source at', 'lag',
                                        'lag time', 'stale', 'target', 'last run', 'rows'], rows)) }}
  {%- for status in statuses if status.problem -%}
    {{ print(status.stream_name ~ ': ' ~ status.problem) }}
  {%- endfor -%}
  {{ return(statuses) }}
{% endmacro %}

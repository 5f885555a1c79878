{#-- Shared by the stream materializations: checks of the model's output and the end of a run. --#}

{#-- The model's output columns; refuses output lacking the columns a keyed stream needs. --#}
{% macro stream_output_columns(stream, sql, keys) %}
  {%- set columns = get_columns_in_query(sql) -%}
  {%- set required = keys + ['__change_type', '__commit_version'] -%}
  {%- set missing = [] -%}
  {%- for column in required if column not in columns -%}{%- do missing.append(column) -%}{%- endfor -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(
        "Stream " ~ stream.stream ~ " on " ~ stream.source ~ ": the output of model " ~ model.name ~ " lacks "
        ~ missing | join(', ') ~ ". A keyed stream model must keep its unique_key columns (" ~ keys | join(', ')
        ~ "), __change_type and __commit_version; select them from the stream. Nothing was written.") }}
  {%- endif -%}
  {{ return(columns) }}
{% endmacro %}


{#-- Refuses change rows whose key is NULL: they could match no target row. Returns how many
     change rows the model read from the window. --#}
{% macro check_stream_keys_not_null(stream, sql, keys) %}
  {%- set counts = run_query(dbt_tablestream.stream_null_keys_sql(sql, keys)).rows[0] -%}
  {%- set nulls = counts[1] -%}
  {%- if nulls > 0 -%}
    {{ exceptions.raise_compiler_error(
        "Stream " ~ stream.stream ~ " on " ~ stream.source ~ ": " ~ nulls ~ " change rows of the window ("
        ~ stream.after ~ ", " ~ stream.through ~ "] have a NULL unique_key (" ~ keys | join(', ') ~ "). "
        ~ "Filter them out in model " ~ model.name ~ " or fix the source; nothing was written and the stream did not move.") }}
  {%- endif -%}
  {{ return(counts[0] | int) }}
{% endmacro %}


{% macro stream_null_keys_sql(sql, keys) %}
  {%- set conditions = [] -%}
  {%- for key in keys -%}{%- do conditions.append(adapter.quote(key) ~ ' is null') -%}{%- endfor -%}
  {{ return('select count(*) as rows_read, count_if(' ~ conditions | join(' or ') ~ ') as null_keys from (' ~ sql ~ ') as __tablestream_keys') }}
{% endmacro %}


{#-- After the target write: the offsets log, the fault points around it, and the run's summary. --#}
{% macro finish_stream_run(stream, response, rows_read=none) %}
  {%- if response is not none and response.code == 'SKIPPED' -%}
    {{ log("stream " ~ stream.stream ~ ": window (" ~ stream.after ~ ", " ~ stream.through ~ "] of " ~ stream.source
           ~ " was already applied by a concurrent run; no-op", info=True) }}
    {{ return(none) }}
  {%- endif -%}
  {%- set rows_written = response.rows_affected if response is not none else 0 -%}
  {%- do dbt_tablestream.fault_point('after_target_commit') -%}
  {%- do dbt_tablestream.append_stream_offset(stream, rows_written) -%}
  {%- do dbt_tablestream.fault_point('after_offsets_append') -%}
  {{ log(dbt_tablestream.stream_summary(stream, rows_read if rows_read is not none else rows_written, rows_written), info=True) }}
{% endmacro %}

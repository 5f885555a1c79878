{#-- The marker a stream leaves on its target: commitInfo.userMetadata of the target's commit. --#}


{% macro stream_target_marker(target, stream_name) %}
  {{ return(adapter.dispatch('stream_target_marker', 'dbt_tablestream')(target, stream_name)) }}
{% endmacro %}


{#-- The newest marker the stream left in the target's commitInfo.userMetadata: recent history
     first, the whole history only when the recent part has none. --#}
{% macro spark__stream_target_marker(target, stream_name) %}
  {%- set recent = 50 -%}
  {%- set rows = run_query(dbt_tablestream.spark__describe_history_sql(target, recent)).rows -%}
  {%- set marker = dbt_tablestream.spark__find_marker(rows, stream_name) -%}
  {%- if marker is none and rows | length >= recent -%}
    {%- set marker = dbt_tablestream.spark__find_marker(run_query(dbt_tablestream.spark__describe_history_sql(target, none)).rows, stream_name) -%}
  {%- endif -%}
  {{ return(marker) }}
{% endmacro %}


{% macro default__stream_target_marker(target, stream_name) %}
  {{ dbt_tablestream.engine_not_supported('stream_target_marker') }}
{% endmacro %}


{% macro spark__find_marker(history_rows, stream_name) %}
  {%- for row in history_rows -%}
    {%- set metadata = row['userMetadata'] -%}
    {%- if metadata is string and '"tablestream.stream"' in metadata -%}
      {%- set parsed = fromjson(metadata) -%}
      {%- if parsed is mapping and parsed.get('tablestream.stream') == stream_name -%}
        {%- set marker = {'commit_version': row['version'] | int} -%}
        {%- for key, value in parsed.items() if key.startswith('tablestream.') -%}
          {%- do marker.update({key[12:]: value}) -%}
        {%- endfor -%}
        {{ return(marker) }}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}

{#-- The marker a stream leaves on its target: commitInfo.userMetadata of the target's commit. --#}


{% macro stream_target_marker(target, stream_name) %}
  {{ return(adapter.dispatch('stream_target_marker', 'dbt_tablestream')(target, stream_name)) }}
{% endmacro %}


{#-- The newest marker the stream left in the target's commitInfo.userMetadata: recent history
     first, the whole history only when the recent part has none. --#}
{% macro spark__stream_target_marker(target, stream_name) %}
  {{ return(dbt_tablestream.spark__stream_target_markers(target, [stream_name])[stream_name]) }}
{% endmacro %}


{#-- spark__stream_target_marker for several streams, from one read of the recent history. --#}
{% macro spark__stream_target_markers(target, stream_names) %}
  {%- set recent = 50 -%}
  {%- set rows = run_query(dbt_tablestream.spark__describe_history_sql(target, recent)).rows -%}
  {%- set markers = {} -%}
  {%- for name in stream_names -%}{%- do markers.update({name: dbt_tablestream.spark__find_marker(rows, name)}) -%}{%- endfor -%}
  {%- if none in markers.values() and rows | length >= recent -%}
    {%- set rows = run_query(dbt_tablestream.spark__describe_history_sql(target, none)).rows -%}
    {%- for name in stream_names if markers[name] is none -%}{%- do markers.update({name: dbt_tablestream.spark__find_marker(rows, name)}) -%}{%- endfor -%}
  {%- endif -%}
  {{ return(markers) }}
{% endmacro %}


{% macro default__stream_target_marker(target, stream_name) %}
  {{ dbt_tablestream.engine_not_supported('stream_target_marker') }}
{% endmacro %}


{% macro spark__find_marker(history_rows, stream_name) %}
  {%- for row in history_rows -%}
    {%- set metadata = row['userMetadata'] -%}
    {%- if metadata is string and '"tablestream.stream"' in metadata -%}
      {%- set parsed = fromjson(metadata) -%}
      {#-- A commit of several streams carries each one's marker under tablestream.inputs. --#}
      {%- set entries = [parsed] + (parsed.get('tablestream.inputs') or []) if parsed is mapping else [] -%}
      {%- for entry in entries if entry is mapping and entry.get('tablestream.stream') == stream_name -%}
        {%- set marker = {'commit_version': row['version'] | int} -%}
        {%- for key, value in entry.items() if key.startswith('tablestream.') -%}
          {%- do marker.update({key[12:]: value}) -%}
        {%- endfor -%}
        {{ return(marker) }}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}

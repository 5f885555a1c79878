{#-- The marker a stream leaves on its target: commitInfo.userMetadata of the target's commit. --#}


{% macro stream_target_marker(target, stream_name) %}
  {{ return(adapter.dispatch('stream_target_marker', 'dbt_tablestream')(target, stream_name)) }}
{% endmacro %}


{#-- The newest marker the stream left in the target's commitInfo.userMetadata: recent history
     first, the whole history only when the recent part has none. --#}
{% macro spark__stream_target_marker(target, stream_name) %}
  {{ return(dbt_tablestream.stream_target_markers(target, [stream_name])[stream_name]) }}
{% endmacro %}


{% macro stream_target_markers(target, stream_names) %}
  {{ return(adapter.dispatch('stream_target_markers', 'dbt_tablestream')(target, stream_names)) }}
{% endmacro %}


{#-- spark__stream_target_marker for several streams, from one read of the recent history. --#}
{% macro spark__stream_target_markers(target, stream_names) %}
  {%- set recent = 50 -%}
  {%- set rows = run_query(dbt_tablestream.describe_history_sql(target, recent)).rows -%}
  {%- set markers = {} -%}
  {%- for name in stream_names -%}{%- do markers.update({name: dbt_tablestream.find_marker(rows, name)}) -%}{%- endfor -%}
  {%- if none in markers.values() and rows | length >= recent -%}
    {%- set rows = run_query(dbt_tablestream.describe_history_sql(target, none)).rows -%}
    {%- for name in stream_names if markers[name] is none -%}{%- do markers.update({name: dbt_tablestream.find_marker(rows, name)}) -%}{%- endfor -%}
  {%- endif -%}
  {{ return(markers) }}
{% endmacro %}


{% macro find_marker(history_rows, stream_name) %}
  {{ return(adapter.dispatch('find_marker', 'dbt_tablestream')(history_rows, stream_name)) }}
{% endmacro %}


{% macro spark__find_marker(history_rows, stream_name) %}
  {%- for commit in dbt_tablestream.stream_commit_markers(history_rows) -%}
    {%- for entry in commit.entries if entry.get('stream') == stream_name -%}
      {%- set marker = {'commit_version': commit.commit_version} -%}
      {%- do marker.update(entry) -%}
      {{ return(marker) }}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{% macro stream_commit_markers(history_rows) %}
  {{ return(adapter.dispatch('stream_commit_markers', 'dbt_tablestream')(history_rows)) }}
{% endmacro %}


{#-- The one reader of the markers in DESCRIBE HISTORY rows (as stream_marker_metadata writes
     them), in the rows' order: each marked commit's version and its entries, keys without the
     `tablestream.` prefix. The first entry is the commit's own marker (its stream id, window end
     and invocation); a commit of several streams carries each input's marker after it, under
     tablestream.inputs. --#}
{% macro spark__stream_commit_markers(history_rows) %}
  {%- set commits = [] -%}
  {%- for row in history_rows -%}
    {%- set metadata = row['userMetadata'] -%}
    {%- set parsed = fromjson(metadata) if metadata is string and '"tablestream.stream"' in metadata else none -%}
    {%- if parsed is mapping -%}
      {%- set entries = [] -%}
      {%- for marked in [parsed] + (parsed.get('tablestream.inputs') or []) if marked is mapping -%}
        {%- set entry = {} -%}
        {%- for key, value in marked.items() if key.startswith('tablestream.') and key != 'tablestream.inputs' -%}
          {%- do entry.update({key[12:]: value}) -%}
        {%- endfor -%}
        {%- do entries.append(entry) -%}
      {%- endfor -%}
      {%- do commits.append({'commit_version': row['version'] | int, 'entries': entries}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(commits) }}
{% endmacro %}

{#-- The newest marker the stream left in the target's commitInfo.userMetadata: recent history
     first, the whole history only when the recent part has none. --#}
{% macro _stream_target_marker(target, stream_name) %}
  {{ return(dbt_tablestream.stream_target_markers(target, [stream_name])[stream_name]) }}
{% endmacro %}


{% macro stream_target_markers(target, stream_names) %}
  {{ return(adapter.dispatch('stream_target_markers', 'dbt_tablestream')(target, stream_names)) }}
{% endmacro %}


{#-- spark__stream_target_marker for several streams, usually from one read of the newest
     commits: a stream's marker is in its target's newest commit unless something else wrote the
     target since, so the read widens (_stream_history_reads) only while a marker is missing and the
     history goes on. DESCRIBE HISTORY opens one commit file per row. --#}
{% macro spark__stream_target_markers(target, stream_names) %}
  {%- set markers = {} -%}
  {%- for name in stream_names -%}{%- do markers.update({name: none}) -%}{%- endfor -%}
  {%- set read = namespace(whole=false) -%}
  {%- for limit in dbt_tablestream._stream_history_reads() if none in markers.values() and not read.whole -%}
    {%- set rows = run_query(dbt_tablestream.describe_history_sql(target, limit)).rows -%}
    {%- for name in stream_names if markers[name] is none -%}
      {%- do markers.update({name: dbt_tablestream._find_marker(rows, name)}) -%}
    {%- endfor -%}
    {%- set read.whole = limit is none or rows | length < limit -%}
  {%- endfor -%}
  {{ return(markers) }}
{% endmacro %}


{#-- The LIMITs of the successive DESCRIBE HISTORY reads of a stream's target, widening while
     what is sought (a marker, the run's own commit) is not yet found: the newest few commits,
     then 50, then the whole history. --#}
{% macro _stream_history_reads() %}
  {{ return([5, 50, none]) }}
{% endmacro %}


{#-- The newest marker of the input `stream_name` (its epoch, window and source table id), with
     its commit's version. --#}
{% macro _find_marker(history_rows, stream_name) %}
  {%- for commit in dbt_tablestream._stream_commit_markers(history_rows) -%}
    {%- for entry in commit.inputs if entry.get('stream') == stream_name -%}
      {%- set marker = {'commit_version': commit.commit_version} -%}
      {%- do marker.update(entry) -%}
      {{ return(marker) }}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- The newest commit of the group `group_name` (_stream_group's name): its stream id, window end
     and invocation, with its version. --#}
{% macro _find_commit_marker(history_rows, group_name) %}
  {%- for commit in dbt_tablestream._stream_commit_markers(history_rows) if commit.own.get('stream') == group_name -%}
    {%- set marker = {'commit_version': commit.commit_version} -%}
    {%- do marker.update(commit.own) -%}
    {{ return(marker) }}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- The one reader of the markers in DESCRIBE HISTORY rows (as _stream_marker_metadata writes
     them), in the rows' order: each marked commit's version, its `own` marker (the group's stream
     id, window end and invocation) and its `inputs`' markers (each input's epoch, window and
     source table id), keys without the `tablestream.` prefix. A commit an earlier version of the
     package wrote for one stream carries that stream's marker alone: it is both. --#}
{% macro _stream_commit_markers(history_rows) %}
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
      {%- do commits.append({'commit_version': row['version'] | int, 'own': entries[0],
                             'inputs': entries[1:] if 'tablestream.inputs' in parsed else entries}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(commits) }}
{% endmacro %}

{#-- The marked protocol's proof that a commit is this run's own: the marker its commit carries
     in commitInfo.userMetadata, and the verdict read back from the target's history. --#}


{#-- The commitInfo marker of a stream commit (docs/architecture.md, "One stream run, traced",
     step 5): the group's own id, SetTransaction version and invocation, then each input's marker.
     A commit of one stream written by an earlier version of the package carries that stream's
     marker alone, at the top level; _stream_commit_markers reads both shapes. --#}
{% macro _stream_marker_metadata(stream) %}
  {%- set inputs = [] -%}
  {%- for input in stream.inputs -%}
    {%- do inputs.append({
        'tablestream.stream': input.stream,
        'tablestream.stream_id': input.stream_id,
        'tablestream.epoch': input.epoch,
        'tablestream.from': input.after,
        'tablestream.to': input.through,
        'tablestream.source': input.source,
        'tablestream.source_table_id': input.source_table_id,
        'tablestream.invocation_id': invocation_id,
    }) -%}
  {%- endfor -%}
  {{ return({
      'tablestream.stream': stream.stream,
      'tablestream.stream_id': stream.stream_id,
      'tablestream.to': stream.through,
      'tablestream.source': stream.source,
      'tablestream.invocation_id': invocation_id,
      'tablestream.inputs': inputs,
  }) }}
{% endmacro %}


{#-- What the target's marker says of a window about to be applied (mode append or merge):
     'apply', or 'applied' when a concurrent run already applied all of it. A marker between the
     window's start and end means a concurrent run moved the stream mid-window: refused. --#}
{% macro _stream_marker_verdict(stream, marker) %}
  {%- set applied = (marker.to | int) if marker is not none and marker.stream_id == stream.stream_id else none -%}
  {%- if applied is not none and applied >= stream.through -%}
    {{ return('applied') }}
  {%- endif -%}
  {%- if applied is not none and applied > stream.after -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " is being consumed by another run: it applied the "
        ~ "source up to version " ~ applied ~ " after this run read from version " ~ stream.after ~ ". Nothing was "
        ~ "written; run again to apply what is left.") }}
  {%- endif -%}
  {{ return('apply') }}
{% endmacro %}


{% macro history_with_own_commit(target, stream) %}
  {{ return(adapter.dispatch('history_with_own_commit', 'dbt_tablestream')(target, stream)) }}
{% endmacro %}


{#-- The target's newest commits after the write, read until they hold this run's own commit
     (usually the newest) or reach 50 (_stream_history_reads): a concurrent run's commit of the window
     is among the 50 when Delta skipped this run's write. --#}
{% macro spark__history_with_own_commit(target, stream) %}
  {%- set read = namespace(rows=[], done=false) -%}
  {%- for limit in dbt_tablestream._stream_history_reads() if limit is not none and not read.done -%}
    {%- set read.rows = run_query(dbt_tablestream.describe_history_sql(target, limit)).rows -%}
    {%- set own = dbt_tablestream._own_commit(read.rows, stream) -%}
    {#-- Found in the read's oldest row, the write itself could be older still (a compaction after it
         carries its marker). --#}
    {%- set read.done = read.rows | length < limit
        or (own is not none and own.commit_version > read.rows[-1]['version'] | int) -%}
  {%- endfor -%}
  {{ return(read.rows) }}
{% endmacro %}


{#-- _stream_marker_verdict for each input of the group with a window to apply, from one read of
     the target's history: 'applied' only when a concurrent run applied all of them (it committed
     them together); a group of which only some inputs were applied is refused. --#}
{% macro _stream_commit_verdict(target, stream) %}
  {%- set reading = stream.inputs | rejectattr('view', 'none') | list -%}
  {%- set markers = dbt_tablestream.stream_target_markers(target, reading | map(attribute='stream') | list) -%}
  {%- set applied = [] -%}
  {%- for input in reading if dbt_tablestream._stream_marker_verdict(input, markers[input.stream]) == 'applied' -%}
    {%- do applied.append(input.stream) -%}
  {%- endfor -%}
  {%- if applied and applied | length < reading | length -%}
    {{ exceptions.raise_compiler_error(
        "Streams " ~ stream.stream ~ " are being consumed by another run: it applied " ~ applied | join(', ')
        ~ " after this run read them, and not the others. Nothing was written; run again to apply what is left.") }}
  {%- endif -%}
  {{ return('applied' if applied else 'apply') }}
{% endmacro %}


{#-- This run's own commit of the window: the oldest recent commit whose marker names this stream
     id, this window's end and this invocation. Commits made while the marker was set (Delta's
     auto-compaction right after the write) carry it too, so the oldest is the write itself. --#}
{% macro _own_commit(history_rows, stream) %}
  {%- set found = namespace(marker=none) -%}
  {%- for commit in dbt_tablestream._stream_commit_markers(history_rows) -%}
    {%- set own = commit.own -%}
    {%- if own.get('stream_id') == stream.stream_id and (own.get('to') | int) == stream.through
        and own.get('invocation_id') == invocation_id -%}
      {%- set found.marker = {'commit_version': commit.commit_version, 'stream_id': stream.stream_id,
          'to': stream.through} -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found.marker) }}
{% endmacro %}

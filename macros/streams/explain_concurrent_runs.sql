{#-- Run by this package's on-run-end hook. Two runs of one stream that write at the same moment
     carry the same marker (app id), and Delta lets only the first commit: the other fails inside
     Delta with DELTA_CONCURRENT_TRANSACTION, a message about streaming checkpoints. A materialization
     cannot catch that error, so the run's end says what it means for the stream. The stream, its
     source and the window are read from the winning commit's marker, which Delta's message quotes. --#}
{% macro explain_concurrent_runs(results) %}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- for result in results
        if result.status == 'error' and result.node.resource_type == 'model'
        and result.node.config.materialized in dbt_tablestream._stream_materializations() -%}
    {%- set streams = modules.re.findall('tablestream:window \\{"stream": "([^"]+)"',
                                         result.node.compiled_code or '') -%}
    {%- set explanation = dbt_tablestream._concurrent_run_explanation(result.node.name, result.message or '',
                                                                      streams) -%}
    {%- if explanation -%}
      {{ log(explanation, info=True) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}


{#-- The explanation of a stream model's error, or none when the error is not a concurrent run's win.
     `streams`: the model's streams (their windows' names in its compiled SQL). Under the reapply
     protocol (no marker) two runs writing one target at once conflict in Delta as any two writers
     do, and the loser's error names its conflict class only. --#}
{% macro _concurrent_run_explanation(model_name, message, streams=[]) %}
  {%- set conflict = modules.re.search('DELTA_(CONCURRENT_APPEND|CONCURRENT_DELETE_READ|CONCURRENT_DELETE_DELETE'
                                       ~ '|CONCURRENT_WRITE|METADATA_CHANGED)', message) -%}
  {%- if 'DELTA_CONCURRENT_TRANSACTION' not in message and conflict and streams -%}
    {%- set consumed = dbt_tablestream._stream_subject(streams | unique | join(', ')) ~ " of model " ~ model_name
        ~ " is being consumed by another run: " -%}
    {%- if 'tablestream_offsets' in message -%}
      {#-- Under the reapply protocol: the run's write committed after the other run's, so it applied
           the window again, which changed nothing (append_stream_offset). --#}
      {{ return(consumed ~ "it logged the same window in the offsets log while this run was logging it, so Delta "
         ~ "refused this run's offsets row (" ~ conflict.group(0) ~ "). This run's write applied the window again "
         ~ "after the other run's, which changed nothing, and the stream's position is the other run's; nothing needs "
         ~ "repair. Run again to apply what changed since.") }}
    {%- endif -%}
    {{ return(consumed ~ "another write to its target committed while this run was writing it, so Delta refused "
       ~ "this run's write (" ~ conflict.group(0) ~ "). Nothing was written by this run and its offset did not move; "
       ~ "nothing needs repair. Run again to apply what changed since.") }}
  {%- endif -%}
  {%- if 'DELTA_CONCURRENT_TRANSACTION' not in message or 'tablestream.stream' not in message -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set marker = {} -%}
  {%- for key in ['stream', 'source', 'from', 'to', 'invocation_id'] -%}
    {#-- The marker is JSON quoted inside JSON: its quotes arrive as \" or ". --#}
    {%- set found = modules.re.search('tablestream\\.' ~ key ~ '\\\\?"\\s*:\\s*\\\\?"?([^",\\\\}]+)', message) -%}
    {%- do marker.update({key: found.group(1) if found else '?'}) -%}
  {%- endfor -%}
  {{ return(dbt_tablestream._stream_subject(marker.stream) ~ " on " ~ marker.source ~ " is being consumed by "
     ~ "another run: run " ~ marker.invocation_id ~ " committed the window (" ~ marker['from'] ~ ", " ~ marker.to
     ~ "] to model " ~ model_name ~ " while this run was writing it, so Delta refused this run's write "
     ~ "(DELTA_CONCURRENT_TRANSACTION). Nothing was written by this run and its offset did not move; nothing needs "
     ~ "repair. Run again to apply what changed since.") }}
{% endmacro %}

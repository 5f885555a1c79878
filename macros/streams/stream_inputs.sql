{#-- The streams a compiled model read (docs/architecture.md, "Several streams in one model"). --#}


{#-- What a stream materialization commits: the one stream the model read, or, when it read
     several, their group. Refuses a model that reads no stream, or one stream name twice. --#}
{% macro stream_of_compiled_code(compiled_code) %}
  {%- set found = modules.re.findall('/\\* tablestream:window (\\{.*?\\}) \\*/', compiled_code) -%}
  {%- set streams = [] -%}
  {%- for raw in found -%}
    {%- set stream = fromjson(raw) -%}
    {%- if stream not in streams -%}{%- do streams.append(stream) -%}{%- endif -%}
  {%- endfor -%}
  {%- if not streams -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " is materialized as a stream, so it must read a stream with "
        ~ "dbt_tablestream.source_stream() or ref_stream(); it reads none. Nothing was written.") }}
  {%- endif -%}
  {{ return(streams[0] if streams | length == 1 else dbt_tablestream.stream_input_group(streams)) }}
{% endmacro %}


{#-- Several streams read by one model, committed as one: every input was pinned once when the
     model compiled; the one target commit carries each input's marker under `tablestream.inputs`,
     and one offsets-log INSERT moves them all after it. The commit's SetTransaction app id names
     every input and its epoch, and its version is the sum of the inputs' window ends: it grows
     whenever any input moves, so Delta skips a window a concurrent run already committed exactly
     as for one stream. --#}
{% macro stream_input_group(streams) %}
  {%- set inputs = streams | sort(attribute='stream') -%}
  {%- set names = inputs | map(attribute='stream') | list -%}
  {%- for name in names | unique if names.count(name) > 1 -%}
    {%- set windows = [] -%}
    {%- for input in inputs if input.stream == name -%}{%- do windows.append(dbt_tablestream.stream_window_text(input)) -%}{%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " reads the stream " ~ name ~ " more than once, with different windows: " ~ windows | join('; ')
        ~ ". Each source_stream() or ref_stream() call is a stream of its own, named <model>__<source>; a stream_name config "
        ~ "names one stream, so leave it out of a model that reads several sources, and read each source once (in a CTE). Nothing was written.") }}
  {%- endfor -%}
  {%- set restarting = inputs | selectattr('restart') | map(attribute='stream') | list -%}
  {%- if restarting and restarting | length < inputs | length -%}
    {%- set continuing = [] -%}
    {%- for input in inputs if not input.restart -%}
      {%- do continuing.append(input.stream ~ " (from version " ~ input.after ~ " of " ~ input.source ~ ")") -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " reads several streams, and " ~ restarting | join(', ') ~ " starts over (a first run of a new input, "
        ~ "a reset, or on_stale: resnapshot) while " ~ continuing | join(', ') ~ " continues. The inputs of one model start over "
        ~ "together, since the target is rebuilt from all of them. Nothing was written. Run the model with --full-refresh, "
        ~ "or reset each of its streams with dbt_tablestream.reset_stream.") }}
  {%- endif -%}
  {%- set epochs = [] -%}
  {%- set ends = namespace(after=0, through=0) -%}
  {%- for input in inputs -%}
    {%- do epochs.append(input.epoch | string) -%}
    {%- set ends.after = ends.after + (input.after | int) -%}
    {%- set ends.through = ends.through + (input.through | int) -%}
  {%- endfor -%}
  {%- set reading = inputs | rejectattr('view', 'none') | list -%}
  {{ return({
      'stream': names | join('+'),
      'stream_id': 'tablestream/' ~ names | join('+') ~ '/' ~ epochs | join('+'),
      'inputs': inputs,
      'source': inputs | map(attribute='source') | join(', '),
      'after': ends.after,
      'through': ends.through,
      'restart': restarting | length > 0,
      'snapshot': inputs | selectattr('snapshot') | list | length > 0,
      'view': reading[0].view if reading else none,
  }) }}
{% endmacro %}


{#-- A stream's window as messages name it: `window (a, b] of <source>`, or each input's for a
     group. --#}
{% macro stream_window_text(stream) %}
  {%- set parts = [] -%}
  {%- for input in stream.get('inputs') or [stream] -%}
    {%- do parts.append((input.stream ~ ": " if stream.get('inputs') else "") ~ "window (" ~ input.after ~ ", " ~ input.through ~ "] of " ~ input.source) -%}
  {%- endfor -%}
  {{ return(parts | join('; ')) }}
{% endmacro %}

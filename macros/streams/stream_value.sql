{#-- The stream value (docs/architecture.md, "The stream value"): one input read by a model
     (_stream_input) and the group of inputs a model commits together (_stream_group). A model that
     reads one stream commits a group of one. Every key is present from the start; the keys are
     documented in stream_value.yml. Pure, so the PySpark API builds its streams with them too. --#}


{#-- The SetTransaction app id of a commit: `tablestream/<name>/<epoch>`, or for a group
     `tablestream/<a>+<b>/<epoch of a>+<epoch of b>`. The one place it is spelled. --#}
{% macro _stream_app_id(names, epochs) %}
  {{ return('tablestream/' ~ names | join('+') ~ '/' ~ epochs | join('+')) }}
{% endmacro %}


{#-- How a refusal names a stream: `Stream <name>`. The one place it is spelled for a stream's
     value (_stream_input's `subject`) and for messages raised before the value exists. --#}
{% macro _stream_subject(name) %}
  {{ return('Stream ' ~ name) }}
{% endmacro %}


{#-- One stream input: `fields` names its position and window (stream, epoch, source,
     source_table_id, after, through, and the optional keys below, none or false when left out),
     `settings` the model's stream settings (_settings_from_configs) for how it reads. `subject` and
     `remedy` are how a refusal names the reader and what it advises (_stream_remedy), so a check
     deep in the read words it as its caller would: a stream by default, a change query
     (changes()) its own. Refuses a key it does not know, so no caller adds one along the way. --#}
{% macro _stream_input(settings, fields) %}
  {%- set optional = {'epoch': none, 'source_table_id': none, 'latest': fields.get('through'), 'restart': false,
                      'snapshot': false, 'timestamp': none, 'file_retention': none, 'runs': none, 'view': none,
                      'split': none, 'schema_change': none, 'schema_version': none, 'appends_only': false,
                      'window_files': none, 'note': none, 'files': none,
                      'subject': dbt_tablestream._stream_subject(fields.stream), 'remedy': none} -%}
  {%- for name in fields if name not in ['stream', 'source', 'after', 'through'] and name not in optional -%}
    {{ exceptions.raise_compiler_error("_stream_input: unknown key " ~ name ~ " (stream_value.yml lists the keys).") }}
  {%- endfor -%}
  {%- set input = {
      'stream': fields.stream,
      'stream_id': dbt_tablestream._stream_app_id([fields.stream], [fields.epoch])
                   if fields.get('epoch') is not none else none,
      'source': fields.source,
      'after': fields.after,
      'through': fields.through,
      'mode': settings.stream_mode,
      'read': settings.stream_read,
      'spark_net_changes': settings.spark_net_changes,
      'drop_carryovers': settings.drop_carryovers,
      'on_feed_off': settings.on_feed_off,
      'max_versions': settings.max_versions_per_run,
  } -%}
  {%- for name, default in optional.items() -%}
    {%- do input.update({name: fields[name] if name in fields else default}) -%}
  {%- endfor -%}
  {{ return(input) }}
{% endmacro %}


{#-- A new input: `input` with `changes`, which may only set keys an input has, the stream_id left
     to follow the epoch. An input is never changed in place: each step of resolving a stream makes
     its own, so no key escapes _stream_input's check. --#}
{% macro _stream_input_with(input, changes) %}
  {%- for name in changes if name not in input or name == 'stream_id' -%}
    {{ exceptions.raise_compiler_error("_stream_input_with: unknown key " ~ name ~ " (stream_value.yml lists the keys; "
        ~ "stream_id follows the epoch).") }}
  {%- endfor -%}
  {%- set epoch = changes.get('epoch', input.epoch) -%}
  {%- set changed = dict(changes, stream_id=dbt_tablestream._stream_app_id([input.stream], [epoch])
                                             if epoch is not none else none) -%}
  {{ return(dict(input, **changed)) }}
{% endmacro %}


{#-- What a model commits: its inputs, pinned once when it compiled, in one target commit that
     carries each input's marker, and one offsets-log INSERT that moves them all after it. The
     commit's SetTransaction app id names every input and its epoch, and its version is the sum of
     the inputs' window ends: it grows whenever any input moves, so Delta skips a window a
     concurrent run already committed. For one input the app id and the version are the input's
     own. Refuses one stream name read twice, and inputs of which only some start over. --#}
{% macro _stream_group(inputs) %}
  {%- set inputs = inputs | sort(attribute='stream') -%}
  {%- set names = inputs | map(attribute='stream') | list -%}
  {%- for name in names | unique if names.count(name) > 1 -%}
    {%- set windows = [] -%}
    {%- for input in inputs if input.stream == name -%}
      {%- do windows.append(dbt_tablestream._stream_input_window_text(input)) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " reads the stream " ~ name ~ " more than once, with different windows: "
        ~ windows | join('; ') ~ ". Each source_stream() or ref_stream() call is a stream of its own, named "
        ~ "<model>__<source>; a stream_name config names one stream, so leave it out of a model that reads several "
        ~ "sources, and read each source once (in a CTE). Nothing was written.") }}
  {%- endfor -%}
  {%- set restarting = inputs | selectattr('restart') | map(attribute='stream') | list -%}
  {%- if restarting and restarting | length < inputs | length -%}
    {%- set continuing = [] -%}
    {%- for input in inputs if not input.restart -%}
      {%- do continuing.append(input.stream ~ " (from version " ~ input.after ~ " of " ~ input.source ~ ")") -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " reads several streams, and " ~ restarting | join(', ') ~ " starts over (a first run "
        ~ "of a new input, a reset, or on_stale: resnapshot) while " ~ continuing | join(', ') ~ " continues. The "
        ~ "inputs of one model start over together, since the target is rebuilt from all of them. Nothing was written. "
        ~ "Run the model with --full-refresh, or reset each of its streams with dbt_tablestream.reset_stream.") }}
  {%- endif -%}
  {%- set ends = namespace(after=0, through=0) -%}
  {%- for input in inputs -%}
    {%- set ends.after = ends.after + (input.after | int) -%}
    {%- set ends.through = ends.through + (input.through | int) -%}
  {%- endfor -%}
  {%- set reading = inputs | rejectattr('view', 'none') | list -%}
  {{ return({
      'stream': names | join('+'),
      'stream_id': dbt_tablestream._stream_app_id(names, inputs | map(attribute='epoch') | map('string') | list),
      'inputs': inputs,
      'source': inputs | map(attribute='source') | join(', '),
      'after': ends.after,
      'through': ends.through,
      'restart': restarting | length > 0,
      'snapshot': inputs | selectattr('snapshot') | list | length > 0,
      'view': reading[0].view if reading else none,
  }) }}
{% endmacro %}

{#-- The streams a compiled model read (docs/architecture.md, "Several streams in one model"). --#}


{#-- What a stream materialization commits: the group (_stream_group) of the streams the model
     read, a group of one for one stream. Refuses a model that reads no stream. --#}
{% macro _stream_of_compiled_code(compiled_code) %}
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
  {{ return(dbt_tablestream._stream_group(streams)) }}
{% endmacro %}


{#-- A group's windows as messages name them: `window (a, b] of <source>` for one input, each
     input's, named, for several. --#}
{% macro _stream_window_text(stream) %}
  {%- set parts = [] -%}
  {%- for input in stream.inputs -%}
    {%- do parts.append((input.stream ~ ": " if stream.inputs | length > 1 else "")
        ~ dbt_tablestream._stream_input_window_text(input)) -%}
  {%- endfor -%}
  {{ return(parts | join('; ')) }}
{% endmacro %}


{#-- One input's window: `window (a, b] of <source>`. --#}
{% macro _stream_input_window_text(input) %}
  {{ return("window (" ~ input.after ~ ", " ~ input.through ~ "] of " ~ input.source) }}
{% endmacro %}

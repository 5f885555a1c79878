{#-- Validation of stream configs. Runs before any SQL; every error lists the accepted values. --#}

{% macro validate_stream_config() %}
  {%- set model_name = model.name if model is defined else this.identifier -%}
  {%- set mode = config.get('stream_mode', 'standard') -%}
  {%- set accepted_modes = ['standard', 'append_only'] -%}
  {%- if mode not in accepted_modes -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid stream_mode '" ~ mode ~ "'. Accepted values: " ~ accepted_modes | join(', ')) }}
  {%- endif -%}

  {%- set start_at = config.get('start_at', 'snapshot') -%}
  {%- set accepted_start = "snapshot, latest, earliest, {version: N}, {timestamp: 'ISO-8601'}" -%}
  {%- if start_at is mapping -%}
    {%- if start_at | length != 1 or (start_at.keys() | list)[0] not in ['version', 'timestamp'] -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid start_at " ~ start_at ~ ". Accepted values: " ~ accepted_start) }}
    {%- endif -%}
    {%- if 'version' in start_at and (start_at.version is not number or start_at.version < 0 or start_at.version != start_at.version | int) -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": start_at version must be a whole number >= 0, got " ~ start_at.version) }}
    {%- endif -%}
    {%- if 'timestamp' in start_at and start_at.timestamp is not string -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": start_at timestamp must be an ISO-8601 string in quotes, got " ~ start_at.timestamp) }}
    {%- endif -%}
  {%- elif start_at not in ['snapshot', 'latest', 'earliest'] -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid start_at '" ~ start_at ~ "'. Accepted values: " ~ accepted_start) }}
  {%- endif -%}

  {%- set stream_name = config.get('stream_name', none) -%}
  {%- if stream_name is not none and (stream_name is not string or not modules.re.fullmatch('[A-Za-z0-9_]+', stream_name)) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": stream_name '" ~ stream_name ~ "' must be letters, digits and underscores.") }}
  {%- endif -%}

  {%- set on_schema_change = config.get('on_schema_change', 'ignore') -%}
  {%- set accepted_changes = ['ignore', 'fail', 'append_new_columns', 'sync_all_columns'] -%}
  {%- if on_schema_change not in accepted_changes -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid on_schema_change '" ~ on_schema_change ~ "'. Accepted values: " ~ accepted_changes | join(', ')) }}
  {%- endif -%}
{% endmacro %}

{#-- Fails for each stream writing into the model that is more than max_versions source versions
     or max_age (seconds, or '30 minutes', '2 hours', '1 day') behind its source. --#}
{% test stream_lag(model, max_versions=none, max_age=none) %}
  {%- if max_versions is none and max_age is none -%}
    {{ exceptions.raise_compiler_error("stream_lag on " ~ model ~ ": set max_versions, max_age, or both.") }}
  {%- endif -%}
  {{ dbt_tablestream._stream_test_failures(model, 'lag', max_versions, dbt_tablestream._seconds_of(max_age)) }}
{% endtest %}

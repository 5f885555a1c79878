{#-- Fails for each stream writing into the model whose next run could not read its window: the
     source vacuumed or log-cleaned past its offset, recreated, missing, or its change feed off.
     `warn_within` ('2 days', or seconds): also warns for each stream that goes stale sooner than
     that if it is not run (its oldest unconsumed change passes the source's file retention). A
     failing row's `severity` says which; the test fails on an `error` row and warns on a `warn` one. --#}
{% test stream_not_stale(model, warn_within=none) %}
  {%- if warn_within is not none -%}
    {{ config(fail_calc="coalesce(max(case when severity = 'error' then 2 else 1 end), 0)",
              warn_if='>= 1', error_if='>= 2') }}
  {%- endif -%}
  {{ dbt_tablestream._stream_test_failures(model, 'stale', warn_within=warn_within) }}
{% endtest %}

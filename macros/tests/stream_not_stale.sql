{#-- Fails for each stream writing into the model whose next run could not read its window: the
     source vacuumed or log-cleaned past its offset, recreated, missing, or its change feed off. --#}
{% test stream_not_stale(model) %}
  {{ dbt_tablestream.stream_test_failures(model, 'stale') }}
{% endtest %}

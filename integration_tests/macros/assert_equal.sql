{#-- Rows of `actual` and `expected` that the other lacks, counting duplicates (EXCEPT ALL both ways). --#}
{% test equals_expected(model, expected) %}
(select * from {{ model }} except all select * from {{ expected }})
union all
(select * from {{ expected }} except all select * from {{ model }})
{% endtest %}


{#-- The model's rows against the expected seed's rows of the current step (var integration_step),
     on `columns`: each differing row once per copy, marked 'unexpected' (in the model only) or
     'missing' (in the seed only). `model_columns` (default `columns`) are the model's side, as
     expressions named like the seed's columns, for values that differ run to run (timestamps). --#}
{% test equals_expected_at_step(model, expected, columns, model_columns=none) %}
{%- set listed = columns | join(', ') -%}
{%- set model_listed = (model_columns or columns) | join(', ') -%}
{%- set step = var('integration_step', 0) -%}
select 'unexpected' as __side, * from (
  select {{ model_listed }} from {{ model }}
  except all
  select {{ listed }} from {{ expected }} where step = {{ step }}
) as __unexpected
union all
select 'missing' as __side, * from (
  select {{ listed }} from {{ expected }} where step = {{ step }}
  except all
  select {{ model_listed }} from {{ model }}
) as __missing
{% endtest %}

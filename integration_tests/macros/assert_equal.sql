{#-- Rows of `actual` and `expected` that the other lacks, counting duplicates (EXCEPT ALL both ways). --#}
{% test equals_expected(model, expected) %}
(select * from {{ model }} except all select * from {{ expected }})
union all
(select * from {{ expected }} except all select * from {{ model }})
{% endtest %}


{#-- The model's rows against the expected seed's rows of the current step (var integration_step),
     on `columns`: each differing row once per copy, marked 'unexpected' (in the model only) or
     'missing' (in the seed only). `model_columns` (default `columns`) are the model's side, as
     expressions named like the seed's columns, for values that differ run to run (timestamps).
     One aggregate over both sides (each row counted +1 in the model, -1 in the seed) where two
     EXCEPT ALLs would scan each side twice: the suite runs this test for every model at every step. --#}
{% test equals_expected_at_step(model, expected, columns, model_columns=none) %}
{%- set listed = columns | join(', ') -%}
{%- set model_listed = (model_columns or columns) | join(', ') -%}
{%- set step = var('integration_step', 0) -%}
select case when __copies > 0 then 'unexpected' else 'missing' end as __side, {{ listed }}
from (
  select {{ listed }}, sum(__copy) as __copies
  from (
    select {{ model_listed }}, 1 as __copy from {{ model }}
    union all
    select {{ listed }}, -1 as __copy from {{ expected }} where step = {{ step }}
  ) as __both
  group by {{ listed }}
  having sum(__copy) <> 0
) as __differing
lateral view explode(sequence(1, abs(__copies))) __copy_numbers as __copy_number
{% endtest %}

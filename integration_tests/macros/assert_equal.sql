{#-- Rows of `actual` and `expected` that the other lacks, counting duplicates (EXCEPT ALL both ways). --#}
{% test equals_expected(model, expected) %}
(select * from {{ model }} except all select * from {{ expected }})
union all
(select * from {{ expected }} except all select * from {{ model }})
{% endtest %}

{#-- bench/aggregate.py: the same GROUP BY as a table model, rebuilt every run. --#}
{{ config(materialized='table') }}
select customer_id, count(*) as orders, sum(amount) as revenue, count(paid_at) as paid_orders,
  avg(amount) as avg_amount, min(ordered_at) as first_order, max(ordered_at) as last_order
from {{ source('app', 'orders') }}
group by customer_id

{{ config(materialized='table') }}

select
    status_label,
    count(*) as orders,
    cast(sum(amount) as decimal(12, 2)) as amount
from {{ ref('orders_enriched') }}
group by status_label

{{ config(materialized='table') }}

-- Every status an order has had, in order, from the change log.
select
    order_id,
    status,
    min(__commit_version) as since_version
from {{ ref('orders_changes') }}
where __change_type in ('INSERT', 'UPDATE_AFTER')
group by order_id, status

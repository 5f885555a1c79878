select
    o.order_id,
    o.customer,
    o.amount,
    o.status,
    s.label as status_label,
    s.is_open
from {{ source('app', 'orders') }} as o
left join {{ ref('order_statuses') }} as s using (status)

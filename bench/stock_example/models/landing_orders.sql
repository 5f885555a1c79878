{#-- The records of the landing folder's current files. --#}
select l.relative_path, r.order_id, r.customer, r.amount
from {{ ref('landing_loaded') }} as l
lateral view explode(l.records) exploded as r

{#-- A stream_view: each order with the US account of the same number, NULL where there is none.
     Both sources change at every step: orders move in and out, accounts are renamed, deleted and
     added, so rows turn between matched and NULL-extended. --#}
{{ config(materialized='stream_view', unique_key='order_id') }}
select o.order_id, o.amount, o.status, a.name as account_name, a.balance
from {{ source('it', 'orders') }} as o
left join {{ source('it', 'accounts') }} as a on a.account_id = o.order_id and a.region = 'us'

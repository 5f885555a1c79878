{#-- The last change per order wins; a delete is kept as a soft-delete flag. --#}
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id') }}

select order_id, customer, amount, status, __commit_version, __change_type = 'DELETE' as is_deleted
from (
  select *, row_number() over (partition by order_id order by __commit_version desc,
    case __change_type when 'UPDATE_BEFORE' then 0 else 1 end desc) as change_rank
  from ({{ change_rows(source('app', 'orders'), 'order_id, customer, amount, status') }}) as changes
  where __change_type <> 'UPDATE_BEFORE'
) as ranked
where change_rank = 1

{#-- Per status and order_id parity; large_amount is NULL below 40, for count(col). --#}
{{ config(
    materialized='stream_aggregate',
    group_by=['status', 'parity'],
    aggregates={'orders': 'count(*)', 'large_orders': 'count(large_amount)', 'revenue': 'sum(amount)',
                'mean_amount': 'avg(amount)', 'smallest': 'min(amount)', 'largest': 'max(amount)'},
) }}
select status, order_id % 2 as parity, amount, case when amount >= 40 then amount end as large_amount, __change_type
from {{ dbt_tablestream.source_stream('it', 'orders') }}

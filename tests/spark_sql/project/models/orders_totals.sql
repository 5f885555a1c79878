{{ config(
    materialized='stream_aggregate',
    group_by=['customer', 'status'],
    aggregates={'orders': 'count(*)', 'priced_orders': 'count(amount)', 'revenue': 'sum(amount)',
                'mean_amount': 'avg(amount)', 'smallest': 'min(amount)', 'largest': 'max(amount)'},
) }}

select customer, status, amount, __change_type
from {{ dbt_tablestream.source_stream('app', 'orders') }}

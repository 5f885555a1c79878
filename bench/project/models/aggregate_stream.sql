{#-- bench/aggregate.py: the customers' totals kept from a stream. --#}
{{ config(materialized='stream_aggregate', group_by='customer_id',
          aggregates={'orders': 'count(*)', 'revenue': 'sum(amount)', 'paid_orders': 'count(paid_at)',
                      'avg_amount': 'avg(amount)', 'first_order': 'min(ordered_at)', 'last_order': 'max(ordered_at)'}) }}
select customer_id, amount, paid_at, ordered_at, __change_type
from {{ dbt_tablestream.source_stream('app', 'orders') }}

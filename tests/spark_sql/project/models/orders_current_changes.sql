{{ config(materialized='stream_merge', unique_key='order_id', stream_read='changelog', spark_net_changes=true) }}

select order_id, customer, amount, status, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'orders') }}

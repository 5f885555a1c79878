{{ config(materialized='table_stream') }}

select order_id, customer, amount, status, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}

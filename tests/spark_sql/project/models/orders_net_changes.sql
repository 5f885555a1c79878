{{ config(materialized='table_stream', unique_key='order_id', start_at='earliest') }}

select order_id, status, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'orders') }}

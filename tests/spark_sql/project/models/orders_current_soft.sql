{{ config(
    materialized='stream_merge',
    unique_key=['order_id', 'customer'],
    delete_mode='soft',
    merge_update_columns=['amount', 'status'],
    start_at='earliest',
) }}

select order_id, customer, amount, status, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}

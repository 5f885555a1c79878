{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    delete_mode='ignore',
    merge_exclude_columns=['customer'],
    start_at={'version': 5},
    stream_mode='append_only',
) }}

select order_id, customer, amount, status, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'orders') }}

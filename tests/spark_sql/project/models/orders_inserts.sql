{{ config(materialized='table_stream', stream_mode='append_only', start_at='latest', stream_name='new_orders') }}

select order_id, amount, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}
where amount > 0

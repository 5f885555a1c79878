{{ config(materialized='stream_merge', unique_key='order_id', delete_mode='ignore', merge_exclude_columns=['customer']) }}
select order_id, customer, amount, status, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'orders') }}

{{ config(materialized='table_stream', stream_mode='append_only') }}
select order_id, customer, amount, status, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'orders') }}

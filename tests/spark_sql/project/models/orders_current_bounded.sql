{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    start_at='earliest',
    max_versions_per_run=3,
) }}

select order_id, customer, amount, status, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'orders') }}

{{ config(materialized='table_stream', start_at={'timestamp': '2026-11-01T00:00:00Z'}) }}

select order_id, status, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}

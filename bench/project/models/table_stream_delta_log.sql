{{ config(materialized='table_stream', start_at='latest', stream_read='delta_log') }}
select id, category, amount, updated_at, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'src') }}

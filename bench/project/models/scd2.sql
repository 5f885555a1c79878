{{ config(materialized='stream_merge', unique_key='id', scd_type=2) }}
select id, category, amount, updated_at, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'src') }}

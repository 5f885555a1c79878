{{ config(materialized='table_stream') }}

select id, grp, name, amount, batch, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'src') }}

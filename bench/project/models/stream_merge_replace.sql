{#-- stream_merge replacing each window's keys (merge_write: replace_where), the write a spread-out
     window got under merge_write auto before the target was rewritten from itself: today's
     write beside the kept one (--scale). --#}
{{ config(materialized='stream_merge', unique_key='id', merge_write='replace_where') }}
select id, category, amount, updated_at, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'src') }}

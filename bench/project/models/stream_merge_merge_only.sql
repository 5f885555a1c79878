{#-- stream_merge writing every window with one MERGE (merge_write: merge), as every run did before
     a window's write was chosen per window: the old MERGE beside the kept writes (--scale). --#}
{{ config(materialized='stream_merge', unique_key='id', merge_write='merge') }}
select id, category, amount, updated_at, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'src') }}

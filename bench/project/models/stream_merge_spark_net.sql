{#-- stream_merge reading Delta's changelog with Spark netting each row's changes first
     (deduplicationMode = 'netChanges'; bench/run.py --changes). --#}
{{ config(materialized='stream_merge', unique_key='id', stream_read='changelog', spark_net_changes=true) }}
select id, category, amount, updated_at, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'src') }}

{#-- stream_merge reading Delta's changelog (Spark 4.2's CHANGES clause over row tracking), netted
     by the package as stream_merge's change-feed read is (bench/run.py --changes). --#}
{{ config(materialized='stream_merge', unique_key='id', stream_read='changelog') }}
select id, category, amount, updated_at, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'src') }}

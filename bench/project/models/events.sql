{{ config(materialized='stream_merge', unique_key='id', sequence_by='seq', apply_as_deletes="op = 'd'", target_exclude_columns=['op']) }}
select id, op, seq, category, amount, __change_type
from {{ dbt_tablestream.source_stream('app', 'events') }}

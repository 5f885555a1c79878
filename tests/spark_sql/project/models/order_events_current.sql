{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    sequence_by=['event_ts', 'lsn'],
    apply_as_deletes="op = 'd'",
    ignore_null_updates=['status'],
    target_exclude_columns=['op'],
) }}

select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'order_events') }}

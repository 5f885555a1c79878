-- One row per order from the events of app.order_events: per order the event with the greatest
-- seq wins, whatever order the events arrived in; a late or redelivered event changes nothing;
-- a deleted order stays deleted unless a newer event comes (README, "CDC event sources").
{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    meta={
        'sequence_by': 'seq',
        'apply_as_deletes': "op = 'd'",
        'ignore_null_updates': ['amount'],
        'target_exclude_columns': ['op'],
    },
) }}

select order_id, op, seq, status, amount, __change_type
from {{ dbt_tablestream.source_stream('app', 'order_events') }}

{#-- A CDC event source: per key the event with the greatest lsn wins, late and redelivered events
     change nothing, and a delete's tombstone keeps an older event from bringing the key back. --#}
{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    sequence_by='lsn',
    apply_as_deletes="op = 'd'",
    target_exclude_columns=['op'],
) }}
select order_id, op, lsn, amount, status, __change_type from {{ dbt_tablestream.source_stream('it', 'order_events') }}

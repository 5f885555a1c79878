{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    scd_type=2,
    track_history_columns=['status'],
    hard_deletes='new_record',
) }}

select * from {{ dbt_tablestream.source_stream('app', 'orders') }}

{#-- SCD type 2 from the change feed: a change of status opens a version, other changes update the
     current one in place, a delete opens a dbt_is_deleted row. --#}
{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    scd_type=2,
    track_history_columns=['status'],
    hard_deletes='new_record',
) }}
select order_id, customer, amount, status, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('it', 'orders') }}

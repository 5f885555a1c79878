-- Every version of every order, as an SCD type 2 history from the orders stream (README, "History
-- from a stream"): a status change opens a version dated by its commit, even when an order changed
-- several times between two builds; other changes update the version in place; a delete closes the
-- order's version and opens a deletion record (dbt_is_deleted), as dbt snapshots' new_record does.
{{ config(
    materialized='stream_merge',
    unique_key='order_id',
    meta={'scd_type': 2, 'track_history_columns': ['status'], 'hard_deletes': 'new_record'},
) }}

select order_id, customer, amount, status, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}

{{ config(
    materialized='table_stream',
    start_at={'version': 3},
    partition_by=['status'],
    tblproperties={'delta.enableChangeDataFeed': 'true'},
    on_schema_change='append_new_columns',
) }}

select order_id, customer, amount, status, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}

{#-- The orders change log: every insert, update and delete of app.orders, appended once.
     The first run starts from a snapshot of the orders (as INSERT rows); each later run appends
     only what changed since the previous successful run. --#}
{{ config(materialized='table_stream') }}

select
    order_id,
    customer,
    amount,
    status,
    __change_type,
    __commit_version,
    __commit_timestamp
from {{ dbt_tablestream.source_stream('app', 'orders') }}

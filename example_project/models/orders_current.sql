{#-- The current state of every order, kept by MERGEing the orders stream's net changes:
     inserts and updates upsert the order, deletes remove it. Exactly once per change. --#}
{{ config(materialized='stream_merge', unique_key='order_id') }}

select order_id, customer, amount, status, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'orders') }}

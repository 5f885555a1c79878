{#-- A stream of a stream: the net changes orders_current applied. --#}
{{ config(materialized='table_stream') }}
select order_id, customer, amount, status, __change_type, __commit_version from {{ dbt_tablestream.ref_stream('orders_current') }}

{#-- Version 1 is step 0's insert: the stream starts with the changes after it. --#}
{{ config(materialized='table_stream', start_at={'version': 1}) }}
select order_id, customer, amount, status, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'orders') }}

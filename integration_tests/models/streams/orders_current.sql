{{ config(materialized='stream_merge', unique_key='order_id', tblproperties={'delta.enableChangeDataFeed': 'true'}) }}
select order_id, customer, amount, status, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'orders') }}

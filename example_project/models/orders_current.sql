{{ config(materialized='incremental', unique_key='order_id', incremental_strategy='merge') }}

select order_id, customer, amount, status
from {{ source('app', 'orders') }}

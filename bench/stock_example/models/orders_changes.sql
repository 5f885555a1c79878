{{ config(materialized='incremental', incremental_strategy='append') }}

{{ change_rows(source('app', 'orders'), 'order_id, customer, amount, status') }}

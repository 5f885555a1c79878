{{ config(materialized='table') }}
select id, category, amount, updated_at from {{ source('app', 'export') }}

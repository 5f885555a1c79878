{{ config(materialized='table') }}

select id, grp, name, amount, batch from {{ source('app', 'src') }}

{{ config(materialized='snapshot_mirror', unique_key='id') }}
select id, category, amount, updated_at from {{ source('app', 'export') }}

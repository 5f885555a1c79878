{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, category, amount, updated_at from {{ source('app', 'src') }}
{% if is_incremental() %}
where updated_at > (select coalesce(max(updated_at), timestamp '1900-01-01') from {{ this }})
{% endif %}

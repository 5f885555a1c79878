{#-- The stock watermark pattern: rows whose batch is newer than the target's newest. It never
     sees deletes, which is part of why streams exist. --#}
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}

select id, grp, name, amount, batch from {{ source('app', 'src') }}
{% if is_incremental() %}
where batch > (select coalesce(max(batch), -1) from {{ this }})
{% endif %}

{#-- Files that arrived or were replaced since the last run (a stock incremental cannot see removals). --#}
{{ config(materialized='incremental', incremental_strategy='append') }}

select relative_path, size, modified_at from {{ ref('landing_files') }}
{% if is_incremental() %}
where modified_at > (select coalesce(max(modified_at), timestamp '1900-01-01') from {{ this }})
{% endif %}

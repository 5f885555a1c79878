{{ config(materialized='incremental', incremental_strategy='merge', unique_key='relative_path') }}

select _metadata.file_name as relative_path, max(_metadata.file_modification_time) as modified_at,
  collect_list(struct(order_id, customer, amount)) as records
from json.`{{ var('landing') }}/*.json`
{% if is_incremental() %}
where _metadata.file_modification_time > (select coalesce(max(modified_at), timestamp '1900-01-01') from {{ this }})
{% endif %}
group by _metadata.file_name

{#-- The landing folder loaded incrementally: each run reads only the files that arrived or were
     replaced since the last one, and a removed file's rows go with it. One row per current file,
     holding its records; landing_orders flattens them. --#}
{{ config(materialized='stream_merge', unique_key='relative_path') }}

{%- set events = dbt_tablestream.ref_stream('landing_files') %}
select e.relative_path, e.fingerprint, f.records, e.__change_type, e.__commit_version, e.__commit_timestamp
from {{ events }} as e
left join (
  select relative_path, collect_list(struct(order_id, customer, amount)) as records
  from ({{ dbt_tablestream.stream_file_rows(events, {'order_id': 'bigint', 'customer': 'string', 'amount': 'double'}) }}) as r
  group by relative_path
) as f on f.relative_path = e.relative_path and e.__change_type in ('INSERT', 'UPDATE_AFTER')

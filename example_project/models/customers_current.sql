{#-- The customers, kept by a stream on the mirror: each run MERGEs only the export's real changes. --#}
{{ config(materialized='stream_merge', unique_key='customer_id') }}
select customer_id, name, segment, __change_type, __commit_version
from {{ dbt_tablestream.ref_stream('customers_mirror') }}

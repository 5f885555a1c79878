{#-- A Delta copy of the nightly export with the change data feed on: each run's one MERGE writes
     only the customers that were added, changed or removed since the last export, so an unchanged
     reload commits nothing and streams read the mirror as any Delta table. --#}
{{ config(materialized='snapshot_mirror', unique_key='customer_id', meta={'delete_mode': 'hard'}) }}
select customer_id, name, segment from {{ ref('customers_export') }}

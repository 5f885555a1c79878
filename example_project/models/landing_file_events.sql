{#-- Every file event the landing folder had, as a change log (a volume stream). --#}
{{ config(materialized='table_stream') }}

select relative_path, size, fingerprint, __change_type, __commit_version, __commit_timestamp
from {{ dbt_tablestream.ref_stream('landing_files') }}

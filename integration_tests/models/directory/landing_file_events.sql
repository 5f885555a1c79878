{#-- The file events of landing_files: an arrival, a replacement (delete and insert: a rewritten
     folder's file has a new name), a vanished file. --#}
{{ config(materialized='table_stream', enabled=var('integration_directory', none) is not none) }}
select relative_path, size, __change_type, __commit_version from {{ dbt_tablestream.ref_stream('landing_files') }}

{#-- Refused once the refusal phase drops the source and creates it again. --#}
{{ config(materialized='stream_merge', unique_key='id', tags=['refusal']) }}
select id, name, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'recreated') }}

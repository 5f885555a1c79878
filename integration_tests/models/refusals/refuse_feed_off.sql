{#-- Refused once the refusal phase turns the source's change feed off and changes it. --#}
{{ config(materialized='table_stream', tags=['refusal']) }}
select id, name, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'feed_off') }}

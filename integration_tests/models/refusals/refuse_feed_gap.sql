{#-- Refused once the refusal phase turns the source's change feed off, changes it, and turns the
     feed on again: the change made in between was never recorded. --#}
{{ config(materialized='stream_merge', unique_key='id', tags=['refusal']) }}
select id, name, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'feed_gap') }}

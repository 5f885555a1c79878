{#-- stream_merge with deletion vectors on its target: a MERGE marks changed rows in a small vector
     file instead of copying the rest of each touched file. Readers need Delta reader version 3
     (delta-rs cannot read such a table today). --#}
{{ config(materialized='stream_merge', unique_key='id', tblproperties={'delta.enableDeletionVectors': 'true'}) }}
select id, category, amount, updated_at, __change_type, __commit_version
from {{ dbt_tablestream.source_stream('app', 'src') }}

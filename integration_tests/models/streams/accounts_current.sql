{{ config(materialized='stream_merge', unique_key=['region', 'account_id'], merge_update_columns=['balance']) }}
select region, account_id, name, balance, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'accounts') }}

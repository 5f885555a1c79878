{#-- Always refused: stream_mode has no value 'sometimes'. Left out of the steps' builds. --#}
{{ config(materialized='table_stream', stream_mode='sometimes', tags=['refusal', 'bad_config']) }}
select order_id, status, __change_type, __commit_version from {{ dbt_tablestream.source_stream('it', 'orders') }}

{#-- The incremental model Databricks users write over the change feed: the next version is one past
     the highest _commit_version the target holds, the last change per key wins, and a delete is
     kept as a soft-delete flag. The latest version is read first, because table_changes refuses a
     start beyond it. --#}
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
{%- set start_version = 0 -%}
{%- set latest_version = 0 -%}
{%- if execute -%}
  {%- set latest_version = run_query("describe history " ~ source('app', 'src') ~ " limit 1").columns[0].values()[0] -%}
  {%- if is_incremental() -%}
    {%- set start_version = run_query("select coalesce(max(_commit_version), -1) + 1 from " ~ this).columns[0].values()[0] -%}
  {%- endif -%}
{%- endif -%}
{%- set nothing_new = start_version > latest_version -%}
with changes as (
  select id, category, amount, updated_at, _change_type, _commit_version,
    row_number() over (partition by id order by _commit_version desc,
      case _change_type when 'update_preimage' then 0 else 1 end desc) as change_rank
  from table_changes('{{ source('app', 'src') }}', {{ latest_version if nothing_new else start_version }}, {{ latest_version }})
  where _change_type <> 'update_preimage'{% if nothing_new %} and false{% endif %}
)
select id, category, amount, updated_at, _commit_version, _change_type = 'delete' as is_deleted
from changes
where change_rank = 1

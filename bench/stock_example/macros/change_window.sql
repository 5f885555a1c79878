{#-- The change-feed window of a stock incremental: from one past the highest _commit_version the
     target holds to the source's latest version. `nothing_new` when the target is at the latest
     version, because table_changes refuses a start beyond it; `start` is none on a first build,
     which reads the source's current rows instead. --#}
{% macro change_window(relation) %}
  {%- set window = {'start': none, 'latest': 0, 'nothing_new': false} -%}
  {%- if execute -%}
    {%- do window.update({'latest': run_query("describe history " ~ relation ~ " limit 1").columns[0].values()[0] | int}) -%}
    {%- if is_incremental() -%}
      {%- set start = run_query("select coalesce(max(__commit_version), -1) + 1 from " ~ this).columns[0].values()[0] | int -%}
      {%- do window.update({'start': start, 'nothing_new': start > window.latest}) -%}
    {%- endif -%}
  {%- endif -%}
  {{ return(window) }}
{% endmacro %}


{#-- The window's change rows with the package's column names, or the current rows as INSERTs on a
     first build. --#}
{% macro change_rows(relation, columns) %}
  {%- set window = change_window(relation) -%}
  {%- if window.start is none -%}
select {{ columns }}, 'INSERT' as __change_type, cast({{ window.latest }} as bigint) as __commit_version,
  current_timestamp() as __commit_timestamp
from {{ relation }} version as of {{ window.latest }}
  {%- else -%}
select {{ columns }},
  case _change_type when 'insert' then 'INSERT' when 'update_preimage' then 'UPDATE_BEFORE'
    when 'update_postimage' then 'UPDATE_AFTER' else 'DELETE' end as __change_type,
  _commit_version as __commit_version, _commit_timestamp as __commit_timestamp
from table_changes('{{ relation }}', {{ window.latest if window.nothing_new else window.start }}, {{ window.latest }})
{%- if window.nothing_new %}
where false
{%- endif %}
  {%- endif -%}
{% endmacro %}

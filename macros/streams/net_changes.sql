{% macro net_changes_sql(sql, keys, columns, touched_deletes=false) %}
  {{ return(adapter.dispatch('net_changes_sql', 'dbt_tablestream')(sql, keys, columns, touched_deletes)) }}
{% endmacro %}


{#-- Net changes per key (docs/architecture.md, "The layers"; Spark 4.2's netChanges): a key's
     changes are ordered by __commit_version, then pre-images before post-images. Its first row is
     its state before the window, its last row its state after:
       absent -> present: one INSERT with the final values
       present -> present: the first UPDATE_BEFORE and the last UPDATE_AFTER
       present -> absent: one DELETE with the original values
       absent -> absent (inserted and deleted in the window): nothing, or with `touched_deletes`
         one DELETE with the last values
     So at most one post-image and one pre-image meet each key. The post-images and deletes come
     from one select, so a MERGE, which drops the pre-images, computes the windows once.
     `touched_deletes` (the reapply protocol, docs/architecture.md): a window applied again after
     a lost offsets row may find a key that the first application inserted; its DELETE leaves
     every key the window touched as the window's end has it. --#}
{% macro spark__net_changes_sql(sql, keys, columns, touched_deletes=false) %}
  {%- set key_list = [] -%}
  {%- for key in keys -%}{%- do key_list.append(dbt_tablestream._sql_identifier(key)) -%}{%- endfor -%}
  {%- set key_list = key_list | join(', ') -%}
  {%- set data_columns = [] -%}
  {%- for column in columns if column != '__change_type' -%}
    {%- do data_columns.append(dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- set data_columns = data_columns | join(', ') -%}
  {%- set window_all = "partition by " ~ key_list ~ " order by __commit_version, __tablestream_rank"
                       ~ " rows between unbounded preceding and unbounded following" -%}
  {%- set sql_out -%}
with __tablestream_changes as (
  select *, case when __change_type in ('DELETE', 'UPDATE_BEFORE') then 0 else 1 end as __tablestream_rank
  from ({{ sql }}) as __tablestream_model
), __tablestream_ordered as (
  select *,
    row_number() over (partition by {{ key_list }} order by __commit_version, __tablestream_rank)
      as __tablestream_first,
    row_number() over (partition by {{ key_list }} order by __commit_version desc, __tablestream_rank desc)
      as __tablestream_last,
    first_value(__change_type) over ({{ window_all }}) in ('UPDATE_BEFORE', 'DELETE', 'UPDATE_AFTER')
      as __tablestream_existed,
    last_value(__change_type) over ({{ window_all }}) in ('INSERT', 'UPDATE_AFTER') as __tablestream_exists
  from __tablestream_changes
)
select {{ data_columns }}, 'UPDATE_BEFORE' as __change_type from __tablestream_ordered
where __tablestream_first = 1 and __tablestream_existed and __tablestream_exists
  and __change_type in ('UPDATE_BEFORE', 'DELETE')
union all
select {{ data_columns }},
  case when not __tablestream_exists then 'DELETE' when __tablestream_existed then 'UPDATE_AFTER' else 'INSERT' end
    as __change_type
from __tablestream_ordered
where (__tablestream_last = 1 and __tablestream_exists)
  or (__tablestream_first = 1 and __tablestream_existed and not __tablestream_exists)
  {%- if touched_deletes %}
  or (__tablestream_last = 1 and not __tablestream_existed and not __tablestream_exists)
  {%- endif %}
  {%- endset -%}
  {{ return(sql_out) }}
{% endmacro %}

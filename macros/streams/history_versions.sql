{% macro history_versions_sql(sql, keys, columns, data_columns, history, events=none, current=none,
                              drop_applied=false) %}
  {{ return(adapter.dispatch('history_versions_sql', 'dbt_tablestream')(
      sql, keys, columns, data_columns, history, events, current, drop_applied)) }}
{% endmacro %}


{#-- The versions a window adds to an SCD type 2 history (`scd_type: 2`; docs/architecture.md,
     "History"): the stream_merge counterpart of net_changes_sql when a target keeps every change.

     Every change row but a pre-image is an event at a time: its __commit_timestamp, or its
     `sequence_by` column. Per key and time only the last event counts (a delete and an insert in
     one commit, as an overwrite writes them, are one upsert; a redelivered event is one event).
     The events are not netted: each one that changes a tracked column opens a version, in order.

     `current` is the target (none on a first run or a reset). Its open row per key of the window
     is the state before the window, so the window's first event is compared with it; with
     `sequence_by`, events at or before what the key's history already holds are late and dropped
     (the history's last time per key is its tombstone, so a late event cannot revive a deleted key).
     `drop_applied` drops them without `sequence_by` too, by commit timestamp (Delta's are strictly
     increasing from version to version): under the reapply protocol a window may be applied
     again, and its changes already in the history must not open versions twice.

     A key's timeline (its open row, then its events) splits into groups, each starting where:
       - an upsert follows nothing, a delete, or a row with other tracked values: a new version;
       - a delete follows a live row: the version is closed (and, with hard_deletes new_record, a
         deletion record opens; with invalidate the group only closes).
     Upserts that change only untracked columns stay in their version's group and update it in
     place (its last values, and dbt_updated_at at the last of them). A group's dbt_valid_to is the
     next group's dbt_valid_from. The open row keeps its dbt_scd_id; a new version's is a hash of
     its key and dbt_valid_from. An open row that the window leaves as it was is not returned, so
     the MERGE rewrites no file for it. --#}
{% macro spark__history_versions_sql(sql, keys, columns, data_columns, history, events=none, current=none,
                                     drop_applied=false) %}
  {%- set sequence = events['sequence'] if events else [] -%}
  {%- set at = dbt_tablestream._sql_identifier(sequence[0]) if sequence else '__commit_timestamp' -%}
  {%- set new_record = history['hard_deletes'] == 'new_record' -%}
  {%- set key_list = dbt_tablestream._quoted_columns(keys) -%}
  {%- set data_list = dbt_tablestream._quoted_columns(data_columns) -%}
  {%- set partition = 'partition by ' ~ key_list -%}
  {%- set timeline = partition ~ ' order by __tablestream_stored desc, __tablestream_at' -%}
  {%- set order_fields = [] -%}
  {%- if '__commit_version' in columns -%}{%- do order_fields.append("'v', __commit_version") -%}{%- endif -%}
  {#-- In one commit a delete comes before an insert; among equal sequences a delete wins, as in
       sequenced_changes_sql. Then a hash of the row, so ties resolve the same way on every run. --#}
  {%- do order_fields.append("'d', " ~ ("__tablestream_delete" if sequence else "not __tablestream_delete")) -%}
  {%- do order_fields.append("'h', xxhash64(" ~ dbt_tablestream._quoted_columns(data_columns) ~ ")") -%}
  {%- set struct_of = dbt_tablestream._history_struct -%}
  {%- set tracked = struct_of(history['tracked']) -%}
  {%- set sql_out -%}
with __tablestream_events as (
  select {{ data_list }}{{ ', __commit_version' if '__commit_version' in columns else '' }},
    {{ at }} as __tablestream_at,
    __change_type = 'DELETE'
    {%- if events and events['deletes'] %} or coalesce(({{ events['deletes'] }}), false)
    {%- endif %} as __tablestream_delete
  from ({{ sql }}) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_points as (
  select * from (
    select *,
      row_number() over ({{ partition }}, __tablestream_at order by named_struct({{ order_fields | join(', ') }}) desc)
        as __tablestream_last
    from __tablestream_events
    {%- if history['hard_deletes'] == 'ignore' %}
    where not __tablestream_delete
    {%- endif %}
  ) as __tablestream_ranked
  where __tablestream_last = 1
{%- if current is not none %}
), __tablestream_window_keys as (
  select distinct {{ key_list }} from __tablestream_points
  {%- if sequence or drop_applied %}
), __tablestream_applied as (
  select {{ dbt_tablestream._prefixed_columns(keys, '__tablestream_history') }},
    max(coalesce(__tablestream_history.dbt_valid_to, __tablestream_history.dbt_updated_at)) as __tablestream_applied_at
  from {{ current }} as __tablestream_history
  left semi join __tablestream_window_keys
    on {{ dbt_tablestream._keys_match(keys, '__tablestream_history', '__tablestream_window_keys') }}
  group by {{ dbt_tablestream._prefixed_columns(keys, '__tablestream_history') }}
  {%- endif %}
{%- endif %}
), __tablestream_timeline as (
  select {{ dbt_tablestream._prefixed_columns(data_columns, '__tablestream_point') }},
    __tablestream_point.__tablestream_at,
    __tablestream_point.__tablestream_delete, false as __tablestream_stored,
    __tablestream_point.__tablestream_at as __tablestream_start, cast(null as string) as __tablestream_scd_id
  from __tablestream_points as __tablestream_point
  {%- if current is not none and (sequence or drop_applied) %}
  left join __tablestream_applied
    on {{ dbt_tablestream._keys_match(keys, '__tablestream_applied', '__tablestream_point') }}
  where __tablestream_applied.__tablestream_applied_at is null
    or __tablestream_point.__tablestream_at > __tablestream_applied.__tablestream_applied_at
  {%- endif %}
  {%- if current is not none %}
  union all
  select {{ dbt_tablestream._prefixed_columns(data_columns, '__tablestream_open') }}, __tablestream_open.dbt_updated_at,
    {{ '__tablestream_open.dbt_is_deleted' if new_record else 'false' }}, true,
    __tablestream_open.dbt_valid_from, __tablestream_open.dbt_scd_id
  from {{ current }} as __tablestream_open
  left semi join __tablestream_window_keys
    on {{ dbt_tablestream._keys_match(keys, '__tablestream_open', '__tablestream_window_keys') }}
  where __tablestream_open.dbt_valid_to is null
  {%- endif %}
), __tablestream_compared as (
  select *,
    row_number() over ({{ timeline }}) as __tablestream_position,
    lag(__tablestream_delete) over ({{ timeline }}) as __tablestream_after_delete,
    lag({{ tracked }}) over ({{ timeline }}) <=> {{ tracked }} as __tablestream_same,
    lag({{ struct_of(data_columns) }}) over ({{ timeline }}) as __tablestream_before
  from __tablestream_timeline
), __tablestream_grouped as (
  select *,
    sum(case when __tablestream_stored
               or (not __tablestream_delete
                   and (__tablestream_after_delete is null or __tablestream_after_delete or not __tablestream_same))
               or (__tablestream_delete and not coalesce(__tablestream_after_delete, true))
             then 1 else 0 end)
      over ({{ partition }} order by __tablestream_position rows between unbounded preceding and current row)
      as __tablestream_group
  from __tablestream_compared
), __tablestream_groups as (
  select {{ key_list }}, __tablestream_group,
    min_by(__tablestream_delete, __tablestream_position) as __tablestream_deletion,
    min_by(__tablestream_stored, __tablestream_position) as __tablestream_stored,
    min_by(__tablestream_scd_id, __tablestream_position) as __tablestream_scd_id,
    count(*) as __tablestream_events,
    min_by(__tablestream_start, __tablestream_position) as __tablestream_from,
    min_by(__tablestream_at, __tablestream_position) as __tablestream_first_at,
    max_by(__tablestream_at, __tablestream_position) as __tablestream_last_at,
    {# A deletion record holds the values of the version it closes. #}
    min_by(case when __tablestream_stored then {{ struct_of(data_columns) }} else __tablestream_before end,
           __tablestream_position) as __tablestream_closed_values,
    max_by({{ struct_of(data_columns) }}, __tablestream_position) as __tablestream_last_values
  from __tablestream_grouped
  where __tablestream_group > 0
  group by {{ key_list }}, __tablestream_group
), __tablestream_versions as (
  select *, lead(__tablestream_from) over ({{ partition }} order by __tablestream_group) as __tablestream_to
  from __tablestream_groups
)
select
  {%- for column in data_columns %}
  {%- set quoted = dbt_tablestream._sql_identifier(column) %}
  case when __tablestream_deletion then __tablestream_closed_values.{{ quoted }}
    else __tablestream_last_values.{{ quoted }} end as {{ quoted }},
  {%- endfor %}
  coalesce(__tablestream_scd_id, md5(to_json(named_struct(
    {%- for key in keys %}'k{{ loop.index0 }}', {{ dbt_tablestream._sql_identifier(key) }}, {% endfor -%}
    'from', __tablestream_from)))) as dbt_scd_id,
  case when __tablestream_deletion then __tablestream_first_at else __tablestream_last_at end as dbt_updated_at,
  __tablestream_from as dbt_valid_from,
  __tablestream_to as dbt_valid_to
  {%- if new_record %},
  __tablestream_deletion as dbt_is_deleted
  {%- endif %}
from __tablestream_versions
where {{ 'true' if new_record else 'not __tablestream_deletion' }}
  and not (__tablestream_stored and __tablestream_events = 1 and __tablestream_to is null)
  {%- endset -%}
  {{ return(sql_out) }}
{% endmacro %}


{#-- `named_struct('col', col, ...)` over the columns, for comparing or carrying a row's values. --#}
{% macro _history_struct(columns) %}
  {%- set fields = [] -%}
  {%- for column in columns -%}
    {%- do fields.append(dbt_tablestream._sql_string(column) ~ ", " ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {{ return('named_struct(' ~ fields | join(', ') ~ ')') }}
{% endmacro %}


{#-- The columns an SCD type 2 target adds to the model's, as dbt snapshots name them. --#}
{% macro _history_columns(history) %}
  {{ return(['dbt_scd_id', 'dbt_updated_at', 'dbt_valid_from', 'dbt_valid_to']
            + (['dbt_is_deleted'] if history['hard_deletes'] == 'new_record' else [])) }}
{% endmacro %}

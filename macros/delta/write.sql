{#-- The target DML of a stream run, as SQL builders: a create or replace, an append (the protocol's
     _append_sql), or a MERGE of net changes. stream_commit runs what they return as one Delta
     commit. --#}


{#-- SQL that writes `sql` into `target` (mode 'overwrite' or 'append') as one Delta commit.
     `kept_properties`: table properties of the replaced target that the rebuilt one keeps
     (stream_kept_table_properties). --#}
{% macro stream_write_sql(target, sql, mode, stream, kept_properties={}) %}
  {{ return(adapter.dispatch('stream_write_sql', 'dbt_tablestream')(target, sql, mode, stream, kept_properties)) }}
{% endmacro %}


{% macro spark__stream_write_sql(target, sql, mode, stream, kept_properties={}) %}
  {%- if mode == 'overwrite' -%}
    {%- set write_sql -%}
create or replace table {{ target }}
using delta
{{ partition_cols(label="partitioned by") }}
{{ location_clause() }}
{{ comment_clause() }}
{{ dbt_tablestream._stream_tblproperties_clause(kept_properties) }}
as
{{ sql }}
    {%- endset -%}
  {%- else -%}
    {%- set write_sql = dbt_tablestream._protocol_step('append_sql')(target, sql, stream) -%}
  {%- endif -%}
  {{ return(write_sql) }}
{% endmacro %}


{#-- The model's tblproperties, over the properties the replaced target keeps. --#}
{% macro _stream_tblproperties_clause(kept_properties) %}
  {%- set properties = dict(kept_properties) -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  {%- if not properties -%}{{ return('') }}{%- endif -%}
  {%- set pairs = [] -%}
  {%- for key, value in properties.items() -%}
    {%- do pairs.append(dbt_tablestream._sql_string(key) ~ ' = ' ~ dbt_tablestream._sql_string(value)) -%}
  {%- endfor -%}
  {{ return('tblproperties (' ~ pairs | join(', ') ~ ')') }}
{% endmacro %}


{#-- The rows a table_stream appends, in the target's `columns` (its order): selected from the view
     of them `rows_relation` when there is one (on_schema_change compared them), else from `rows_sql`. --#}
{% macro stream_append_select_sql(columns, rows_sql, rows_relation=none) %}
  {{ return(adapter.dispatch('stream_append_select_sql', 'dbt_tablestream')(columns, rows_sql, rows_relation)) }}
{% endmacro %}


{% macro spark__stream_append_select_sql(columns, rows_sql, rows_relation=none) %}
  {{ return('select ' ~ dbt_tablestream._quoted_columns(columns) ~ ' from '
      ~ (rows_relation if rows_relation is not none else '(' ~ rows_sql ~ ') as __tablestream_rows')) }}
{% endmacro %}


{#-- What a rebuild (first run on an existing table, --full-refresh, reset) keeps of the target it
     replaces: CREATE OR REPLACE takes only the model's tblproperties, and a target that other
     models stream from (ref_stream) must keep its change feed or row tracking on, or their next
     run is refused. --#}
{% macro stream_kept_table_properties(existing_relation) %}
  {{ return(adapter.dispatch('stream_kept_table_properties', 'dbt_tablestream')(existing_relation)) }}
{% endmacro %}


{% macro spark__stream_kept_table_properties(existing_relation) %}
  {%- set kept = {} -%}
  {%- if existing_relation is none -%}{{ return(kept) }}{%- endif -%}
  {%- set tracking = [dbt_tablestream._stream_tracking_property('table_changes'),
                      dbt_tablestream._stream_tracking_property('changelog')]
                     | reject('in', config.get('tblproperties') or {}) | list -%}
  {%- if not tracking -%}{{ return(kept) }}{%- endif -%}
  {%- for row in run_query(dbt_tablestream.table_properties_sql(existing_relation)).rows
        if row[0] in tracking and (row[1] | string | lower) == 'true' -%}
    {%- do kept.update({row[0]: 'true'}) -%}
  {%- endfor -%}
  {{ return(kept) }}
{% endmacro %}



{#-- SQL that MERGEs a stream's net changes (one row per key: INSERT, UPDATE_AFTER or DELETE) into
     the target as one Delta commit carrying the stream's marker. `key_ranges`: literal ranges of
     the window's first key column (inspect_stream_window), so Delta skips the target files
     outside them; every source key lies in one, so they change no outcome. --#}
{% macro stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream,
                          key_ranges=[]) %}
  {{ return(adapter.dispatch('stream_merge_sql', 'dbt_tablestream')(
      target, source_sql, keys, delete_mode, update_columns, insert_columns, stream, key_ranges)) }}
{% endmacro %}


{% macro spark__stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream,
                                 key_ranges=[]) %}
  {%- set is_delete = "source.`__change_type` = 'DELETE'" -%}
  {%- set is_upsert = "source.`__change_type` <> 'DELETE'" -%}
  {%- set soft = delete_mode == 'soft' -%}
  {%- set soft_revive = ["target._deleted = false", "target._deleted_version = null", "target._deleted_at = null"]
                        if soft else [] -%}
  {%- set soft_inserts = ['_deleted', '_deleted_version', '_deleted_at'] if soft else [] -%}
  {%- set on = [] -%}
  {%- for key in keys -%}
    {%- set quoted = dbt_tablestream._sql_identifier(key) -%}
    {%- do on.append('target.' ~ quoted ~ ' = source.' ~ quoted) -%}
  {%- endfor -%}
  {%- if key_ranges -%}
    {%- set first_key = 'target.' ~ dbt_tablestream._sql_identifier(keys[0]) -%}
    {%- do on.append(dbt_tablestream._key_ranges_condition(first_key, key_ranges)) -%}
  {%- endif -%}
  {%- set assignments = [] -%}
  {%- for column in update_columns -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do assignments.append('target.' ~ quoted ~ ' = source.' ~ quoted) -%}
  {%- endfor -%}
  {%- set quoted_inserts = [] -%}
  {%- set insert_values = [] -%}
  {%- for column in insert_columns -%}
    {%- do quoted_inserts.append(dbt_tablestream._sql_identifier(column)) -%}
    {%- do insert_values.append('source.' ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- set merge_sql -%}
merge into {{ target }} as target
using (
{{ source_sql }}
) as source
on {{ on | join(' and ') }}
{%- if delete_mode == 'hard' %}
when matched and {{ is_delete }} then delete
{%- elif soft %}
when matched and {{ is_delete }} then update set
  target._deleted = true, target._deleted_version = source.`__commit_version`,
  target._deleted_at = source.`__commit_timestamp`
{%- endif %}
{%- if assignments or soft_revive %}
when matched and {{ is_upsert }} then update set
  {{ (assignments + soft_revive) | join(',\n  ') }}
{%- endif %}
when not matched and {{ is_upsert }} then insert ({{ (quoted_inserts + soft_inserts) | join(', ') }})
  values ({{ (insert_values + (['false', 'null', 'null'] if soft else [])) | join(', ') }})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}


{#-- SQL that writes a stream's net changes (net_changes_sql) into the target by replacing the
     window's keys, as one Delta commit: `INSERT INTO ... REPLACE WHERE <key> IN (<key_list>)` deletes
     the target rows of every key the window names and inserts the keys' new rows, in one commit
     that carries the stream's marker as a MERGE's does (docs/architecture.md, "A window's write").
     Delta takes only literals in the predicate, so the keys are listed (key_list, from
     inspect_stream_window); `key_ranges` beside them let Delta skip the files outside them,
     as it skips by an IN list only as one [min, max]. Delta checks that every inserted row lies
     within the predicate unless the commit turns the check off (stream_commit_open_sql's
     `replaces`, the marked protocol). Applied twice it leaves what once does. `target_columns`: the target's,
     in its order, as the insert is by position. --#}
{% macro stream_replace_where_sql(target, netted, key, key_list, key_ranges, target_columns) %}
  {{ return(adapter.dispatch('stream_replace_where_sql', 'dbt_tablestream')(
      target, netted, key, key_list, key_ranges, target_columns)) }}
{% endmacro %}


{% macro spark__stream_replace_where_sql(target, netted, key, key_list, key_ranges, target_columns) %}
  {%- set replace_sql -%}
insert into {{ target }}
replace where {{ dbt_tablestream._sql_identifier(key) }} in ({{ key_list }})
  {%- if key_ranges %}
  and {{ dbt_tablestream._key_ranges_condition(dbt_tablestream._sql_identifier(key), key_ranges) }}
  {%- endif %}
select {{ dbt_tablestream._quoted_columns(target_columns) }}
from ({{ netted }}) as __tablestream_net
where __change_type in ('INSERT', 'UPDATE_AFTER')
  {%- endset -%}
  {{ return(replace_sql) }}
{% endmacro %}


{#-- SQL that writes a stream's net changes (net_changes_sql) by rewriting the target from itself,
     as one Delta commit carrying the stream's marker (docs/architecture.md, "A window's write"):
     `INSERT OVERWRITE` of the target's rows less every key the window names (an anti join against
     the window's keys, broadcast so that the target is read in place and never shuffled), plus
     the window's upserts. Delta's overwrite removes the target's files by its log alone and the
     SELECT reads the snapshot of the write's own transaction, so it reads and writes what a
     rebuild does, no more. Applied twice it leaves what once does. `target_columns`: the
     target's, in its order, as the insert is by position; `window_keys`: how many keys the window
     names, to broadcast them only while they are few enough for every task to hold. --#}
{% macro stream_rewrite_sql(target, netted, keys, target_columns, window_keys=none) %}
  {{ return(adapter.dispatch('stream_rewrite_sql', 'dbt_tablestream')(
      target, netted, keys, target_columns, window_keys)) }}
{% endmacro %}


{% macro spark__stream_rewrite_sql(target, netted, keys, target_columns, window_keys=none) %}
  {%- set matches = [] -%}
  {%- for key in keys -%}
    {%- set quoted = dbt_tablestream._sql_identifier(key) -%}
    {%- do matches.append('__tablestream_target.' ~ quoted ~ ' = __tablestream_window.' ~ quoted) -%}
  {%- endfor -%}
  {%- set kept_columns = [] -%}
  {%- for column in target_columns -%}
    {%- do kept_columns.append('__tablestream_target.' ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- set broadcast = window_keys is not none and window_keys <= 1000000 -%}
  {%- set key_columns = dbt_tablestream._quoted_columns(keys) -%}
  {%- set rewrite_sql -%}
insert overwrite {{ target }}
select {% if broadcast %}/*+ broadcast(__tablestream_window) */ {% endif %}{{ kept_columns | join(', ') }}
from {{ target }} as __tablestream_target
left anti join (select {{ key_columns }} from ({{ netted }}) as __tablestream_net) as __tablestream_window
  on {{ matches | join(' and ') }}
union all
select {{ dbt_tablestream._quoted_columns(target_columns) }}
from ({{ netted }}) as __tablestream_net
where __change_type in ('INSERT', 'UPDATE_AFTER')
  {%- endset -%}
  {{ return(rewrite_sql) }}
{% endmacro %}


{#-- SQL that MERGEs the newest event per key of a CDC event source (sequenced_changes_sql) into the
     target as one Delta commit carrying the stream's marker (docs/architecture.md, "Event
     sources"). An event changes a row only if its sequence is greater than the row's; it inserts a
     key only if it is newer than the key's tombstone (`tombstones`, delete_mode hard). A soft
     delete keeps the delete's sequence on the row, so it is the tombstone; a delete of a key the
     target does not hold inserts it soft-deleted, for the same reason. --#}
{% macro stream_events_merge_sql(target, changes, keys, delete_mode, update_columns, insert_columns, events, tombstones,
                                 has_columns, key_ranges=[]) %}
  {{ return(adapter.dispatch('stream_events_merge_sql', 'dbt_tablestream')(target, changes, keys, delete_mode,
      update_columns, insert_columns, events, tombstones, has_columns, key_ranges)) }}
{% endmacro %}


{% macro spark__stream_events_merge_sql(target, changes, keys, delete_mode, update_columns, insert_columns, events,
                                        tombstones, has_columns, key_ranges=[]) %}
  {%- set sequence = events['sequence'] -%}
  {%- set soft = delete_mode == 'soft' -%}
  {%- set source_sequence = dbt_tablestream._sequence_value(sequence, 'source') -%}
  {%- set newer = source_sequence ~ ' > ' ~ dbt_tablestream._sequence_value(sequence, 'target') -%}
  {%- set ignore_null = events['ignore_null'] -%}
  {%- set carried = (insert_columns | reject('in', keys + sequence) | list) if ignore_null is sameas true
      else (ignore_null or []) -%}
  {%- set assignments = [] -%}
  {%- for column in update_columns | reject('in', sequence) | list + sequence -%}
    {%- set value = 'source.' ~ dbt_tablestream._sql_identifier(column) -%}
    {%- if column in carried -%}
      {%- set value = 'case when source.__tablestream_after_delete' ~ (' or target._deleted' if soft else '') ~ ' then '
                      ~ value ~ ' else coalesce(' ~ value ~ ', target.' ~ dbt_tablestream._sql_identifier(column)
                      ~ ') end' -%}
    {%- endif -%}
    {%- do assignments.append('target.' ~ dbt_tablestream._sql_identifier(column) ~ ' = ' ~ value) -%}
  {%- endfor -%}
  {%- if soft -%}
    {%- do assignments.extend(['target._deleted = false', 'target._deleted_version = null',
        'target._deleted_at = null']) -%}
  {%- endif -%}
  {%- set deleted_values = ['true',
                            'source.__commit_version' if '__commit_version' in has_columns else 'null',
                            'source.__commit_timestamp' if '__commit_timestamp' in has_columns else 'null'] -%}
  {%- set deleted = ['target._deleted = ' ~ deleted_values[0], 'target._deleted_version = ' ~ deleted_values[1],
                     'target._deleted_at = ' ~ deleted_values[2]] -%}
  {%- for column in sequence -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do deleted.append('target.' ~ quoted ~ ' = source.' ~ quoted) -%}
  {%- endfor -%}
  {%- set merge_sql -%}
merge into {{ target }} as target
using (
  select __tablestream_change.*
  {%- if tombstones is not none %},
    case when __tablestream_dead.{{ dbt_tablestream._sql_identifier(keys[0]) }} is not null
      then {{ dbt_tablestream._sequence_value(sequence, '__tablestream_dead') }} end as __tablestream_tombstone
  {%- endif %}
  from ({{ changes }}) as __tablestream_change
  {%- if tombstones is not none %}
  left join {{ tombstones }} as __tablestream_dead
    on {{ dbt_tablestream._keys_match(keys, '__tablestream_dead', '__tablestream_change') }}
  {%- endif %}
) as source
on {{ dbt_tablestream._keys_match(keys, 'target', 'source') }}
{%- if key_ranges %}
  and {{ dbt_tablestream._key_ranges_condition('target.' ~ dbt_tablestream._sql_identifier(keys[0]), key_ranges) }}
{%- endif %}
{%- if delete_mode == 'hard' %}
when matched and source.__change_type = 'DELETE' and {{ newer }} then delete
{%- elif soft %}
when matched and source.__change_type = 'DELETE' and {{ newer }} then update set
  {{ deleted | join(',\n  ') }}
{%- endif %}
when matched and source.__change_type <> 'DELETE' and {{ newer }} then update set
  {{ assignments | join(',\n  ') }}
{%- if soft %}
when not matched and source.__change_type = 'DELETE' then
  insert ({{ dbt_tablestream._quoted_columns(insert_columns) }}, _deleted, _deleted_version, _deleted_at)
  values ({{ dbt_tablestream._prefixed_columns(insert_columns, 'source') }}, {{ deleted_values | join(', ') }})
{%- endif %}
when not matched and source.__change_type <> 'DELETE'
  {%- if tombstones is not none %}
  and (source.__tablestream_tombstone is null or {{ source_sequence }} > source.__tablestream_tombstone)
  {%- endif %} then
  insert ({{ (dbt_tablestream._quoted_columns(insert_columns)
      ~ (', _deleted, _deleted_version, _deleted_at' if soft else '')) }})
  values ({{ dbt_tablestream._prefixed_columns(insert_columns, 'source') ~ (', false, null, null' if soft else '') }})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}


{#-- `alias.col, ...` for the columns, quoted. --#}
{% macro _prefixed_columns(columns, alias) %}
  {%- set prefixed = [] -%}
  {%- for column in columns -%}
    {%- do prefixed.append(alias ~ '.' ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {{ return(prefixed | join(', ')) }}
{% endmacro %}


{#-- SQL that MERGEs a window's versions (history_versions_sql) into an SCD type 2 target as one
     Delta commit carrying the stream's marker (docs/architecture.md, "History"). A version with the
     dbt_scd_id of a target row is that key's open row, closed or updated in place; every other
     version is new. Only open rows can match, so files holding only closed versions are skipped. --#}
{% macro stream_history_merge_sql(target, versions, data_columns, history, keys=[], key_ranges=[]) %}
  {{ return(adapter.dispatch('stream_history_merge_sql', 'dbt_tablestream')(
      target, versions, data_columns, history, keys, key_ranges)) }}
{% endmacro %}


{% macro spark__stream_history_merge_sql(target, versions, data_columns, history, keys=[], key_ranges=[]) %}
  {%- set columns = data_columns + dbt_tablestream._history_columns(history) -%}
  {%- set assignments = [] -%}
  {%- for column in columns if column not in ['dbt_scd_id', 'dbt_valid_from'] -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do assignments.append('target.' ~ quoted ~ ' = source.' ~ quoted) -%}
  {%- endfor -%}
  {%- set merge_sql -%}
merge into {{ target }} as target
using (
{{ versions }}
) as source
on target.dbt_scd_id = source.dbt_scd_id and target.dbt_valid_to is null
{%- if key_ranges %}
  and {{ dbt_tablestream._key_ranges_condition('target.' ~ dbt_tablestream._sql_identifier(keys[0]), key_ranges) }}
{%- endif %}
when matched then update set
  {{ assignments | join(',\n  ') }}
when not matched then insert ({{ dbt_tablestream._quoted_columns(columns) }})
  values ({{ dbt_tablestream._prefixed_columns(columns, 'source') }})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}


{% macro stream_merge_build_sql(netted, data_columns, soft, keys, deleted_columns=none) %}
  {{ return(adapter.dispatch('stream_merge_build_sql', 'dbt_tablestream')(
      netted, data_columns, soft, keys, deleted_columns)) }}
{% endmacro %}


{#-- The target of a first run or a reset: the net rows that exist at the window's end (with
     `deleted_columns`, the model's columns, for sequence_by: under delete_mode soft also the
     deleted keys, as soft-deleted rows, since they are the tombstones), written in
     key order. Netting shuffles rows by a hash of the key, so without the order every file would
     hold keys from the whole range and every later MERGE would rewrite every file; in key order a
     MERGE rewrites only the files whose key ranges changed (docs/architecture.md, "Cost"). --#}
{% macro spark__stream_merge_build_sql(netted, data_columns, soft, keys, deleted_columns=none) %}
  {%- set build_sql -%}
select {{ dbt_tablestream._quoted_columns(data_columns) }}
{%- if soft and deleted_columns is not none %},
  __change_type = 'DELETE' as _deleted,
  case when __change_type = 'DELETE'
    then {{ '__commit_version' if '__commit_version' in deleted_columns else 'null' }} end as _deleted_version,
  case when __change_type = 'DELETE'
    then {{ '__commit_timestamp' if '__commit_timestamp' in deleted_columns else 'cast(null as timestamp)' }} end
    as _deleted_at
{%- elif soft %}, false as _deleted, cast(null as bigint) as _deleted_version,
  cast(null as timestamp) as _deleted_at{% endif %}
from ({{ netted }}) as __tablestream_net
{%- if deleted_columns is none or not soft %}
where __change_type in ('INSERT', 'UPDATE_AFTER')
{%- endif %}
order by {{ dbt_tablestream._quoted_columns(keys) }}
  {%- endset -%}
  {{ return(build_sql) }}
{% endmacro %}


{% macro stream_history_build_sql(versions, keys) %}
  {{ return(adapter.dispatch('stream_history_build_sql', 'dbt_tablestream')(versions, keys)) }}
{% endmacro %}


{#-- The target of a first run or reset of an SCD type 2 stream_merge: the window's versions
     (history_versions_sql), in key order and each key's versions in time order. --#}
{% macro spark__stream_history_build_sql(versions, keys) %}
  {{ return('select * from (' ~ versions ~ ') as __tablestream_versions order by '
      ~ dbt_tablestream._quoted_columns(keys) ~ ', dbt_valid_from') }}
{% endmacro %}


{% macro stream_merge_source_sql(netted, data_columns, has_commit_timestamp) %}
  {{ return(adapter.dispatch('stream_merge_source_sql', 'dbt_tablestream')(
      netted, data_columns, has_commit_timestamp)) }}
{% endmacro %}


{% macro spark__stream_merge_source_sql(netted, data_columns, has_commit_timestamp) %}
  {%- set source_sql -%}
select {{ dbt_tablestream._quoted_columns(data_columns) }}, __change_type, __commit_version,
  {{ '__commit_timestamp' if has_commit_timestamp else 'cast(null as timestamp) as __commit_timestamp' }}
from ({{ netted }}) as __tablestream_net
where __change_type <> 'UPDATE_BEFORE'
  {%- endset -%}
  {{ return(source_sql) }}
{% endmacro %}


{% macro stream_merge_upserts_sql(netted, data_columns) %}
  {{ return(adapter.dispatch('stream_merge_upserts_sql', 'dbt_tablestream')(netted, data_columns)) }}
{% endmacro %}


{#-- The rows a later run's MERGE writes (not its deletes), as the target's columns: what
     on_schema_change compares with the target. --#}
{% macro spark__stream_merge_upserts_sql(netted, data_columns) %}
  {{ return('select ' ~ dbt_tablestream._quoted_columns(data_columns) ~ ' from (' ~ netted ~ ") as __tablestream_net "
      ~ "where __change_type <> 'DELETE'") }}
{% endmacro %}


{#-- Column names quoted for the adapter, joined with commas. --#}
{% macro _quoted_columns(columns) %}
  {%- set quoted = [] -%}
  {%- for column in columns -%}{%- do quoted.append(dbt_tablestream._sql_identifier(column)) -%}{%- endfor -%}
  {{ return(quoted | join(', ')) }}
{% endmacro %}

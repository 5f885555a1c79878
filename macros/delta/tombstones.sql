{#-- Tombstones of a stream_merge over a CDC event source (`sequence_by`) with delete_mode hard
     (docs/architecture.md, "Event sources"). The target holds no deleted rows, so the sequence of
     each key's last delete is kept beside it, in `<target>__tablestream_tombstones`, for
     `tombstone_retention`: an event for a deleted key inserts it only if it is newer.

     The tombstones are written before the target's commit and outside the commit protocol. That
     is safe because a write only raises a key's sequence (a retry writes the same values), and the
     target's MERGE consults a tombstone only to insert a key whose newest event in the window is an
     upsert, which this window's deletes never tombstone. --#}
{% macro _stream_tombstones_relation(target) %}
  {{ return(target.incorporate(path={'identifier': target.identifier ~ '__tablestream_tombstones'}, type='table')) }}
{% endmacro %}


{#-- SQL that records the window's deletes (`changes`: sequenced_changes_sql, one row per key) as
     tombstones: replacing the table (`build`, a first run or reset) or merging into it, keeping
     the greater sequence per key and dropping tombstones older than `retention`. --#}
{% macro stream_tombstones_sql(tombstones, changes, keys, sequence, retention, build) %}
  {{ return(adapter.dispatch('stream_tombstones_sql', 'dbt_tablestream')(
      tombstones, changes, keys, sequence, retention, build)) }}
{% endmacro %}


{% macro spark__stream_tombstones_sql(tombstones, changes, keys, sequence, retention, build) %}
  {%- set columns = dbt_tablestream._quoted_columns(keys + sequence) -%}
  {%- set deletes -%}
select {{ columns }}, current_timestamp() as __tablestream_recorded_at
from ({{ changes }}) as __tablestream_changes
where __change_type = 'DELETE'
  {%- endset -%}
  {%- if build -%}
    {{ return('create or replace table ' ~ tombstones ~ ' using delta as\n' ~ deletes) }}
  {%- endif -%}
  {%- set assignments = [] -%}
  {%- for column in sequence + ['__tablestream_recorded_at'] -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do assignments.append('target.' ~ quoted ~ ' = source.' ~ quoted) -%}
  {%- endfor -%}
  {%- set newer = dbt_tablestream._sequence_value(sequence, 'source') ~ ' > '
      ~ dbt_tablestream._sequence_value(sequence, 'target') -%}
  {%- set expired = 'target.__tablestream_recorded_at < current_timestamp() - interval ' ~ retention -%}
  {%- set merge_sql -%}
merge into {{ tombstones }} as target
using (
{{ deletes }}
) as source
on {{ dbt_tablestream._keys_match(keys, 'target', 'source') }}
when matched and {{ newer }} then update set
  {{ assignments | join(', ') }}
when not matched then insert *
when not matched by source and {{ expired }} then delete
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}

{#-- The SQL of a snapshot_mirror's two writes: the build and the MERGE. Pure. --#}


{#-- The mirror, built from the snapshot with the change data feed on; under delete_mode soft with
     `_deleted` (false) and `_deleted_at` (NULL). --#}
{% macro snapshot_mirror_build_sql(target, sql, settings) %}
  {%- set soft = settings.delete_mode == 'soft' -%}
  {{ return('create or replace table ' ~ target ~ ' using delta tblproperties (' ~ dbt_tablestream.sql_string('delta.enableChangeDataFeed')
      ~ ' = ' ~ dbt_tablestream.sql_string('true') ~ ') as\nselect *' ~ (', false as _deleted, cast(null as timestamp) as _deleted_at' if soft else '')
      ~ ' from (\n' ~ sql ~ '\n) as __tablestream_snapshot') }}
{% endmacro %}


{#-- One MERGE of the snapshot into the mirror: a new key is inserted; a key whose values changed
     (compared NULL-safe, column by column) is updated; a row whose values are equal matches no
     clause and is not written, so the change feed records only real changes; a key the snapshot
     no longer returns is deleted (hard), marked `_deleted` with the time (soft; a key that comes
     back is revived) or kept (ignore). --#}
{% macro snapshot_mirror_merge_sql(target, sql, columns, settings) %}
  {%- set soft = settings.delete_mode == 'soft' -%}
  {%- set keys = settings.key_columns | map('lower') | list -%}
  {%- set on, differs, assignments, names, values = [], [], [], [], [] -%}
  {%- for column in columns -%}
    {%- set quoted = adapter.quote(column) -%}
    {%- do names.append(quoted) -%}
    {%- do values.append('__tablestream_snapshot.' ~ quoted) -%}
    {%- if column | lower in keys -%}
      {%- do on.append('__tablestream_mirror.' ~ quoted ~ ' = __tablestream_snapshot.' ~ quoted) -%}
    {%- else -%}
      {%- do differs.append('not (__tablestream_mirror.' ~ quoted ~ ' <=> __tablestream_snapshot.' ~ quoted ~ ')') -%}
      {%- do assignments.append(quoted ~ ' = __tablestream_snapshot.' ~ quoted) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if soft -%}
    {%- do differs.append('__tablestream_mirror._deleted') -%}
    {%- do assignments.extend(['_deleted = false', '_deleted_at = cast(null as timestamp)']) -%}
    {%- do names.extend(['_deleted', '_deleted_at']) -%}
    {%- do values.extend(['false', 'cast(null as timestamp)']) -%}
  {%- endif -%}
  {%- set merge_sql -%}
merge into {{ target }} as __tablestream_mirror
using (
{{ sql }}
) as __tablestream_snapshot
on {{ on | join(' and ') }}
{%- if differs %}
when matched and ({{ differs | join(' or ') }}) then update set {{ assignments | join(', ') }}
{%- endif %}
when not matched then insert ({{ names | join(', ') }}) values ({{ values | join(', ') }})
{%- if settings.delete_mode == 'hard' %}
when not matched by source then delete
{%- elif soft %}
when not matched by source and not __tablestream_mirror._deleted then update set _deleted = true, _deleted_at = current_timestamp()
{%- endif %}
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}

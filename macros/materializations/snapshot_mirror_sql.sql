{#-- The SQL of a snapshot_mirror's writes (the build, the table of differences and the MERGE), and
     the counts read from the MERGE's result. Pure. --#}


{% macro snapshot_mirror_build_sql(target, sql, settings) %}
  {{ return(adapter.dispatch('snapshot_mirror_build_sql', 'dbt_tablestream')(target, sql, settings)) }}
{% endmacro %}


{#-- The mirror, built from the snapshot with the change data feed on; under delete_mode soft with
     `_deleted` (false) and `_deleted_at` (NULL). --#}
{% macro spark__snapshot_mirror_build_sql(target, sql, settings) %}
  {%- set soft = settings.delete_mode == 'soft' -%}
  {{ return('create or replace table ' ~ target ~ ' using delta tblproperties ('
      ~ dbt_tablestream._sql_string('delta.enableChangeDataFeed') ~ ' = ' ~ dbt_tablestream._sql_string('true')
      ~ ') as\nselect *' ~ (', false as _deleted, cast(null as timestamp) as _deleted_at' if soft else '') ~ ' from (\n'
      ~ sql ~ '\n) as __tablestream_snapshot') }}
{% endmacro %}


{% macro snapshot_mirror_diff_sql(target, sql, columns, settings) %}
  {{ return(adapter.dispatch('snapshot_mirror_diff_sql', 'dbt_tablestream')(target, sql, columns, settings)) }}
{% endmacro %}


{#-- The snapshot's differences from the mirror, the rows its one MERGE applies (written to a
     table of their own first: _snapshot_mirror_diff_relation): a full outer join of the snapshot
     and the mirror on the key (a left join under delete_mode ignore) keeping a key that is new, a
     key whose values changed (compared NULL-safe, column by column; under soft, a key marked
     deleted that came back) and a key the snapshot no longer returns (under soft, one not yet
     marked), with `__tablestream_vanished`. `__tablestream_copies` counts each snapshot key's
     rows, and a repeated key's rows are kept whatever they hold, so the keys are checked on the
     same rows the MERGE applies (check_snapshot_mirror_keys): a query read twice may answer
     differently (a folder replaced, a JDBC table written), and each read of the snapshot costs a
     scan of the whole query (bench/README.md, "The snapshot mirror"). The count partitions the
     snapshot by the key the join shuffles it by, so it adds no shuffle. Delta's MERGE rewrites
     every file holding a row that a source row matches, whether or not a clause then changes it, so
     a MERGE of the whole snapshot would copy the whole mirror on every run, unchanged nights
     included (docs/architecture.md, "Snapshot sources: snapshot_mirror"): matched by the
     differences only, it rewrites the files of changed keys, and a night without changes writes
     nothing. --#}
{% macro spark__snapshot_mirror_diff_sql(target, sql, columns, settings) %}
  {%- set soft = settings.delete_mode == 'soft' -%}
  {%- set keys = settings.key_columns | map('lower') | list -%}
  {%- set partition, joined, equal, diffed, current_columns = [], [], [], [], [] -%}
  {%- for column in columns -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do current_columns.append(quoted) -%}
    {%- if column | lower in keys -%}
      {%- do partition.append(quoted) -%}
      {%- do joined.append('__tablestream_snapshot.' ~ quoted ~ ' = __tablestream_current.' ~ quoted) -%}
      {%- do diffed.append('coalesce(__tablestream_snapshot.' ~ quoted ~ ', __tablestream_current.' ~ quoted ~ ') as '
          ~ quoted) -%}
    {%- else -%}
      {%- do equal.append('__tablestream_snapshot.' ~ quoted ~ ' <=> __tablestream_current.' ~ quoted) -%}
      {%- do diffed.append('__tablestream_snapshot.' ~ quoted) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set changed = ['not (' ~ equal | join(' and ') ~ ')'] if equal else [] -%}
  {%- if soft -%}
    {%- do changed.append('__tablestream_current._deleted') -%}
    {%- do current_columns.append('_deleted') -%}
  {%- endif -%}
  {%- set diff_sql -%}
select {{ diffed | join(', ') }}, __tablestream_snapshot.__tablestream_in_snapshot is null as __tablestream_vanished,
    __tablestream_snapshot.__tablestream_copies
  from (select *, true as __tablestream_in_snapshot,
      count(*) over (partition by {{ partition | join(', ') }}) as __tablestream_copies from (
{{ sql }}
  ) as __tablestream_query) as __tablestream_snapshot
  {{ 'left' if settings.delete_mode == 'ignore' else 'full outer' }} join (
    select {{ current_columns | join(', ') }}, true as __tablestream_in_mirror from {{ target }}
  ) as __tablestream_current
    on {{ joined | join(' and ') }}
  where coalesce(__tablestream_snapshot.__tablestream_copies > 1, false) or case
    when __tablestream_current.__tablestream_in_mirror is null then true
    when __tablestream_snapshot.__tablestream_in_snapshot is null
      then {{ 'not __tablestream_current._deleted' if soft else 'true' }}
    else {{ changed | join(' or ') if changed else 'false' }}
  end
  {%- endset -%}
  {{ return(diff_sql) }}
{% endmacro %}


{% macro snapshot_mirror_diff_table_sql(diff, target, sql, columns, settings) %}
  {{ return(adapter.dispatch('snapshot_mirror_diff_table_sql', 'dbt_tablestream')(diff, target, sql, columns,
                                                                                 settings)) }}
{% endmacro %}


{#-- The table of differences `diff` (_snapshot_mirror_diff_relation) written from
     snapshot_mirror_diff_sql, replacing one a killed run left. --#}
{% macro spark__snapshot_mirror_diff_table_sql(diff, target, sql, columns, settings) %}
  {{ return('create or replace table ' ~ diff ~ ' using delta as\n'
            ~ dbt_tablestream.snapshot_mirror_diff_sql(target, sql, columns, settings)) }}
{% endmacro %}


{#-- Where a run writes the snapshot's differences (snapshot_mirror_diff_sql) before its MERGE: a
     Delta table beside the mirror, dropped after the MERGE (or the refusal); a run killed in
     between leaves it, and the next one replaces it. --#}
{% macro _snapshot_mirror_diff_relation(target) %}
  {{ return(api.Relation.create(database=target.database, schema=target.schema,
      identifier=target.identifier ~ '__tablestream_diff', type='table')) }}
{% endmacro %}


{% macro snapshot_mirror_merge_sql(target, diff, columns, settings) %}
  {{ return(adapter.dispatch('snapshot_mirror_merge_sql', 'dbt_tablestream')(target, diff, columns, settings)) }}
{% endmacro %}


{#-- The one MERGE of the differences (`diff`, _snapshot_mirror_diff_relation) into the mirror: a
     vanished key is deleted (hard) or marked `_deleted` with the time (soft), a matched key
     updated, a new key inserted. --#}
{% macro spark__snapshot_mirror_merge_sql(target, diff, columns, settings) %}
  {%- set soft = settings.delete_mode == 'soft' -%}
  {%- set keys = settings.key_columns | map('lower') | list -%}
  {%- set on, assignments, names, values = [], [], [], [] -%}
  {%- for column in columns -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do names.append(quoted) -%}
    {%- do values.append('__tablestream_diff.' ~ quoted) -%}
    {%- if column | lower in keys -%}
      {%- do on.append('__tablestream_mirror.' ~ quoted ~ ' = __tablestream_diff.' ~ quoted) -%}
    {%- else -%}
      {%- do assignments.append(quoted ~ ' = __tablestream_diff.' ~ quoted) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if soft -%}
    {%- do assignments.extend(['_deleted = false', '_deleted_at = cast(null as timestamp)']) -%}
    {%- do names.extend(['_deleted', '_deleted_at']) -%}
    {%- do values.extend(['false', 'cast(null as timestamp)']) -%}
  {%- endif -%}
  {%- set merge_sql -%}
merge into {{ target }} as __tablestream_mirror
using {{ diff }} as __tablestream_diff
on {{ on | join(' and ') }}
{%- if settings.delete_mode == 'hard' %}
when matched and __tablestream_diff.__tablestream_vanished then delete
{%- elif soft %}
when matched and __tablestream_diff.__tablestream_vanished then update set
  _deleted = true, _deleted_at = current_timestamp()
{%- endif %}
{%- if assignments %}
when matched then update set {{ assignments | join(', ') }}
{%- endif %}
when not matched and not __tablestream_diff.__tablestream_vanished then insert ({{ names | join(', ') }})
  values ({{ values | join(', ') }})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}


{#-- The rows the MERGE (snapshot_mirror_merge_sql) inserted, updated and deleted, from its result
     (load_result), or none when the result carries no counts. --#}
{% macro _snapshot_mirror_merge_counts(result) %}
  {%- if result.table is none or 'num_affected_rows' not in result.table.column_names or not result.table.rows -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set row = result.table.rows[0] -%}
  {{ return({'inserted': row['num_inserted_rows'], 'updated': row['num_updated_rows'],
             'deleted': row['num_deleted_rows']}) }}
{% endmacro %}

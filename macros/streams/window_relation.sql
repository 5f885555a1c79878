{#-- The relation a checked window's raw change rows are read from: the change data feed,
     Delta's changelog, or the Delta log's file actions, and the relation whose columns they
     have. --#}


{% macro window_relation_sql(relation, stream, columns=none) %}
  {{ return(adapter.dispatch('window_relation_sql', 'dbt_tablestream')(relation, stream, columns)) }}
{% endmacro %}


{#-- The relation the window's raw changes are read from: the change data feed (`table_changes`) or
     Delta's changelog (stream_read: changelog). Both bounds are inclusive and the end is explicit, so
     a commit landing while the model runs is left for the next window. --#}
{% macro spark__window_relation_sql(relation, stream, columns=none) %}
  {%- if stream.snapshot -%}
    {%- set relation_sql -%}
(select *, 'insert' as _change_type, cast({{ stream.through }} as bigint) as _commit_version,
    cast({{ dbt_tablestream._sql_string(stream.timestamp) }} as timestamp) as _commit_timestamp
  from {{ relation }} version as of {{ stream.through }}) as __tablestream_snapshot
    {%- endset -%}
    {{ return(relation_sql) }}
  {%- endif -%}
  {%- if stream.read == 'changelog' -%}
    {{ return(dbt_tablestream.changelog_relation_sql(relation, stream.after + 1, stream.through,
        stream.spark_net_changes)) }}
  {%- endif -%}
  {%- if stream.get('files') is not none -%}
    {{ return(dbt_tablestream.window_files_relation_sql(relation, stream, columns)) }}
  {%- endif -%}
  {{ return(dbt_tablestream.table_changes_sql(relation, stream.after + 1, stream.through)) }}
{% endmacro %}


{% macro table_changes_sql(relation, first, through) %}
  {{ return(adapter.dispatch('table_changes_sql', 'dbt_tablestream')(relation, first, through)) }}
{% endmacro %}


{% macro spark__table_changes_sql(relation, first, through) %}
  {{ return('table_changes(' ~ dbt_tablestream._sql_string(relation) ~ ', ' ~ first ~ ', ' ~ through ~ ')') }}
{% endmacro %}


{% macro window_files_relation_sql(relation, stream, columns=none) %}
  {{ return(adapter.dispatch('window_files_relation_sql', 'dbt_tablestream')(relation, stream, columns)) }}
{% endmacro %}


{#-- A window read, whole or in part, from the Delta log's file actions (delta_log_read.sql):
     `stream.files.versions` lists the versions to read there (on_feed_off: delta_log, the commits
     the feed did not record), or none for all of them (stream_read: delta_log). The versions after
     the last one the log must read come from the change feed, in one table_changes; any earlier
     run of recorded versions is read from the log too, since two table_changes of one catalog table
     in one query were seen to return the first one's rows twice (delta-spark 4.4). Its rows are
     final: the carry-overs dropped and a key's delete and insert in a commit paired into
     update_preimage / update_postimage, both within a commit and so only where a commit both
     removed and added files; an append's rows skip both, each a shuffle of every row
     (bench/README.md, "The Delta log read"). --#}
{% macro spark__window_files_relation_sql(relation, stream, columns=none) %}
  {%- set window = range(stream.after + 1, stream.through + 1) | list -%}
  {%- set listed = window if stream.files.versions is none else stream.files.versions | select('in', window) | list -%}
  {%- set feed_from = (listed | max) + 1 if listed else stream.after + 1 -%}
  {%- set parts = [] -%}
  {%- if feed_from <= stream.through -%}
    {%- do parts.append('select * from ' ~ dbt_tablestream.table_changes_sql(relation, feed_from, stream.through)) -%}
  {%- endif -%}
  {%- set from_log = window | select('lt', feed_from) | list -%}
  {%- set columns = columns if columns is not none else dbt_tablestream.window_columns(relation, stream) -%}
  {%- set commits = dbt_tablestream.delta_log_commits(relation, stream, from_log) -%}
  {%- set log = dbt_tablestream.delta_log_changes_sql(relation, stream, commits, columns) -%}
  {%- if log.rewritten is not none -%}{%- do parts.append(log.rewritten) -%}{%- endif -%}
  {%- set rows = [] -%}
  {%- if parts -%}
    {%- set keys = dbt_tablestream._stream_pairing_keys(stream, columns) -%}
    {%- set rewritten = '(\n  ' ~ parts | join('\n  union all\n  ') ~ '\n) as __tablestream_rewritten' -%}
    {%- set changes = dbt_tablestream.drop_carryovers_sql(rewritten, columns) -%}
    {%- set change_type = "case when __tablestream_paired then (case _change_type when 'delete' then 'update_preimage' "
          ~ "else 'update_postimage' end) else _change_type end as _change_type" if keys else '_change_type' -%}
    {%- do rows.append('select ' ~ dbt_tablestream._quoted_columns(columns | map(attribute='name')) ~ ', ' ~ change_type
        ~ ', _commit_version, _commit_timestamp\n  from '
        ~ (dbt_tablestream.paired_changes_sql(changes, keys) if keys else changes)) -%}
  {%- endif -%}
  {%- if log.one_sided is not none -%}{%- do rows.append(log.one_sided) -%}{%- endif -%}
  {%- if not rows -%}
    {{ return('(select *, cast(null as string) as _change_type, cast(null as bigint) as _commit_version,'
        ~ ' cast(null as timestamp) as _commit_timestamp from ' ~ relation
        ~ ' where 1 = 0) as __tablestream_changes') }}
  {%- endif -%}
  {{ return('(\n  ' ~ rows | join('\n  union all\n  ') ~ '\n) as __tablestream_changes') }}
{% endmacro %}


{#-- The relation whose columns a window's rows have: the source as of the window's
     `schema_version` when it ends before a schema change (its time-travel reads give those), else
     the source as it is. Pure, so the PySpark API reads its windows' columns by it too. --#}
{% macro _window_schema_relation(relation, stream) %}
  {{ return(relation if stream.schema_version is none else relation ~ ' version as of ' ~ stream.schema_version) }}
{% endmacro %}

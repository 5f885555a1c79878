{% macro change_rows_sql(stream, source_relation, columns=none, marked=true) %}
  {{ return(adapter.dispatch('change_rows_sql', 'dbt_tablestream')(stream, source_relation, columns, marked)) }}
{% endmacro %}


{#-- The column contract of a stream read (docs/architecture.md, "The layers"): every source column, then
     __change_type, __commit_version, __commit_timestamp. The window is embedded as a comment so the
     materialization commits exactly the window that was read. The comment's `view` is 'window'
     (none for an empty window): the read's SQL follows the comment, and a log read's of many
     files or row positions would double the statement. --#}
{% macro spark__change_rows_sql(stream, source_relation, columns=none, marked=true) %}
  {#-- An empty window selects no row, so `*` gives the source's columns without describing them. --#}
  {%- set columns = columns if columns is not none or stream.view is none
                    else adapter.get_columns_in_relation(source_relation) -%}
  {%- set marker = tojson(dict(stream, view=none if stream.view is none else 'window')) | replace('/', '\\/') -%}
  {%- set column_list -%}
    {%- if columns is none %}*, {% else -%}
    {%- for column in columns %}{{ dbt_tablestream._sql_identifier(column.name) }}, {% endfor -%}
    {%- endif -%}
  {%- endset -%}
  {%- set sql -%}
(
  {%- if marked %}
  /* tablestream:window {{ marker }} */
  {%- endif %}
  {%- if stream.view is none %}
  select {{ column_list }}cast(null as string) as __change_type, cast(null as bigint) as __commit_version,
    cast(null as timestamp) as __commit_timestamp
  from {{ source_relation }} where 1 = 0
  {%- else %}
  {%- set changes = dbt_tablestream.drop_carryovers_sql(stream.view, columns)
                    if dbt_tablestream._stream_drops_carryovers(stream) else stream.view %}
  select {{ column_list }}
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from {{ changes }}
  {%- if stream.mode == 'append_only' %}
  where _change_type = 'insert'
  {%- endif %}
  {%- endif %}
)
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}


{#-- The key by which a read of the Delta log pairs a key's delete and insert in one commit into
     an update (its before and after images), as the change feed records an update
     (window_files_relation_sql): the model's unique_key (stream.files.key_columns), when the source
     has those columns. Empty for other reads, and without a key. --#}
{% macro _stream_pairing_keys(stream, columns) %}
  {%- if stream.get('files') is none or stream.snapshot or not stream.files.key_columns -%}{{ return([]) }}{%- endif -%}
  {%- set names = columns | map(attribute='name') | map('lower') | list -%}
  {%- if stream.files.key_columns | map('lower') | reject('in', names) | list -%}{{ return([]) }}{%- endif -%}
  {{ return(stream.files.key_columns) }}
{% endmacro %}


{% macro paired_changes_sql(changes, keys) %}
  {{ return(adapter.dispatch('paired_changes_sql', 'dbt_tablestream')(changes, keys)) }}
{% endmacro %}


{#-- `changes` with __tablestream_paired: the row is a key's one delete or one insert in a commit
     that has exactly one of each for the key. --#}
{% macro spark__paired_changes_sql(changes, keys) %}
  {%- set partition = ['_commit_version'] -%}
  {%- for key in keys -%}{%- do partition.append(dbt_tablestream._sql_identifier(key)) -%}{%- endfor -%}
  {%- set sql -%}
(select *,
    _change_type in ('delete', 'insert')
    and count_if(_change_type = 'delete') over (__tablestream_key) = 1
    and count_if(_change_type = 'insert') over (__tablestream_key) = 1 as __tablestream_paired
  from {{ changes }}
  window __tablestream_key as (partition by {{ partition | join(', ') }})
) as __tablestream_paired_changes
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}


{#-- Whether a read leaves out carry-over rows: `drop_carryovers` for reads of the change data
     feed and of Delta's changelog (stream_read: changelog). A snapshot has none. The changelog
     drops rows a rewrite copied (Spark's default deduplicationMode), but a MERGE or UPDATE that
     sets a row to the values it had gives the row a new commit version, and the changelog shows
     it as an update with equal images, as the feed does. --#}
{% macro _stream_drops_carryovers(stream) %}
  {%- if stream.snapshot -%}{{ return(false) }}{%- endif -%}
  {#-- A read of the Delta log lists a rewritten file's unchanged rows on both sides: it always drops
       them itself, where a commit rewrote files (window_files_relation_sql). A window of appends
       alone has none (_window_appends_only). --#}
  {{ return(stream.get('files') is none and stream.drop_carryovers and stream.read in ['table_changes', 'changelog']
            and not stream.appends_only) }}
{% endmacro %}


{% macro drop_carryovers_sql(changes_relation, columns) %}
  {{ return(adapter.dispatch('drop_carryovers_sql', 'dbt_tablestream')(changes_relation, columns)) }}
{% endmacro %}


{#-- The change feed's rows without its carry-overs: rows a commit rewrote without changing them.
     An UPDATE or MERGE that sets a row to what it was records equal pre- and post-images, and a
     MERGE that deletes and inserts a row unchanged records an equal delete and insert, in one
     version. Within a version, equal rows of a pair's two sides (update_preimage with
     update_postimage, delete with insert) cancel one for one; what is left over on either side is
     a real change. Equal means every column equal, NULLs included (a map column compared by its
     JSON, timestamps to the microsecond). Both windows share one partitioning and order (the
     counts over the whole partition), so Spark sorts the rows once, not twice (bench/README.md,
     "The Delta log read"). --#}
{% macro spark__drop_carryovers_sql(changes_relation, columns) %}
  {%- set identity = ['_commit_version', "_change_type in ('update_preimage', 'update_postimage')"] -%}
  {%- for column in columns -%}
    {%- set type = (column.dtype if column.dtype is defined else column.dataType.simpleString()) | string | lower -%}
    {%- if 'map<' in type -%}
      {%- do identity.append("to_json(" ~ dbt_tablestream._sql_identifier(column.name) ~ ", map('timestampFormat', "
          ~ "'yyyy-MM-dd HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS'))") -%}
    {%- else -%}
      {%- do identity.append(dbt_tablestream._sql_identifier(column.name)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set before = "_change_type in ('update_preimage', 'delete')" -%}
  {%- set partition = 'partition by ' ~ identity | join(', ') -%}
  {%- set sql -%}
(select * from (
    select *,
      count_if({{ before }}) over (__tablestream_pair) as __tablestream_before,
      count_if(not {{ before }}) over (__tablestream_pair) as __tablestream_after,
      row_number() over (__tablestream_side) as __tablestream_rank
    from {{ changes_relation }}
    window __tablestream_pair as ({{ partition }} order by case when {{ before }} then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as ({{ partition }} order by case when {{ before }} then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when {{ before }} then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}

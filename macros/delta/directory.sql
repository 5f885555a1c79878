{#-- Directory tables: a listing through Spark's binaryFile source (its content column is never
     selected, so no file is read), diffed against the table and applied with one MERGE. --#}


{#-- Dispatched: lists the location and applies the difference; returns files, inserted, updated,
     deleted and committed (whether a commit was made). --#}
{% macro sync_directory_table(relation, settings, rebuild) %}
  {{ return(adapter.dispatch('sync_directory_table', 'dbt_tablestream')(relation, settings, rebuild)) }}
{% endmacro %}


{#-- The diff is counted first, so an unchanged folder commits nothing: a MERGE that matches
     nothing would still add a version. --#}
{% macro spark__sync_directory_table(relation, settings, rebuild) %}
  {%- set files_view = dbt_tablestream._sql_identifier(relation.identifier ~ '__tablestream_files') -%}
  {%- set listing_view = dbt_tablestream._sql_identifier(relation.identifier ~ '__tablestream_listing') -%}
  {%- do run_query(dbt_tablestream.directory_files_view_sql(files_view, settings)) -%}
  {%- do run_query(dbt_tablestream.directory_listing_view_sql(listing_view, files_view, settings)) -%}
  {%- if rebuild -%}
    {%- do run_query(dbt_tablestream.directory_create_sql(relation, listing_view,
        config.get('tblproperties', none))) -%}
    {#-- Counted from the new table: the listing view would list the file system again. --#}
    {%- set files = run_query('select count(*) from ' ~ relation).rows[0][0] -%}
    {{ return({'files': files, 'inserted': files, 'updated': 0, 'deleted': 0, 'committed': true}) }}
  {%- endif -%}
  {%- set diff = run_query(dbt_tablestream.directory_diff_sql(relation, listing_view)).rows[0] -%}
  {%- set changed = diff['inserted'] + diff['updated'] + diff['deleted'] -%}
  {%- if changed > 0 -%}
    {%- do run_query(dbt_tablestream.directory_merge_sql(relation, listing_view)) -%}
  {%- endif -%}
  {{ return({'files': diff['files'], 'inserted': diff['inserted'], 'updated': diff['updated'],
             'deleted': diff['deleted'], 'committed': changed > 0}) }}
{% endmacro %}


{#-- A glob list as one anchored Java regex over relative paths, with Python's fnmatch rules:
     `*` and `?` also match `/`, `[seq]` and `[!seq]` are classes. --#}
{% macro _glob_regex(patterns) %}
  {%- set alternatives = [] -%}
  {%- for pattern in patterns -%}
    {%- set state = namespace(text='', in_class=false, class_start=false) -%}
    {%- for character in pattern -%}
      {%- if state.in_class -%}
        {%- if character == '!' and state.class_start -%}{%- set state.text = state.text ~ '^' -%}
        {%- elif character == ']' and not state.class_start -%}
          {%- set state.text = state.text ~ ']' -%}
          {%- set state.in_class = false -%}
        {%- elif character in '\\[]&^' -%}{%- set state.text = state.text ~ '\\' ~ character -%}
        {%- else -%}{%- set state.text = state.text ~ character -%}
        {%- endif -%}
        {%- set state.class_start = false -%}
      {%- elif character == '[' -%}
        {%- set state.text = state.text ~ '[' -%}
        {%- set state.in_class = true -%}
        {%- set state.class_start = true -%}
      {%- elif character == '*' -%}{%- set state.text = state.text ~ '.*' -%}
      {%- elif character == '?' -%}{%- set state.text = state.text ~ '.' -%}
      {%- elif character in '\\.[]{}()+^$|' -%}{%- set state.text = state.text ~ '\\' ~ character -%}
      {%- else -%}{%- set state.text = state.text ~ character -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do alternatives.append(state.text ~ ('\\[' if state.in_class else '')) -%}
  {%- endfor -%}
  {{ return('^(?:' ~ alternatives | join('|') ~ ')$') }}
{% endmacro %}


{% macro directory_files_view_sql(files_view, settings) %}
  {{ return(adapter.dispatch('directory_files_view_sql', 'dbt_tablestream')(files_view, settings)) }}
{% endmacro %}


{% macro spark__directory_files_view_sql(files_view, settings) %}
  {{ return("create or replace temporary view " ~ files_view ~ " using binaryFile options (path "
            ~ dbt_tablestream._sql_string(settings.location) ~ ", recursiveFileLookup "
            ~ dbt_tablestream._sql_string('true' if settings.recursive else 'false') ~ ")") }}
{% endmacro %}


{% macro directory_listing_view_sql(listing_view, files_view, settings) %}
  {{ return(adapter.dispatch('directory_listing_view_sql', 'dbt_tablestream')(listing_view, files_view, settings)) }}
{% endmacro %}


{#-- The listing in the directory table's columns. The fingerprint is what the file system gives
     for free: size and modification time (reading every file to hash it would cost a full scan). --#}
{% macro spark__directory_listing_view_sql(listing_view, files_view, settings) %}
  {%- set root = settings.location.split('://')[-1].rstrip('/') -%}
  {%- set listing_sql -%}
create or replace temporary view {{ listing_view }} as
select * from (
  select
    substring(path, instr(path, {{ dbt_tablestream._sql_string(root) }}) + {{ root | length + 1 }}) as relative_path,
    path as url,
    length as size,
    modificationTime as last_modified_time,
    concat(cast(length as string), '-', cast(unix_micros(modificationTime) as string)) as fingerprint
  from {{ files_view }}
) as __tablestream_files
where not relative_path rlike '(^|/)[._]'
{%- if settings.include %}
  and relative_path rlike {{ dbt_tablestream._sql_string(dbt_tablestream._glob_regex(settings.include)) }}
{%- endif %}
{%- if settings.exclude %}
  and not relative_path rlike {{ dbt_tablestream._sql_string(dbt_tablestream._glob_regex(settings.exclude)) }}
{%- endif %}
  {%- endset -%}
  {{ return(listing_sql) }}
{% endmacro %}


{% macro directory_diff_sql(target, listing_view) %}
  {{ return(adapter.dispatch('directory_diff_sql', 'dbt_tablestream')(target, listing_view)) }}
{% endmacro %}


{% macro spark__directory_diff_sql(target, listing_view) %}
  {%- set diff_sql -%}
select
  count_if(s.relative_path is not null) as files,
  count_if(t.relative_path is null) as inserted,
  count_if(s.relative_path is not null and t.relative_path is not null
           and (s.size <> t.size or s.last_modified_time <> t.last_modified_time)) as updated,
  count_if(s.relative_path is null) as deleted
from {{ listing_view }} as s
full outer join {{ target }} as t on s.relative_path = t.relative_path
  {%- endset -%}
  {{ return(diff_sql) }}
{% endmacro %}


{% macro directory_create_sql(target, listing_view, properties) %}
  {{ return(adapter.dispatch('directory_create_sql', 'dbt_tablestream')(target, listing_view, properties)) }}
{% endmacro %}


{% macro spark__directory_create_sql(target, listing_view, properties) %}
  {%- set settings = {'delta.enableChangeDataFeed': 'true'} -%}
  {%- do settings.update(properties or {}) -%}
  {%- set pairs = [] -%}
  {%- for key, value in settings.items() -%}
    {%- do pairs.append(dbt_tablestream._sql_string(key) ~ ' = ' ~ dbt_tablestream._sql_string(value)) -%}
  {%- endfor -%}
  {{ return("create or replace table " ~ target ~ " using delta tblproperties (" ~ pairs | join(', ')
            ~ ") as select relative_path, url, size, last_modified_time, fingerprint from " ~ listing_view) }}
{% endmacro %}


{% macro directory_merge_sql(target, listing_view) %}
  {{ return(adapter.dispatch('directory_merge_sql', 'dbt_tablestream')(target, listing_view)) }}
{% endmacro %}


{#-- WHEN NOT MATCHED BY SOURCE is SQL from Delta 2.4 on Spark 3.4 (Delta 2.3 has it in Scala only):
     directory tables need Delta 2.4 (docs/cluster-engine.md, "Delta version: what works"). --#}
{% macro spark__directory_merge_sql(target, listing_view) %}
  {%- set merge_sql -%}
merge into {{ target }} as t
using {{ listing_view }} as s
on t.relative_path = s.relative_path
when matched and (t.size <> s.size or t.last_modified_time <> s.last_modified_time) then update set *
when not matched then insert *
when not matched by source then delete
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}

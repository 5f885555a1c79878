{% macro stream_file_rows(stream_sql, columns, format='json') %}
  {{ return(adapter.dispatch('stream_file_rows', 'dbt_tablestream')(stream_sql, columns, format)) }}
{% endmacro %}


{#-- The records of the files a directory-table stream's window added or replaced, read with Spark's
     file source `format` (json, csv, parquet, ...): one row per record, `relative_path` first, then
     `columns` ({name: type}) cast to their types. A file whose last event in the window is a
     DELETE is not read. Only these files are read, so a run costs what arrived. --#}
{% macro spark__stream_file_rows(stream_sql, columns, format='json') %}
  {%- set formats = ['json', 'csv', 'parquet', 'orc', 'text', 'avro'] -%}
  {%- if format not in formats -%}
    {{ exceptions.raise_compiler_error(
        "stream_file_rows in model " ~ model.name ~ ": format '" ~ format ~ "' is not a Spark file source. Accepted: "
        ~ formats | join(', ') ~ ".") }}
  {%- endif -%}
  {%- if columns is not mapping or columns | length == 0 -%}
    {{ exceptions.raise_compiler_error(
        "stream_file_rows in model " ~ model.name ~ ": columns takes a mapping of column name to type, for example "
        ~ "{'order_id': 'bigint', 'amount': 'decimal(10,2)'}.") }}
  {%- endif -%}
  {%- set typed = [] -%}
  {%- set empty = [] -%}
  {%- for name, data_type in columns.items() -%}
    {%- set quoted = dbt_tablestream._sql_identifier(name) -%}
    {%- do typed.append('cast(' ~ quoted ~ ' as ' ~ data_type ~ ') as ' ~ quoted) -%}
    {%- do empty.append('cast(null as ' ~ data_type ~ ') as ' ~ quoted) -%}
  {%- endfor -%}
  {%- set nothing = 'select cast(null as string) as relative_path, ' ~ empty | join(', ') ~ ' where 1 = 0' -%}
  {%- if not execute -%}{{ return(nothing) }}{%- endif -%}
  {%- set latest_sql -%}
select relative_path, url from (
  select relative_path, url, __change_type,
    row_number() over (partition by relative_path order by __commit_version desc,
      case when __change_type in ('DELETE', 'UPDATE_BEFORE') then 0 else 1 end desc) as __tablestream_latest
  from {{ stream_sql }} as __tablestream_events
) as __tablestream_files
where __tablestream_latest = 1 and __change_type in ('INSERT', 'UPDATE_AFTER')
order by relative_path
  {%- endset -%}
  {%- set reads = [] -%}
  {%- for file in run_query(latest_sql).rows -%}
    {%- do reads.append('select ' ~ dbt_tablestream._sql_string(file[0]) ~ ' as relative_path, ' ~ typed | join(', ')
                        ~ ' from ' ~ format ~ '.' ~ dbt_tablestream._sql_identifier(file[1])) -%}
  {%- endfor -%}
  {{ return(reads | join('\nunion all\n') if reads else nothing) }}
{% endmacro %}

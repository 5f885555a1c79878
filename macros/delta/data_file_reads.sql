{#-- A log read's data files read by their path (as Parquet, with the columns and narrowing
     Delta's own read would give) or through time travel, where Delta must apply the file's
     deletion vector or column mapping. --#}


{% macro delta_log_time_travel_reads_sql(relation, source_files, files, columns, select_list, statistics=none) %}
  {{ return(adapter.dispatch('delta_log_time_travel_reads_sql', 'dbt_tablestream')(
      relation, source_files, files, columns, select_list, statistics)) }}
{% endmacro %}


{#-- Selects of data files read through time travel: one per read_version, `select_list` from the
     source as of it, restricted to its files (delta_log_files_filter_sql) by their names and by
     what Delta skips files by. `statistics`: the file entries whose partition values and
     statistics narrow the read, matched by path (a vector-changed file's remove action keeps only
     its row count, so its add's are used); none for the files' own. --#}
{% macro spark__delta_log_time_travel_reads_sql(relation, source_files, files, columns, select_list, statistics=none) %}
  {%- set selects = [] -%}
  {%- for version in files | map(attribute='read_version') | unique | sort -%}
    {%- set read = files | selectattr('read_version', 'equalto', version) | list -%}
    {%- set narrowing = read if statistics is none
        else statistics | selectattr('path', 'in', read | map(attribute='path') | list) | list -%}
    {%- do selects.append('select ' ~ select_list ~ ' from ' ~ relation ~ ' version as of ' ~ version ~ '\n    where '
        ~ dbt_tablestream.delta_log_files_filter_sql(narrowing, columns, source_files)) -%}
  {%- endfor -%}
  {{ return(selects) }}
{% endmacro %}


{#-- Whether a file read by its path gives what Delta's read gives: no deletion vector (unless the
     read selects rows by position itself: `by_position`), no column mapping, a plain path (no
     escape, no scheme), and a commit that left the metadata as it was (`travel`: a file of a
     metadata commit is read under its own version's). --#}
{% macro _delta_log_file_readable_by_path(source_files, file, by_position=false) %}
  {{ return((by_position or not file.deletion_vector) and not file.get('travel')
      and source_files.column_mapping in [none, 'none'] and '%' not in file.path and ':' not in file.path) }}
{% endmacro %}


{% macro delta_log_path_reads_sql(source_files, files, columns, tail, described=none, positions=none) %}
  {{ return(adapter.dispatch('delta_log_path_reads_sql', 'dbt_tablestream')(
      source_files, files, columns, tail, described, positions)) }}
{% endmacro %}


{#-- Selects of data files read by their paths: the source's columns (`columns`, or none for
     none of them), then `tail`. Files in one directory whose footers list the same columns and
     types and whose select lists are the same (their partition values) are one Parquet relation,
     `parquet.`<directory>/{a,b}``: each relation of a query is analysed on its own, so a file per
     relation costs an analysis per file (bench/README.md, "The Delta log read"). A name outside
     [A-Za-z0-9._=-] is read alone, as no glob must read it. `described`: path -> its footer's
     columns, described once a window (_delta_log_direct_reads). `positions`: path -> the row
     positions to read of it, or none for every row. A relation of several files keeps a row whose
     position any of them reads before it compares the row's file name: the comparisons, one per
     file for every row scanned, took most of a scattered window's scan before the position check
     came first (bench/README.md, "The Delta log read"). --#}
{% macro spark__delta_log_path_reads_sql(source_files, files, columns, tail, described=none, positions=none) %}
  {%- set described = described if described is not none else {} -%}
  {%- set groups = {} -%}
  {%- for file in files -%}
    {%- if columns is not none and described.get(file.path) is none -%}
      {%- set schema = dbt_tablestream._delta_log_file_columns_from_statistics(source_files, file, columns) -%}
      {%- if schema is none -%}
        {%- set schema = dbt_tablestream.described_columns('select * from '
            ~ dbt_tablestream._delta_log_file_relation(source_files, file.path)) -%}
      {%- endif -%}
      {%- do described.update({file.path: schema}) -%}
    {%- endif -%}
    {%- set schema = described[file.path] if columns is not none else [] -%}
    {%- set selected = dbt_tablestream.delta_log_file_columns_sql(source_files, file, columns, schema)
        ~ ', ' if columns is not none else '' -%}
    {%- set directory = file.path[:file.path | length - file.name | length] -%}
    {%- set alone = modules.re.fullmatch('[A-Za-z0-9._=-]+', file.name) is none -%}
    {%- set key = directory ~ '\n' ~ schema | string ~ '\n' ~ selected ~ ('\n' ~ file.path if alone else '') -%}
    {%- if key not in groups -%}
      {%- do groups.update({key:
          {'directory': directory, 'selected': selected, 'names': [], 'rows': [], 'positions': {}}}) -%}
    {%- endif -%}
    {%- do groups[key]['names'].append(file.name) -%}
    {%- if positions is not none -%}
      {%- do groups[key]['rows'].append('(_metadata.file_name = ' ~ dbt_tablestream._sql_string(file.name)
          ~ ' and _metadata.row_index in (' ~ positions[file.path] | join(', ') ~ '))') -%}
      {%- for position in positions[file.path] -%}
        {%- do groups[key]['positions'].update({position: true}) -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set selects = [] -%}
  {%- for group in groups.values() -%}
    {%- set names = group['names'] -%}
    {%- set leaf = names[0] if names | length == 1 else '{' ~ names | join(',') ~ '}' -%}
    {%- set where = '' -%}
    {%- if positions is not none -%}
      {%- set any_file = '_metadata.row_index in (' ~ group['positions'].keys() | sort | join(', ') ~ ')' -%}
      {%- set where = '\n    where '
          ~ (any_file if names | length == 1
              else any_file ~ '\n      and (' ~ group['rows'] | join('\n      or ') ~ ')') -%}
    {%- endif -%}
    {%- do selects.append('select ' ~ group['selected'] ~ tail ~ ' from '
        ~ dbt_tablestream._delta_log_file_relation(source_files, group['directory'] ~ leaf) ~ where) -%}
  {%- endfor -%}
  {{ return(selects) }}
{% endmacro %}


{#-- A data file's own columns as its statistics prove them, or none where they do not: Delta
     writes a file with every data column of the table's schema then and counts each one's NULLs
     (`nullCount`), and without column mapping a column is never dropped or renamed, so a file
     that counts every data column of `columns` has exactly those. Its types are theirs unless
     the table may have widened a type (the typeWidening feature). None for a file without such
     statistics: one written before a column was added, or past the columns Delta collects
     statistics for (delta.dataSkippingNumIndexedCols), is described from its footer instead; so
     is every file of a source with a struct, array or map column, whose nested fields may have
     been added after the file was written. --#}
{% macro _delta_log_file_columns_from_statistics(source_files, file, columns) %}
  {%- set counted = (file.get('stats') or {}).get('nullCount') -%}
  {%- if source_files.get('type_widening', true) or counted is not mapping -%}{{ return(none) }}{%- endif -%}
  {%- if '<' in columns | map(attribute='dtype') | map('string') | join(' ') -%}{{ return(none) }}{%- endif -%}
  {%- set counted = counted.keys() | map('lower') | list -%}
  {%- set partition_columns = source_files.partition_columns | map('lower') | list -%}
  {%- set schema = [] -%}
  {%- for column in columns if column.name | lower not in partition_columns -%}
    {%- if column.name | lower not in counted -%}{{ return(none) }}{%- endif -%}
    {%- do schema.append({'name': column.name, 'dtype': column.dtype}) -%}
  {%- endfor -%}
  {{ return(schema) }}
{% endmacro %}


{#-- Data files of the source read by their path, as Parquet: `path` is relative to the table's
     location, one file's or a glob of names in one directory (`<directory>/{a,b}`). --#}
{% macro _delta_log_file_relation(source_files, path) %}
  {{ return('parquet.' ~ dbt_tablestream._sql_identifier(source_files.location.rstrip('/') ~ '/' ~ path)) }}
{% endmacro %}


{% macro delta_log_file_columns_sql(source_files, file, columns, schema) %}
  {{ return(adapter.dispatch('delta_log_file_columns_sql', 'dbt_tablestream')(source_files, file, columns, schema)) }}
{% endmacro %}


{#-- The source's columns as a data file read by path gives them: a partition column from the
     file's partition values, a column the file lacks (added to the table after it was written) as
     NULL, as Delta reads it; each cast to the table's type. `schema`: the file's own columns
     (described_columns of it read by path). --#}
{% macro spark__delta_log_file_columns_sql(source_files, file, columns, schema) %}
  {%- set present = schema | map(attribute='name') | map('lower') | list -%}
  {%- set partition_columns = source_files.partition_columns | map('lower') | list -%}
  {%- set values = {} -%}
  {%- for name, value in file.partition.items() -%}{%- do values.update({name | lower: value}) -%}{%- endfor -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}
    {%- set name = column.name | lower -%}
    {%- if name in partition_columns -%}
      {%- set value = 'null' if values.get(name) is none else dbt_tablestream._sql_string(values[name]) -%}
    {%- elif name in present -%}
      {%- set value = dbt_tablestream._sql_identifier(column.name) -%}
    {%- else -%}
      {%- set value = 'null' -%}
    {%- endif -%}
    {%- do selected.append('cast(' ~ value ~ ' as ' ~ column.dtype ~ ') as '
                           ~ dbt_tablestream._sql_identifier(column.name)) -%}
  {%- endfor -%}
  {{ return(selected | join(', ')) }}
{% endmacro %}


{% macro delta_log_files_filter_sql(files, columns, source_files) %}
  {{ return(adapter.dispatch('delta_log_files_filter_sql', 'dbt_tablestream')(files, columns, source_files)) }}
{% endmacro %}


{#-- Which rows of a version belong to `files`: Delta's `_metadata.file_name`, exact. Delta does
     not skip files by it, so the filter also names what it does skip by: the files' partition
     values, and each file's statistics range of the whole-number and date columns (a row of the
     file lies in it, or is NULL there). Both are left out under column mapping, where the log
     names columns by their physical names, and the ranges for more than 200 files. --#}
{% macro spark__delta_log_files_filter_sql(files, columns, source_files) %}
  {%- set names = [] -%}
  {%- for file in files -%}{%- do names.append(dbt_tablestream._sql_string(file.name)) -%}{%- endfor -%}
  {%- set conditions = ['_metadata.file_name in (' ~ names | unique | join(', ') ~ ')'] -%}
  {%- if source_files.column_mapping not in [none, 'none'] -%}{{ return(conditions[0]) }}{%- endif -%}
  {%- set types = {} -%}
  {%- for column in columns -%}{%- do types.update({column.name | lower: column.dtype | lower}) -%}{%- endfor -%}
  {%- set partition_columns = source_files.partition_columns | map('lower') | list -%}
  {%- if partition_columns -%}
    {%- set partitions = [] -%}
    {%- for file in files -%}
      {%- set terms = [] -%}
      {%- for name, value in file.partition.items() if name | lower in types -%}
        {%- do terms.append(dbt_tablestream._sql_identifier(name)
            ~ (' is null' if value is none
                else ' <=> cast(' ~ dbt_tablestream._sql_string(value) ~ ' as ' ~ types[name | lower] ~ ')')) -%}
      {%- endfor -%}
      {%- do partitions.append('(' ~ (terms | join(' and ') if terms else 'true') ~ ')') -%}
    {%- endfor -%}
    {%- do conditions.append('(' ~ partitions | unique | join(' or ') ~ ')') -%}
  {%- endif -%}
  {%- set ranged = [] -%}
  {%- for name, type in types.items() if name not in partition_columns
        and (type in ['bigint', 'int', 'integer', 'smallint', 'tinyint', 'long', 'short', 'byte', 'date']) -%}
    {%- do ranged.append(name) -%}
  {%- endfor -%}
  {%- set ranges = [] -%}
  {%- for file in files if ranged and files | length <= 200 -%}
    {%- set low, high = file.stats.get('minValues') or {}, file.stats.get('maxValues') or {} -%}
    {%- set terms = [] -%}
    {%- for name in ranged -%}
      {%- set bounds = [] -%}
      {%- for key, value in low.items() if key | lower == name and value is not none and high.get(key) is not none -%}
        {%- do bounds.extend([value | string, high[key] | string]) -%}
      {%- endfor -%}
      {%- set pattern = '\\d{4}-\\d{2}-\\d{2}' if types[name] == 'date' else '-?\\d+' -%}
      {%- if bounds | length == 2 and modules.re.fullmatch(pattern, bounds[0])
          and modules.re.fullmatch(pattern, bounds[1]) -%}
        {%- set quote = "date'" if types[name] == 'date' else '' -%}
        {%- set end = "'" if types[name] == 'date' else '' -%}
        {%- do terms.append('(' ~ dbt_tablestream._sql_identifier(name) ~ ' between ' ~ quote ~ bounds[0] ~ end
            ~ ' and ' ~ quote ~ bounds[1] ~ end ~ ' or ' ~ dbt_tablestream._sql_identifier(name) ~ ' is null)') -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do ranges.append('(' ~ terms | join(' and ') ~ ')' if terms else 'true') -%}
  {%- endfor -%}
  {%- if ranges and 'true' not in ranges -%}
    {%- do conditions.append('(' ~ ranges | unique | join('\n      or ') ~ ')') -%}
  {%- endif -%}
  {{ return(conditions | join('\n    and ')) }}
{% endmacro %}

{#-- Changes read from the Delta log's file actions (stream_read: delta_log, on_feed_off: delta_log;
     docs/architecture.md, "Three ways to read changes"): where the change data feed did not
     record a commit, its changes are the rows of the files it removed (as of the version before
     it) and the rows of the files it added (as of its own version), the rows both sides hold
     cancelling one for one as carry-overs (drop_carryovers_sql). A file is read by its path where
     Delta would add nothing to the read, else through time travel restricted to the commit's
     files, so that Delta applies deletion vectors and column mapping. --#}


{#-- What a log read needs of the source (_stream_source_state_of's `files`), the model's
     unique_key as _settings_from_configs lists it (`key_columns`, to pair a key's delete and insert
     into an update) and which of the window's versions to read from the log (`versions`: none for
     every one). --#}
{% macro _stream_files(files, key_columns) %}
  {{ return({'location': files.location, 'partition_columns': files.partition_columns,
             'column_mapping': files.column_mapping, 'feed_on': files.feed_on,
             'type_widening': files.get('type_widening', true), 'key_columns': key_columns, 'versions': none}) }}
{% endmacro %}


{% macro delta_log_changes_sql(relation, stream, commits, columns) %}
  {{ return(adapter.dispatch('delta_log_changes_sql', 'dbt_tablestream')(relation, stream, commits, columns)) }}
{% endmacro %}


{#-- The raw change rows of `commits` (delta_log_commits) in the change feed's shape: every source
     column, then _change_type ('delete' for a removed file's rows, 'insert' for an added file's),
     _commit_version and _commit_timestamp, as {rewritten, one_sided}: the rows of the commits that
     both removed and added files, whose carry-overs cancel and whose keys pair (drop_carryovers_sql,
     paired_changes_sql), and the rows of the commits that only added files (an append) or only
     removed them, which have neither; each a union of selects, or none. A file is read by
     its path where Delta would add nothing to the read (no deletion vector, no column mapping, a
     plain path; at most 50 files a window read with their rows, vector-changed files' included, as
     each may cost a DESCRIBE of its footer at compile time: _delta_log_direct_reads): a time-travel
     read of a version costs its snapshot and, restricted by file name, scans every file of it
     (bench/README.md, "The Delta log read"). A file a commit both removed and added is one whose
     deletion vector it changed (delta_log_vector_changes_sql), read from its vectors' own bytes
     where the window's vectors can be decoded (delta_log_decode_vectors). --#}
{% macro spark__delta_log_changes_sql(relation, stream, commits, columns) %}
  {%- set rewritten, one_sided = [], [] -%}
  {%- set direct = dbt_tablestream._delta_log_direct_reads() -%}
  {%- do dbt_tablestream.delta_log_decode_vectors(stream, commits) -%}
  {%- set by_position = dbt_tablestream.delta_log_vector_position_reads_sql(stream, commits, columns, direct) -%}
  {%- do rewritten.extend(by_position.selects) -%}
  {%- set by_path = {'rewritten': [], 'one_sided': []} -%}
  {%- for commit in commits -%}
    {%- set part = 'rewritten' if commit.adds and commit.removes else 'one_sided' -%}
    {%- set parts = rewritten if part == 'rewritten' else one_sided -%}
    {%- set revectored = dbt_tablestream._delta_log_revectored_paths(commit) -%}
    {%- for side, files in [('delete', commit.removes | rejectattr('path', 'in', revectored) | list),
                            ('insert', commit.adds | rejectattr('path', 'in', revectored) | list)] if files -%}
      {%- set travelled = [] -%}
      {%- for file in files -%}
        {%- if dbt_tablestream._delta_log_file_readable_by_path(stream.files, file)
            and dbt_tablestream._delta_log_take_direct_read(direct, file) -%}
          {%- do by_path[part].append({'file': file, 'side': side, 'commit': commit}) -%}
        {%- else -%}
          {%- do travelled.append(file) -%}
        {%- endif -%}
      {%- endfor -%}
      {%- do parts.extend(dbt_tablestream.delta_log_time_travel_reads_sql(relation, stream.files, travelled, columns,
            '*, ' ~ dbt_tablestream.delta_log_change_columns_sql(side, commit))) -%}
    {%- endfor -%}
    {%- if by_position.paths_left[commit.version] -%}
      {%- do parts.extend(dbt_tablestream.delta_log_vector_changes_sql(relation, stream, commit,
          by_position.paths_left[commit.version], columns, direct)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do rewritten.extend(dbt_tablestream.delta_log_file_reads_sql(stream.files, by_path.rewritten, columns,
      direct.described)) -%}
  {%- do one_sided.extend(dbt_tablestream.delta_log_file_reads_sql(stream.files, by_path.one_sided, columns,
      direct.described)) -%}
  {{ return({'rewritten': rewritten | join('\n  union all\n  ') if rewritten else none,
             'one_sided': one_sided | join('\n  union all\n  ') if one_sided else none}) }}
{% endmacro %}


{% macro delta_log_file_reads_sql(source_files, reads, columns, described) %}
  {{ return(adapter.dispatch('delta_log_file_reads_sql', 'dbt_tablestream')(source_files, reads, columns, described)) }}
{% endmacro %}


{#-- Selects of the rows of data files read by their paths (delta_log_path_reads_sql), as the
     commits of a window added or removed them: `reads`, a list of {file, side, commit}. A file
     is scanned once however many of the window's commits read it, and its rows are joined by
     path to each commit and side that does: a file one commit added and the next removed (a
     run of UPDATEs on one part of a table) was scanned twice, and each commit's files took a
     Parquet relation of their own, each analysed on its own (bench/README.md, "The Delta log
     read"). The join is a broadcast of the window's few file entries, so no row is shuffled for it.
     A single commit and side needs no join. --#}
{% macro spark__delta_log_file_reads_sql(source_files, reads, columns, described) %}
  {%- if not reads -%}{{ return([]) }}{%- endif -%}
  {%- set files = {} -%}
  {%- for read in reads -%}{%- do files.setdefault(read.file.path, read.file) -%}{%- endfor -%}
  {%- if (reads | map(attribute='side') | unique | list | length) == 1
      and (reads | map(attribute='commit.version') | unique | list | length) == 1 -%}
    {{ return(dbt_tablestream.delta_log_path_reads_sql(source_files, files.values() | list, columns,
        dbt_tablestream.delta_log_change_columns_sql(reads[0].side, reads[0].commit), described)) }}
  {%- endif -%}
  {%- set directories = {} -%}
  {%- for file in files.values() -%}
    {%- do directories.setdefault(file.path[:file.path | length - file.name | length], []).append(file) -%}
  {%- endfor -%}
  {%- set selects = [] -%}
  {%- for directory, in_directory in directories.items() -%}
    {%- do selects.extend(dbt_tablestream.delta_log_path_reads_sql(source_files, in_directory, columns,
        'concat(' ~ dbt_tablestream._sql_string(directory) ~ ', _metadata.file_name) as __tablestream_path',
        described)) -%}
  {%- endfor -%}
  {%- set entries = [] -%}
  {%- for read in reads -%}
    {%- do entries.append('(' ~ dbt_tablestream._sql_string(read.file.path) ~ ', '
        ~ dbt_tablestream._sql_string(read.side) ~ ', ' ~ read.commit.version ~ ', ' ~ read.commit.millis ~ ')') -%}
  {%- endfor -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}
    {%- do selected.append('__tablestream_files.' ~ dbt_tablestream._sql_identifier(column.name)) -%}
  {%- endfor -%}
  {%- set sql -%}
select /*+ broadcast(__tablestream_reads) */ {{ selected | join(', ') }},
    __tablestream_reads._change_type, cast(__tablestream_reads._commit_version as bigint) as _commit_version,
    timestamp_millis(__tablestream_reads.__tablestream_millis) as _commit_timestamp
  from (
    {{ selects | join('\n    union all\n    ') }}
  ) as __tablestream_files
  join (values {{ entries | join(',\n    ') }})
    as __tablestream_reads(__tablestream_path, _change_type, _commit_version, __tablestream_millis)
    on __tablestream_files.__tablestream_path = __tablestream_reads.__tablestream_path
  {%- endset -%}
  {{ return([sql]) }}
{% endmacro %}


{% macro delta_log_change_columns_sql(side, commit) %}
  {{ return(adapter.dispatch('delta_log_change_columns_sql', 'dbt_tablestream')(side, commit)) }}
{% endmacro %}


{#-- A commit's _change_type, _commit_version and _commit_timestamp columns for one side. --#}
{% macro spark__delta_log_change_columns_sql(side, commit) %}
  {{ return(dbt_tablestream._sql_string(side) ~ ' as _change_type, cast(' ~ commit.version ~ ' as bigint) as '
      ~ '_commit_version, timestamp_millis(' ~ commit.millis ~ ') as _commit_timestamp') }}
{% endmacro %}


{#-- The window's budget of data files read by their path with their rows: `left`, how many more
     it may read so (each may cost a DESCRIBE of its footer at compile time, unless its statistics
     prove its columns: _delta_log_file_columns_from_statistics), and `described`, path -> its
     columns (none until known), so a file read again costs nothing more. --#}
{% macro _delta_log_direct_reads() %}
  {{ return(namespace(left=50, described={})) }}
{% endmacro %}


{#-- Whether `file` may be read by its path with its rows within the budget `direct`
     (_delta_log_direct_reads), taking its place in it. --#}
{% macro _delta_log_take_direct_read(direct, file) %}
  {%- if file.path in direct.described -%}{{ return(true) }}{%- endif -%}
  {%- if direct.left <= 0 -%}{{ return(false) }}{%- endif -%}
  {%- set direct.left = direct.left - 1 -%}
  {%- do direct.described.update({file.path: none}) -%}
  {{ return(true) }}
{% endmacro %}

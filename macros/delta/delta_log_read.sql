{#-- Changes read from the Delta log's file actions (stream_read: delta_log, on_feed_off: delta_log;
     docs/architecture.md, "Three ways to read changes"): where the change data feed did not
     record a commit, its changes are the rows of the files it removed (as of the version before
     it) and the rows of the files it added (as of its own version), the rows both sides hold
     cancelling one for one as carry-overs (drop_carryovers_sql). A file is read by its path where
     Delta would add nothing to the read, else through time travel restricted to the commit's
     files, so that Delta applies deletion vectors and column mapping. --#}


{#-- What a log read needs of the source (stream_source_state_of's `files`), the model's
     unique_key as stream_settings_of lists it (`key_columns`, to pair a key's delete and insert
     into an update) and which of the window's versions to read from the log (`versions`: none for
     every one). --#}
{% macro stream_files(files, key_columns) %}
  {{ return({'location': files.location, 'partition_columns': files.partition_columns, 'column_mapping': files.column_mapping,
             'feed_on': files.feed_on, 'type_widening': files.get('type_widening', true), 'key_columns': key_columns, 'versions': none}) }}
{% endmacro %}


{% macro delta_log_actions_sql(location, versions) %}
  {{ return(adapter.dispatch('delta_log_actions_sql', 'dbt_tablestream')(location, versions)) }}
{% endmacro %}


{#-- The commit files of `versions` (`<location>/_delta_log/<version>.json`, one action per line),
     read as text and parsed with the fields the read needs: every add and remove with its
     partition values, statistics and whether it changed data (an OPTIMIZE's do not, yet they say
     a file's path was acted on), whether the commit changed the table's metadata, its operation
     and its time (the in-commit timestamp, or the commit file's time, as Delta's change feed
     takes it). --#}
{% macro spark__delta_log_actions_sql(location, versions) %}
  {%- set names = [] -%}
  {%- for version in versions -%}{%- do names.append('%020d' | format(version | int)) -%}{%- endfor -%}
  {%- set files = location.rstrip('/') ~ '/_delta_log/' ~ ('{' ~ names | join(',') ~ '}' if names | length > 1 else names[0]) ~ '.json' -%}
  {%- set file_action = 'struct<path: string, partitionValues: map<string, string>, dataChange: boolean, stats: string, '
      ~ 'deletionVector: struct<storageType: string, pathOrInlineDv: string, offset: int, sizeInBytes: int, cardinality: bigint>>' -%}
  {%- set action = 'struct<commitInfo: struct<operation: string, inCommitTimestamp: bigint>, add: ' ~ file_action
                   ~ ', remove: ' ~ file_action ~ ', metaData: struct<id: string>>' -%}
  {%- set sql -%}
select
  cast(substring(_metadata.file_name, 1, 20) as bigint) as version,
  unix_millis(_metadata.file_modification_time) as file_millis,
  action.commitInfo.operation as operation,
  action.commitInfo.inCommitTimestamp as in_commit_millis,
  case when action.add is not null then 'add' when action.remove is not null then 'remove'
       when action.metaData is not null then 'metadata' else 'commit' end as kind,
  coalesce(action.add.path, action.remove.path) as path,
  to_json(coalesce(action.add.partitionValues, action.remove.partitionValues)) as partition_values,
  coalesce(action.add.stats, action.remove.stats) as stats,
  coalesce(action.add.deletionVector, action.remove.deletionVector) is not null as deletion_vector,
  to_json(coalesce(action.add.deletionVector, action.remove.deletionVector)) as vector,
  coalesce(action.add.deletionVector.cardinality, action.remove.deletionVector.cardinality, 0) as deleted_rows,
  coalesce(action.add.dataChange, action.remove.dataChange, false) as data_change
from (
  select _metadata, from_json(value, '{{ action }}') as action
  from text.`{{ files }}`
) as __tablestream_log
where action.commitInfo is not null or action.metaData is not null or action.add is not null or action.remove is not null
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}


{% macro delta_log_commits(relation, stream, versions) %}
  {{ return(adapter.dispatch('delta_log_commits', 'dbt_tablestream')(relation, stream, versions)) }}
{% endmacro %}


{#-- The data commits among `versions` (consecutive), oldest first: {version, operation, millis,
     adds, removes}, each file {name, path, partition (its partition values), stats (Delta's
     per-file statistics), deletion_vector (whether it has one), deleted_rows (its deletion
     vector's cardinality), vector (the log's descriptor of it, or none), read_version}. `read_version` is the version a time-travel read of the
     file uses: a removed file's rows as of the version before its commit, an added file's as of
     its commit, moved to the version before the first of `versions` or to the last of them where
     no commit in between acts on its path or changes the metadata. The file is the same there, and
     a window's reads then share two versions, the last one Delta's cached latest
     (docs/architecture.md, "Three ways to read changes").
     A commit that changed the table's metadata and wrote files at once (other than a window's
     first commit that removed none, a CREATE TABLE AS SELECT) is read only if the columns Delta
     reads before it and after it are the same (a RESTORE that puts back the same schema), its
     files through time travel (`travel`), as each version reads its own files under its own
     metadata; else it is refused (a REPLACE TABLE, an overwrite or MERGE that changed the
     schema): its two sides would be read with different columns. --#}
{% macro spark__delta_log_commits(relation, stream, versions) %}
  {%- if not versions -%}{{ return([]) }}{%- endif -%}
  {%- set rows = run_query(dbt_tablestream.delta_log_actions_sql(stream.files.location, versions)).rows -%}
  {%- set commits = {} -%}
  {#-- Per path, the versions whose adds or removes name it, data-changing or not. --#}
  {%- set acted = {} -%}
  {%- set metadata_versions = [] -%}
  {%- for row in rows -%}
    {%- set version = row['version'] | int -%}
    {%- if version not in commits -%}
      {%- do commits.update({version: {'version': version, 'operation': none, 'millis': row['file_millis'] | int, 'adds': [], 'removes': [], 'metadata': false}}) -%}
    {%- endif -%}
    {%- set commit = commits[version] -%}
    {%- if row['kind'] == 'commit' -%}
      {%- do commit.update({'operation': row['operation']}) -%}
      {%- if row['in_commit_millis'] is not none -%}{%- do commit.update({'millis': row['in_commit_millis'] | int}) -%}{%- endif -%}
    {%- elif row['kind'] == 'metadata' -%}
      {%- do commit.update({'metadata': true}) -%}
      {%- do metadata_versions.append(version) -%}
    {%- else -%}
      {%- do acted.setdefault(row['path'], []).append(version) -%}
    {%- endif -%}
    {%- if row['kind'] in ['add', 'remove'] and row['data_change'] -%}
      {%- do commit[row['kind'] ~ 's'].append({'name': row['path'].split('/')[-1], 'path': row['path'], 'deletion_vector': row['deletion_vector'],
          'deleted_rows': row['deleted_rows'] | int, 'vector': fromjson(row['vector']) if row['vector'] else none,
          'partition': fromjson(row['partition_values']) if row['partition_values'] else {},
          'stats': fromjson(row['stats']) if row['stats'] else {}}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set first, last = versions | min, versions | max -%}
  {%- set ordered = [] -%}
  {%- set previous = namespace(millis=none) -%}
  {%- for version in commits.keys() | sort -%}
    {%- set commit = commits[version] -%}
    {#-- Delta's change feed makes commit times strictly increasing from version to version. --#}
    {%- if previous.millis is not none and commit.millis <= previous.millis -%}{%- do commit.update({'millis': previous.millis + 1}) -%}{%- endif -%}
    {%- set previous.millis = commit.millis -%}
    {%- if commit.metadata and (commit.removes or (commit.adds and version != stream.after + 1)) -%}
      {%- if dbt_tablestream.source_columns_as_of(relation, version - 1) != dbt_tablestream.source_columns_as_of(relation, version) -%}
        {%- set remedy = dbt_tablestream.stream_remedy(stream) -%}
        {{ exceptions.raise_compiler_error(stream.subject ~ ": version " ~ version
            ~ " of " ~ stream.source ~ " (" ~ (commit.operation or 'a commit')
            ~ ") changed the table's columns and rewrote its files in one commit, which a read of the Delta log's file actions cannot "
            ~ "split into row changes. Nothing was written. Enable the change data feed on the source to read such commits, or leave version "
            ~ version ~ " out of the read: " ~ remedy[0] | lower ~ remedy[1:]) }}
      {%- endif -%}
      {%- for file in commit.removes + commit.adds -%}{%- do file.update({'travel': true}) -%}{%- endfor -%}
    {%- endif -%}
    {%- for file in commit.removes -%}
      {%- set between = (acted[file.path] + metadata_versions) | select('ge', first) | select('lt', version) | list -%}
      {%- do file.update({'read_version': version - 1 if between else first - 1}) -%}
    {%- endfor -%}
    {%- for file in commit.adds -%}
      {%- set between = (acted[file.path] + metadata_versions) | select('gt', version) | select('le', last) | list -%}
      {%- do file.update({'read_version': version if between else last}) -%}
    {%- endfor -%}
    {%- if commit.adds or commit.removes -%}{%- do ordered.append(commit) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(ordered) }}
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
     plain path; at most 50 files a window read with their rows, vector-changed files' included,
     as each may cost a DESCRIBE of its footer at compile time: delta_log_direct_reads): a time-travel
     read of a version costs its snapshot and, restricted by file name, scans every file of it
     (measured in bench/README.md). A file a commit both removed and added is one whose deletion
     vector it changed (delta_log_vector_changes_sql), read from its vectors' own bytes where the
     window's vectors can be decoded (delta_log_decode_vectors). --#}
{% macro spark__delta_log_changes_sql(relation, stream, commits, columns) %}
  {%- set rewritten, one_sided = [], [] -%}
  {%- set direct = dbt_tablestream.delta_log_direct_reads() -%}
  {%- do dbt_tablestream.delta_log_decode_vectors(stream, commits) -%}
  {%- set by_position = dbt_tablestream.delta_log_vector_position_reads_sql(stream, commits, columns, direct) -%}
  {%- do rewritten.extend(by_position.selects) -%}
  {%- set by_path = {'rewritten': [], 'one_sided': []} -%}
  {%- for commit in commits -%}
    {%- set part = 'rewritten' if commit.adds and commit.removes else 'one_sided' -%}
    {%- set parts = rewritten if part == 'rewritten' else one_sided -%}
    {%- set revectored = dbt_tablestream.delta_log_revectored_paths(commit) -%}
    {%- for side, files in [('delete', commit.removes | rejectattr('path', 'in', revectored) | list),
                            ('insert', commit.adds | rejectattr('path', 'in', revectored) | list)] if files -%}
      {%- set travelled = [] -%}
      {%- for file in files -%}
        {%- if dbt_tablestream.delta_log_file_readable_by_path(stream.files, file) and dbt_tablestream.delta_log_take_direct_read(direct, file) -%}
          {%- do by_path[part].append({'file': file, 'side': side, 'commit': commit}) -%}
        {%- else -%}
          {%- do travelled.append(file) -%}
        {%- endif -%}
      {%- endfor -%}
      {%- do parts.extend(dbt_tablestream.delta_log_time_travel_reads_sql(relation, stream.files, travelled, columns,
            '*, ' ~ dbt_tablestream.delta_log_change_columns_sql(side, commit))) -%}
    {%- endfor -%}
    {%- if by_position.paths_left[commit.version] -%}
      {%- do parts.extend(dbt_tablestream.delta_log_vector_changes_sql(relation, stream, commit, by_position.paths_left[commit.version], columns, direct)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do rewritten.extend(dbt_tablestream.delta_log_file_reads_sql(stream.files, by_path.rewritten, columns, direct.described)) -%}
  {%- do one_sided.extend(dbt_tablestream.delta_log_file_reads_sql(stream.files, by_path.one_sided, columns, direct.described)) -%}
  {{ return({'rewritten': rewritten | join('\n  union all\n  ') if rewritten else none,
             'one_sided': one_sided | join('\n  union all\n  ') if one_sided else none}) }}
{% endmacro %}


{#-- Selects of the rows of data files read by their paths (delta_log_path_reads_sql), as the
     commits of a window added or removed them: `reads`, a list of {file, side, commit}. A file
     is scanned once however many of the window's commits read it, and its rows are joined by
     path to each commit and side that does: a file one commit added and the next removed (a
     run of UPDATEs on one part of a table) was scanned twice, and each commit's files took a
     Parquet relation of their own, each analysed on its own (bench/README.md). The join is a
     broadcast of the window's few file entries, so no row is shuffled for it. A single commit
     and side needs no join. --#}
{% macro delta_log_file_reads_sql(source_files, reads, columns, described) %}
  {%- if not reads -%}{{ return([]) }}{%- endif -%}
  {%- set files = {} -%}
  {%- for read in reads -%}{%- do files.setdefault(read.file.path, read.file) -%}{%- endfor -%}
  {%- if (reads | map(attribute='side') | unique | list | length) == 1 and (reads | map(attribute='commit.version') | unique | list | length) == 1 -%}
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
          'concat(' ~ dbt_tablestream.sql_string(directory) ~ ', _metadata.file_name) as __tablestream_path', described)) -%}
  {%- endfor -%}
  {%- set entries = [] -%}
  {%- for read in reads -%}
    {%- do entries.append('(' ~ dbt_tablestream.sql_string(read.file.path) ~ ', ' ~ dbt_tablestream.sql_string(read.side) ~ ', '
        ~ read.commit.version ~ ', ' ~ read.commit.millis ~ ')') -%}
  {%- endfor -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}{%- do selected.append('__tablestream_files.' ~ adapter.quote(column.name)) -%}{%- endfor -%}
  {%- set sql -%}
select /*+ broadcast(__tablestream_reads) */ {{ selected | join(', ') }},
    __tablestream_reads._change_type, cast(__tablestream_reads._commit_version as bigint) as _commit_version,
    timestamp_millis(__tablestream_reads.__tablestream_millis) as _commit_timestamp
  from (
    {{ selects | join('\n    union all\n    ') }}
  ) as __tablestream_files
  join (values {{ entries | join(',\n    ') }}) as __tablestream_reads(__tablestream_path, _change_type, _commit_version, __tablestream_millis)
    on __tablestream_files.__tablestream_path = __tablestream_reads.__tablestream_path
  {%- endset -%}
  {{ return([sql]) }}
{% endmacro %}


{#-- The paths a commit both removed and added: the files whose deletion vector it changed. --#}
{% macro delta_log_revectored_paths(commit) %}
  {%- set readded = commit.adds | map(attribute='path') | list -%}
  {{ return(commit.removes | selectattr('path', 'in', readded) | map(attribute='path') | list) }}
{% endmacro %}


{#-- The window's budget of data files read by their path with their rows: `left`, how many more
     it may read so (each may cost a DESCRIBE of its footer at compile time, unless its statistics
     prove its columns: delta_log_file_columns_from_statistics), and `described`, path -> its
     columns (none until known), so a file read again costs nothing more. --#}
{% macro delta_log_direct_reads() %}
  {{ return(namespace(left=50, described={})) }}
{% endmacro %}


{#-- Whether `file` may be read by its path with its rows within the budget `direct`
     (delta_log_direct_reads), taking its place in it. --#}
{% macro delta_log_take_direct_read(direct, file) %}
  {%- if file.path in direct.described -%}{{ return(true) }}{%- endif -%}
  {%- if direct.left <= 0 -%}{{ return(false) }}{%- endif -%}
  {%- set direct.left = direct.left - 1 -%}
  {%- do direct.described.update({file.path: none}) -%}
  {{ return(true) }}
{% endmacro %}


{#-- A commit's _change_type, _commit_version and _commit_timestamp columns for one side. --#}
{% macro delta_log_change_columns_sql(side, commit) %}
  {{ return(dbt_tablestream.sql_string(side) ~ ' as _change_type, cast(' ~ commit.version ~ ' as bigint) as _commit_version, '
      ~ 'timestamp_millis(' ~ commit.millis ~ ') as _commit_timestamp') }}
{% endmacro %}


{#-- The changes of the files whose deletion vector a commit changed (removed and added again under
     one path): its deletes are the rows the file held before the commit at row positions it no
     longer holds after it, matched by `_metadata.row_index` within the file, so nothing the file
     still holds is read twice or cancelled as a carry-over. A DELETE, UPDATE or MERGE only
     extends a file's deletion vector; any other commit, or a vector that shrank, may also bring
     rows back: those are its inserts, found the same way the other way round. For the files whose
     vectors were not decoded (delta_log_vector_position_reads_sql reads the others). `direct`:
     the window's budget of files read by path with their rows (delta_log_direct_reads). --#}
{% macro delta_log_vector_changes_sql(relation, stream, commit, paths, columns, direct=none) %}
  {%- set direct = direct if direct is not none else dbt_tablestream.delta_log_direct_reads() -%}
  {%- set vectors = namespace(only_extended=commit.operation in ['DELETE', 'UPDATE', 'MERGE']) -%}
  {%- for file in commit.adds | selectattr('path', 'in', paths) -%}
    {%- set before = commit.removes | selectattr('path', 'equalto', file.path) | first -%}
    {%- if file.deleted_rows < before.deleted_rows -%}{%- set vectors.only_extended = false -%}{%- endif -%}
  {%- endfor -%}
  {%- set quoted = dbt_tablestream.quoted_columns(columns | map(attribute='name')) -%}
  {%- set parts = [] -%}
  {%- for side, held, lost in [('delete', 'removes', 'adds'), ('insert', 'adds', 'removes')]
        if side == 'delete' or not vectors.only_extended -%}
    {%- do parts.append('select ' ~ quoted ~ ', ' ~ dbt_tablestream.delta_log_change_columns_sql(side, commit) ~ ' from (\n    '
        ~ dbt_tablestream.delta_log_positions_sql(relation, stream, commit, paths, held, columns, direct) ~ '\n  ) as __tablestream_held left anti join (\n    '
        ~ dbt_tablestream.delta_log_positions_sql(relation, stream, commit, paths, lost, columns, none) ~ '\n  ) as __tablestream_still_held '
        ~ 'using (__tablestream_file, __tablestream_row_index)') -%}
  {%- endfor -%}
  {{ return(parts) }}
{% endmacro %}


{#-- The changes of the window's files whose vectors a commit changed, read from the vectors
     themselves (`positions`, delta_log_decode_vectors): a file's deletes are its rows at the
     positions its new vector marks and its old one did not, its inserts the other way round, the
     file read by its path (every row it was written with) and filtered to those positions by
     `_metadata.row_index`, Delta's row position. A file several commits changed is scanned once
     for all of them, each row's `_commit_version` chosen by its position: a window of an UPDATE
     and a DELETE in every file scanned each file twice (bench/README.md). Where two commits read
     one position of a file on one side (a row deleted, brought back by a RESTORE, and deleted
     again), they take separate scans. Returns {selects, paths_left}: per commit version, the
     paths it does not read so (a vector not decoded, a file Delta must read, the budget spent),
     left to delta_log_vector_changes_sql. --#}
{% macro delta_log_vector_position_reads_sql(stream, commits, columns, direct) %}
  {%- set read, paths_left = [], {} -%}
  {%- for commit in commits -%}
    {%- set left = [] -%}
    {%- for path in dbt_tablestream.delta_log_revectored_paths(commit) -%}
      {%- set before = commit.removes | selectattr('path', 'equalto', path) | first -%}
      {%- set after = commit.adds | selectattr('path', 'equalto', path) | first -%}
      {%- if before.get('positions') is not none and after.get('positions') is not none
            and dbt_tablestream.delta_log_file_readable_by_path(stream.files, after, by_position=true)
            and dbt_tablestream.delta_log_take_direct_read(direct, after) -%}
        {%- do read.append({'commit': commit, 'file': after, 'before': before.positions, 'after': after.positions}) -%}
      {%- else -%}
        {%- do left.append(path) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do paths_left.update({commit.version: left}) -%}
  {%- endfor -%}
  {%- set quoted = dbt_tablestream.quoted_columns(columns | map(attribute='name')) -%}
  {%- set selects = [] -%}
  {%- for side, marked, unmarked in [('delete', 'after', 'before'), ('insert', 'before', 'after')] -%}
    {#-- Each scan: path -> its file, path -> the positions read, and per commit path -> its positions. --#}
    {%- set scans = [] -%}
    {%- for entry in read -%}
      {%- set kept = {} -%}
      {%- for position in entry[unmarked] -%}{%- do kept.update({position: true}) -%}{%- endfor -%}
      {%- set changed = entry[marked] | reject('in', kept) | list -%}
      {%- if changed -%}
        {%- set path = entry.file.path -%}
        {%- set placed = namespace(scan=none) -%}
        {%- for scan in scans -%}
          {%- if placed.scan is none and not changed | select('in', scan.taken.get(path, {})) | first is defined -%}
            {%- set placed.scan = scan -%}
          {%- endif -%}
        {%- endfor -%}
        {%- if placed.scan is none -%}
          {%- set placed.scan = {'files': {}, 'taken': {}, 'rows': {}, 'commits': {}} -%}
          {%- do scans.append(placed.scan) -%}
        {%- endif -%}
        {%- set scan = placed.scan -%}
        {%- do scan.files.setdefault(path, entry.file) -%}
        {%- for position in changed -%}{%- do scan.taken.setdefault(path, {}).update({position: true}) -%}{%- endfor -%}
        {%- do scan.rows.update({path: scan.rows.get(path, []) + changed}) -%}
        {%- do scan.commits.setdefault(entry.commit.version, {'commit': entry.commit, 'rows': []}).rows.append(
              '(_metadata.file_name = ' ~ dbt_tablestream.sql_string(entry.file.name) ~ ' and _metadata.row_index in (' ~ changed | join(', ') ~ '))') -%}
      {%- endif -%}
    {%- endfor -%}
    {%- for scan in scans -%}
      {%- set files = scan.files.values() | list -%}
      {%- set read_commits = scan.commits.values() | sort(attribute='commit.version') -%}
      {%- if read_commits | length == 1 -%}
        {%- do selects.extend(dbt_tablestream.delta_log_path_reads_sql(stream.files, files, columns,
              dbt_tablestream.delta_log_change_columns_sql(side, read_commits[0].commit), direct.described, scan.rows)) -%}
      {%- else -%}
        {%- set versions, stamps = [], [] -%}
        {%- for read_commit in read_commits -%}
          {%- if not loop.last -%}
            {%- do versions.append('when ' ~ read_commit.rows | join('\n      or ') ~ ' then ' ~ read_commit.commit.version) -%}
          {%- endif -%}
          {%- do stamps.append('when ' ~ read_commit.commit.version ~ ' then ' ~ read_commit.commit.millis) -%}
        {%- endfor -%}
        {%- set tail = dbt_tablestream.sql_string(side) ~ ' as _change_type, cast(case ' ~ versions | join('\n      ')
            ~ ' else ' ~ read_commits[-1].commit.version ~ ' end as bigint) as _commit_version' -%}
        {%- for select in dbt_tablestream.delta_log_path_reads_sql(stream.files, files, columns, tail, direct.described, scan.rows) -%}
          {%- do selects.append('select ' ~ quoted ~ ', _change_type, _commit_version, timestamp_millis(case _commit_version '
              ~ stamps | join(' ') ~ ' end) as _commit_timestamp from (\n    ' ~ select ~ '\n  ) as __tablestream_by_position') -%}
        {%- endfor -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return({'selects': selects, 'paths_left': paths_left}) }}
{% endmacro %}


{#-- The rows of the files at `paths` before the commit (`actions`: 'removes') or after it
     ('adds'), with `__tablestream_file` and `__tablestream_row_index`, their position in the
     file; with `direct` (the window's budget of files read by path with their rows, a
     namespace) their columns too, else (none) the positions alone. A file without a deletion
     vector on that side is read by its path, as elsewhere, while the budget lasts; the others
     travel in time to their read_version, where Delta applies the vector, narrowed by the added
     files' statistics (the removed file's record of a vector-changed file keeps only its row
     count). --#}
{% macro delta_log_positions_sql(relation, stream, commit, paths, actions, columns, direct) %}
  {%- set entries = commit[actions] | selectattr('path', 'in', paths) | list -%}
  {%- set position = '_metadata.row_index as __tablestream_row_index' -%}
  {%- set by_path, travelled = [], [] -%}
  {%- for file in entries -%}
    {%- if dbt_tablestream.delta_log_file_readable_by_path(stream.files, file) and (direct is none or dbt_tablestream.delta_log_take_direct_read(direct, file)) -%}
      {%- do by_path.append(file) -%}
    {%- else -%}
      {%- do travelled.append(file) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set tail = '_metadata.file_name as __tablestream_file, ' ~ position -%}
  {%- set selects = dbt_tablestream.delta_log_path_reads_sql(stream.files, by_path, columns if direct is not none else none, tail,
        direct.described if direct is not none else none) -%}
  {%- do selects.extend(dbt_tablestream.delta_log_time_travel_reads_sql(relation, stream.files, travelled, columns,
        ('*, ' if direct is not none else '') ~ tail, commit.adds)) -%}
  {{ return(selects | join('\n    union all\n    ')) }}
{% endmacro %}


{#-- Selects of data files read through time travel: one per read_version, `select_list` from the
     source as of it, restricted to its files (delta_log_files_filter_sql) by their names and by
     what Delta skips files by. `statistics`: the file entries whose partition values and
     statistics narrow the read, matched by path (a vector-changed file's remove action keeps only
     its row count, so its add's are used); none for the files' own. --#}
{% macro delta_log_time_travel_reads_sql(relation, source_files, files, columns, select_list, statistics=none) %}
  {%- set selects = [] -%}
  {%- for version in files | map(attribute='read_version') | unique | sort -%}
    {%- set read = files | selectattr('read_version', 'equalto', version) | list -%}
    {%- set narrowing = read if statistics is none else statistics | selectattr('path', 'in', read | map(attribute='path') | list) | list -%}
    {%- do selects.append('select ' ~ select_list ~ ' from ' ~ relation ~ ' version as of ' ~ version ~ '\n    where '
        ~ dbt_tablestream.delta_log_files_filter_sql(narrowing, columns, source_files)) -%}
  {%- endfor -%}
  {{ return(selects) }}
{% endmacro %}


{#-- Whether a file read by its path gives what Delta's read gives: no deletion vector (unless the
     read selects rows by position itself: `by_position`), no column mapping, a plain path (no
     escape, no scheme), and a commit that left the metadata as it was (`travel`: a file of a
     metadata commit is read under its own version's). --#}
{% macro delta_log_file_readable_by_path(source_files, file, by_position=false) %}
  {{ return((by_position or not file.deletion_vector) and not file.get('travel') and source_files.column_mapping in [none, 'none']
            and '%' not in file.path and ':' not in file.path) }}
{% endmacro %}


{#-- Selects of data files read by their paths: the source's columns (`columns`, or none for
     none of them), then `tail`. Files in one directory whose footers list the same columns and
     types and whose select lists are the same (their partition values) are one Parquet relation,
     `parquet.`<directory>/{a,b}``: each relation of a query is analysed on its own (50 files as
     50 relations analysed and counted in 3.5 s, as one in 0.26 s; bench/README.md). A name
     outside [A-Za-z0-9._=-] is read alone, as no glob must read it. `described`: path -> its
     footer's columns, described once a window (delta_log_direct_reads). `positions`: path -> the
     row positions to read of it, or none for every row. A relation of several files keeps a row
     whose position any of them reads before it compares the row's file name: the comparisons,
     one per file for every row scanned, took most of a scattered window's scan (18.2 s first and
     8.9 s again, against 7.4 s and 6.0 s with the check first; bench/README.md). --#}
{% macro delta_log_path_reads_sql(source_files, files, columns, tail, described=none, positions=none) %}
  {%- set described = described if described is not none else {} -%}
  {%- set groups = {} -%}
  {%- for file in files -%}
    {%- if columns is not none and described.get(file.path) is none -%}
      {%- set schema = dbt_tablestream.delta_log_file_columns_from_statistics(source_files, file, columns) -%}
      {%- if schema is none -%}
        {%- set schema = dbt_tablestream.described_columns('select * from ' ~ dbt_tablestream.delta_log_file_relation(source_files, file.path)) -%}
      {%- endif -%}
      {%- do described.update({file.path: schema}) -%}
    {%- endif -%}
    {%- set schema = described[file.path] if columns is not none else [] -%}
    {%- set selected = dbt_tablestream.delta_log_file_columns_sql(source_files, file, columns, schema) ~ ', ' if columns is not none else '' -%}
    {%- set directory = file.path[:file.path | length - file.name | length] -%}
    {%- set alone = modules.re.fullmatch('[A-Za-z0-9._=-]+', file.name) is none -%}
    {%- set key = directory ~ '\n' ~ schema | string ~ '\n' ~ selected ~ ('\n' ~ file.path if alone else '') -%}
    {%- if key not in groups -%}{%- do groups.update({key: {'directory': directory, 'selected': selected, 'names': [], 'rows': [], 'positions': {}}}) -%}{%- endif -%}
    {%- do groups[key]['names'].append(file.name) -%}
    {%- if positions is not none -%}
      {%- do groups[key]['rows'].append('(_metadata.file_name = ' ~ dbt_tablestream.sql_string(file.name) ~ ' and _metadata.row_index in ('
          ~ positions[file.path] | join(', ') ~ '))') -%}
      {%- for position in positions[file.path] -%}{%- do groups[key]['positions'].update({position: true}) -%}{%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set selects = [] -%}
  {%- for group in groups.values() -%}
    {%- set names = group['names'] -%}
    {%- set leaf = names[0] if names | length == 1 else '{' ~ names | join(',') ~ '}' -%}
    {%- set where = '' -%}
    {%- if positions is not none -%}
      {%- set any_file = '_metadata.row_index in (' ~ group['positions'].keys() | sort | join(', ') ~ ')' -%}
      {%- set where = '\n    where ' ~ (any_file if names | length == 1 else any_file ~ '\n      and (' ~ group['rows'] | join('\n      or ') ~ ')') -%}
    {%- endif -%}
    {%- do selects.append('select ' ~ group['selected'] ~ tail ~ ' from ' ~ dbt_tablestream.delta_log_file_relation(source_files, group['directory'] ~ leaf) ~ where) -%}
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
{% macro delta_log_file_columns_from_statistics(source_files, file, columns) %}
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
{% macro delta_log_file_relation(source_files, path) %}
  {{ return('parquet.`' ~ source_files.location.rstrip('/') ~ '/' ~ path ~ '`') }}
{% endmacro %}


{#-- The source's columns as a data file read by path gives them: a partition column from the
     file's partition values, a column the file lacks (added to the table after it was written) as
     NULL, as Delta reads it; each cast to the table's type. `schema`: the file's own columns
     (described_columns of it read by path). --#}
{% macro delta_log_file_columns_sql(source_files, file, columns, schema) %}
  {%- set present = schema | map(attribute='name') | map('lower') | list -%}
  {%- set partition_columns = source_files.partition_columns | map('lower') | list -%}
  {%- set values = {} -%}
  {%- for name, value in file.partition.items() -%}{%- do values.update({name | lower: value}) -%}{%- endfor -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}
    {%- set name = column.name | lower -%}
    {%- if name in partition_columns -%}
      {%- set value = 'null' if values.get(name) is none else dbt_tablestream.sql_string(values[name]) -%}
    {%- elif name in present -%}
      {%- set value = adapter.quote(column.name) -%}
    {%- else -%}
      {%- set value = 'null' -%}
    {%- endif -%}
    {%- do selected.append('cast(' ~ value ~ ' as ' ~ column.dtype ~ ') as ' ~ adapter.quote(column.name)) -%}
  {%- endfor -%}
  {{ return(selected | join(', ')) }}
{% endmacro %}


{#-- Which rows of a version belong to `files`: Delta's `_metadata.file_name`, exact. Delta does
     not skip files by it, so the filter also names what it does skip by: the files' partition
     values, and each file's statistics range of the whole-number and date columns (a row of the
     file lies in it, or is NULL there). Both are left out under column mapping, where the log
     names columns by their physical names, and the ranges for more than 200 files. --#}
{% macro delta_log_files_filter_sql(files, columns, source_files) %}
  {%- set names = [] -%}
  {%- for file in files -%}{%- do names.append(dbt_tablestream.sql_string(file.name)) -%}{%- endfor -%}
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
        {%- do terms.append(adapter.quote(name) ~ (' is null' if value is none else ' <=> cast(' ~ dbt_tablestream.sql_string(value) ~ ' as ' ~ types[name | lower] ~ ')')) -%}
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
      {%- if bounds | length == 2 and modules.re.fullmatch(pattern, bounds[0]) and modules.re.fullmatch(pattern, bounds[1]) -%}
        {%- set quote = "date'" if types[name] == 'date' else '' -%}
        {%- set end = "'" if types[name] == 'date' else '' -%}
        {%- do terms.append('(' ~ adapter.quote(name) ~ ' between ' ~ quote ~ bounds[0] ~ end ~ ' and ' ~ quote ~ bounds[1] ~ end ~ ' or ' ~ adapter.quote(name) ~ ' is null)') -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do ranges.append('(' ~ terms | join(' and ') ~ ')' if terms else 'true') -%}
  {%- endfor -%}
  {%- if ranges and 'true' not in ranges -%}
    {%- do conditions.append('(' ~ ranges | unique | join('\n      or ') ~ ')') -%}
  {%- endif -%}
  {{ return(conditions | join('\n    and ')) }}
{% endmacro %}

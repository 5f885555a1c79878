{#-- The changes of files whose deletion vector a commit changed: read by row position from
     their decoded vectors, or by time travel (docs/architecture.md, "Three ways to read
     changes"). --#}


{% macro delta_log_vector_changes_sql(relation, stream, commit, paths, columns, direct=none) %}
  {{ return(adapter.dispatch('delta_log_vector_changes_sql', 'dbt_tablestream')(
      relation, stream, commit, paths, columns, direct)) }}
{% endmacro %}


{#-- The changes of the files whose deletion vector a commit changed (removed and added again under
     one path): its deletes are the rows the file held before the commit at row positions it no
     longer holds after it, matched by `_metadata.row_index` within the file, so nothing the file
     still holds is read twice or cancelled as a carry-over. A DELETE, UPDATE or MERGE only
     extends a file's deletion vector; any other commit, or a vector that shrank, may also bring
     rows back: those are its inserts, found the same way the other way round. For the files whose
     vectors were not decoded (delta_log_vector_position_reads_sql reads the others). `direct`:
     the window's budget of files read by path with their rows (_delta_log_direct_reads). --#}
{% macro spark__delta_log_vector_changes_sql(relation, stream, commit, paths, columns, direct=none) %}
  {%- set direct = direct if direct is not none else dbt_tablestream._delta_log_direct_reads() -%}
  {%- set vectors = namespace(only_extended=commit.operation in ['DELETE', 'UPDATE', 'MERGE']) -%}
  {%- for file in commit.adds | selectattr('path', 'in', paths) -%}
    {%- set before = commit.removes | selectattr('path', 'equalto', file.path) | first -%}
    {%- if file.deleted_rows < before.deleted_rows -%}{%- set vectors.only_extended = false -%}{%- endif -%}
  {%- endfor -%}
  {%- set quoted = dbt_tablestream._quoted_columns(columns | map(attribute='name')) -%}
  {%- set parts = [] -%}
  {%- for side, held, lost in [('delete', 'removes', 'adds'), ('insert', 'adds', 'removes')]
        if side == 'delete' or not vectors.only_extended -%}
    {%- do parts.append('select ' ~ quoted ~ ', ' ~ dbt_tablestream.delta_log_change_columns_sql(side, commit)
        ~ ' from (\n    '
        ~ dbt_tablestream.delta_log_positions_sql(relation, stream, commit, paths, held, columns, direct)
        ~ '\n  ) as __tablestream_held left anti join (\n    '
        ~ dbt_tablestream.delta_log_positions_sql(relation, stream, commit, paths, lost, columns, none)
        ~ '\n  ) as __tablestream_still_held using (__tablestream_file, __tablestream_row_index)') -%}
  {%- endfor -%}
  {{ return(parts) }}
{% endmacro %}


{% macro delta_log_vector_position_reads_sql(stream, commits, columns, direct) %}
  {{ return(adapter.dispatch('delta_log_vector_position_reads_sql', 'dbt_tablestream')(
      stream, commits, columns, direct)) }}
{% endmacro %}


{#-- The changes of the window's files whose vectors a commit changed, read from the vectors
     themselves (`positions`, delta_log_decode_vectors): a file's deletes are its rows at the
     positions its new vector marks and its old one did not, its inserts the other way round, the
     file read by its path (every row it was written with) and filtered to those positions by
     `_metadata.row_index`, Delta's row position. A file several commits changed is scanned once
     for all of them, each row's `_commit_version` chosen by its position: a window of an UPDATE
     and a DELETE in every file scanned each file twice (bench/README.md, "The Delta log read").
     Where two commits read one position of a file on one side (a row deleted, brought back by a
     RESTORE, and deleted again), they take separate scans. Returns {selects, paths_left}: per
     commit version, the paths it does not read so (a vector not decoded, a file Delta must read,
     the budget spent), left to delta_log_vector_changes_sql. --#}
{% macro spark__delta_log_vector_position_reads_sql(stream, commits, columns, direct) %}
  {%- set read, paths_left = [], {} -%}
  {%- for commit in commits -%}
    {%- set left = [] -%}
    {%- for path in dbt_tablestream._delta_log_revectored_paths(commit) -%}
      {%- set before = commit.removes | selectattr('path', 'equalto', path) | first -%}
      {%- set after = commit.adds | selectattr('path', 'equalto', path) | first -%}
      {%- if before.get('positions') is not none and after.get('positions') is not none
            and dbt_tablestream._delta_log_file_readable_by_path(stream.files, after, by_position=true)
            and dbt_tablestream._delta_log_take_direct_read(direct, after) -%}
        {%- do read.append({'commit': commit, 'file': after, 'before': before.positions, 'after': after.positions}) -%}
      {%- else -%}
        {%- do left.append(path) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do paths_left.update({commit.version: left}) -%}
  {%- endfor -%}
  {%- set quoted = dbt_tablestream._quoted_columns(columns | map(attribute='name')) -%}
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
              '(_metadata.file_name = ' ~ dbt_tablestream._sql_string(entry.file.name)
              ~ ' and _metadata.row_index in (' ~ changed | join(', ') ~ '))') -%}
      {%- endif -%}
    {%- endfor -%}
    {%- for scan in scans -%}
      {%- set files = scan.files.values() | list -%}
      {%- set read_commits = scan.commits.values() | sort(attribute='commit.version') -%}
      {%- if read_commits | length == 1 -%}
        {%- do selects.extend(dbt_tablestream.delta_log_path_reads_sql(stream.files, files, columns,
              dbt_tablestream.delta_log_change_columns_sql(side, read_commits[0].commit), direct.described,
              scan.rows)) -%}
      {%- else -%}
        {%- set versions, stamps = [], [] -%}
        {%- for read_commit in read_commits -%}
          {%- if not loop.last -%}
            {%- do versions.append('when ' ~ read_commit.rows | join('\n      or ') ~ ' then '
                ~ read_commit.commit.version) -%}
          {%- endif -%}
          {%- do stamps.append('when ' ~ read_commit.commit.version ~ ' then ' ~ read_commit.commit.millis) -%}
        {%- endfor -%}
        {%- set tail = dbt_tablestream._sql_string(side) ~ ' as _change_type, cast(case ' ~ versions | join('\n      ')
            ~ ' else ' ~ read_commits[-1].commit.version ~ ' end as bigint) as _commit_version' -%}
        {%- for select in dbt_tablestream.delta_log_path_reads_sql(stream.files, files, columns, tail,
              direct.described, scan.rows) -%}
          {%- do selects.append('select ' ~ quoted ~ ', _change_type, _commit_version, '
              ~ 'timestamp_millis(case _commit_version ' ~ stamps | join(' ') ~ ' end) as _commit_timestamp'
              ~ ' from (\n    ' ~ select ~ '\n  ) as __tablestream_by_position') -%}
        {%- endfor -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return({'selects': selects, 'paths_left': paths_left}) }}
{% endmacro %}


{% macro delta_log_positions_sql(relation, stream, commit, paths, actions, columns, direct) %}
  {{ return(adapter.dispatch('delta_log_positions_sql', 'dbt_tablestream')(
      relation, stream, commit, paths, actions, columns, direct)) }}
{% endmacro %}


{#-- The rows of the files at `paths` before the commit (`actions`: 'removes') or after it
     ('adds'), with `__tablestream_file` and `__tablestream_row_index`, their position in the
     file; with `direct` (the window's budget of files read by path with their rows, a
     namespace) their columns too, else (none) the positions alone. A file without a deletion
     vector on that side is read by its path, as elsewhere, while the budget lasts; the others
     travel in time to their read_version, where Delta applies the vector, narrowed by the added
     files' statistics (the removed file's record of a vector-changed file keeps only its row
     count). --#}
{% macro spark__delta_log_positions_sql(relation, stream, commit, paths, actions, columns, direct) %}
  {%- set entries = commit[actions] | selectattr('path', 'in', paths) | list -%}
  {%- set position = '_metadata.row_index as __tablestream_row_index' -%}
  {%- set by_path, travelled = [], [] -%}
  {%- for file in entries -%}
    {%- if dbt_tablestream._delta_log_file_readable_by_path(stream.files, file)
        and (direct is none or dbt_tablestream._delta_log_take_direct_read(direct, file)) -%}
      {%- do by_path.append(file) -%}
    {%- else -%}
      {%- do travelled.append(file) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set tail = '_metadata.file_name as __tablestream_file, ' ~ position -%}
  {%- set selects = dbt_tablestream.delta_log_path_reads_sql(stream.files, by_path,
      columns if direct is not none else none, tail, direct.described if direct is not none else none) -%}
  {%- do selects.extend(dbt_tablestream.delta_log_time_travel_reads_sql(relation, stream.files, travelled, columns,
        ('*, ' if direct is not none else '') ~ tail, commit.adds)) -%}
  {{ return(selects | join('\n    union all\n    ')) }}
{% endmacro %}

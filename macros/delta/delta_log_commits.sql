{#-- The commits a log read takes its changes from: the Delta log's commit files read as
     actions, and each data commit's files added and removed, with the version each is read
     as of (docs/architecture.md, "Three ways to read changes"). --#}


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
  {%- set files = location.rstrip('/') ~ '/_delta_log/'
      ~ ('{' ~ names | join(',') ~ '}' if names | length > 1 else names[0]) ~ '.json' -%}
  {%- set file_action = 'struct<path: string, partitionValues: map<string, string>, dataChange: boolean, stats: '
      ~ 'string, deletionVector: struct<storageType: string, pathOrInlineDv: string, offset: int, sizeInBytes: int, '
      ~ 'cardinality: bigint>>' -%}
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
  select _metadata, from_json(value, {{ dbt_tablestream._sql_string(action) }}) as action
  from text.{{ dbt_tablestream._sql_identifier(files) }}
) as __tablestream_log
where action.commitInfo is not null or action.metaData is not null
  or action.add is not null or action.remove is not null
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}


{% macro delta_log_commits(relation, stream, versions) %}
  {{ return(adapter.dispatch('delta_log_commits', 'dbt_tablestream')(relation, stream, versions)) }}
{% endmacro %}


{#-- The data commits among `versions` (consecutive), oldest first: {version, operation, millis,
     adds, removes}, each file {name, path, partition (its partition values), stats (Delta's
     per-file statistics), deletion_vector (whether it has one), deleted_rows (its deletion vector's
     cardinality), vector (the log's descriptor of it, or none), read_version}. `read_version` is
     the version a time-travel read of the file uses: a removed file's rows as of the version before
     its commit, an added file's as of its commit, moved to the version before the first of
     `versions` or to the last of them where no commit in between acts on its path or changes the
     metadata. The file is the same there, and a window's reads then share two versions, the last
     one Delta's cached latest (docs/architecture.md, "Three ways to read changes").
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
      {%- do commits.update({version: {'version': version, 'operation': none, 'millis': row['file_millis'] | int,
                                       'adds': [], 'removes': [], 'metadata': false}}) -%}
    {%- endif -%}
    {%- set commit = commits[version] -%}
    {%- if row['kind'] == 'commit' -%}
      {%- do commit.update({'operation': row['operation']}) -%}
      {%- if row['in_commit_millis'] is not none -%}
        {%- do commit.update({'millis': row['in_commit_millis'] | int}) -%}
      {%- endif -%}
    {%- elif row['kind'] == 'metadata' -%}
      {%- do commit.update({'metadata': true}) -%}
      {%- do metadata_versions.append(version) -%}
    {%- else -%}
      {%- do acted.setdefault(row['path'], []).append(version) -%}
    {%- endif -%}
    {%- if row['kind'] in ['add', 'remove'] and row['data_change'] -%}
      {%- do commit[row['kind'] ~ 's'].append({'name': row['path'].split('/')[-1], 'path': row['path'],
          'deletion_vector': row['deletion_vector'], 'deleted_rows': row['deleted_rows'] | int,
          'vector': fromjson(row['vector']) if row['vector'] else none,
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
    {%- if previous.millis is not none and commit.millis <= previous.millis -%}
      {%- do commit.update({'millis': previous.millis + 1}) -%}
    {%- endif -%}
    {%- set previous.millis = commit.millis -%}
    {%- if commit.metadata and (commit.removes or (commit.adds and version != stream.after + 1)) -%}
      {%- if dbt_tablestream._source_columns_as_of(relation, version - 1)
          != dbt_tablestream._source_columns_as_of(relation, version) -%}
        {%- set remedy = dbt_tablestream._stream_remedy(stream) -%}
        {{ exceptions.raise_compiler_error(stream.subject ~ ": version " ~ version ~ " of " ~ stream.source ~ " ("
            ~ (commit.operation or 'a commit') ~ ") changed the table's columns and rewrote its files in one commit, "
            ~ "which a read of the Delta log's file actions cannot split into row changes. Nothing was written. Enable "
            ~ "the change data feed on the source to read such commits, or leave version " ~ version
            ~ " out of the read: " ~ remedy[0] | lower ~ remedy[1:]) }}
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


{#-- The paths a commit both removed and added: the files whose deletion vector it changed. --#}
{% macro _delta_log_revectored_paths(commit) %}
  {%- set readded = commit.adds | map(attribute='path') | list -%}
  {{ return(commit.removes | selectattr('path', 'in', readded) | map(attribute='path') | list) }}
{% endmacro %}

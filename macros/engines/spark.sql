{#-- The cluster engine's stream pieces: Spark SQL against delta-spark (any dbt-spark method) or
     Databricks (dbt-databricks inherits every spark__ macro). Each piece is a SQL builder that
     returns SQL and runs nothing (golden- and parser-tested in tests/spark_sql), plus a thin
     step that runs what the builders return. DESIGN.md sections 6 and 9 hold the Delta facts. --#}

{#-- ---------------------------------------------------------------- SQL builders --#}

{#-- Delta's own grammar: (DESC | DESCRIBE) HISTORY table (LIMIT n)?; newest commit first. --#}
{% macro spark__describe_history_sql(relation, limit) %}
  {{ return('describe history ' ~ relation ~ (' limit ' ~ limit if limit is not none else '')) }}
{% endmacro %}

{% macro spark__describe_detail_sql(relation) %}
  {{ return('describe detail ' ~ relation) }}
{% endmacro %}

{% macro spark__table_properties_sql(relation) %}
  {{ return('show tblproperties ' ~ relation) }}
{% endmacro %}

{#-- Spark normalises the user's start_at timestamp, so it compares with DESCRIBE HISTORY's in the
     same session time zone. --#}
{% macro spark__timestamp_sql(at_timestamp) %}
  {{ return("select cast('" ~ (at_timestamp | replace("'", "''")) ~ "' as timestamp) as at_timestamp") }}
{% endmacro %}

{#-- The relation the window's raw changes are read from. `table_changes` bounds are inclusive and
     the end is explicit, so a commit landing while the model runs is left for the next window. --#}
{% macro spark__window_relation_sql(relation, stream) %}
  {%- if stream.snapshot -%}
    {%- set relation_sql -%}
(select *, 'insert' as _change_type, cast({{ stream.through }} as bigint) as _commit_version,
    cast('{{ stream.timestamp }}' as timestamp) as _commit_timestamp
  from {{ relation }} version as of {{ stream.through }}) as __tablestream_snapshot
    {%- endset -%}
    {{ return(relation_sql) }}
  {%- endif -%}
  {{ return("table_changes('" ~ (relation | string | replace("'", "\\'")) ~ "', " ~ (stream.after + 1) ~ ", " ~ stream.through ~ ")") }}
{% endmacro %}

{#-- The session settings that make the next DML one marked, idempotent Delta commit: a
     SetTransaction (app id = stream id, version = the window's end) and commitInfo.userMetadata
     carrying the marker. The value is backquoted so no character of it ends the statement. --#}
{% macro spark__stream_commit_open_sql(stream) %}
  {%- set metadata = tojson(dbt_tablestream.stream_marker_metadata(stream)) | replace('`', '``') -%}
  {{ return([
      'set spark.databricks.delta.write.txnAppId = ' ~ stream.stream_id,
      'set spark.databricks.delta.write.txnVersion = ' ~ stream.through,
      'set spark.databricks.delta.commitInfo.userMetadata = `' ~ metadata ~ '`',
  ]) }}
{% endmacro %}

{#-- Delta leaves the settings in place after a write, and a later DML on the session would then
     be marked, or skipped, as this stream's: reset them every time. --#}
{% macro spark__stream_commit_close_sql() %}
  {{ return([
      'reset spark.databricks.delta.write.txnAppId',
      'reset spark.databricks.delta.write.txnVersion',
      'reset spark.databricks.delta.commitInfo.userMetadata',
  ]) }}
{% endmacro %}

{% macro spark__stream_write_sql(target, sql, mode, stream) %}
  {%- if mode == 'overwrite' -%}
    {%- set write_sql -%}
create or replace table {{ target }}
using delta
{{ partition_cols(label="partitioned by") }}
{{ location_clause() }}
{{ comment_clause() }}
{{ tblproperties_clause() }}
as
{{ sql }}
    {%- endset -%}
  {%- else -%}
    {%- set write_sql -%}
insert into {{ target }}
{{ sql }}
    {%- endset -%}
  {%- endif -%}
  {{ return(write_sql) }}
{% endmacro %}

{% macro spark__stream_merge_sql(target, source_sql, keys, delete_mode, update_columns, insert_columns, stream) %}
  {%- set is_delete = "source.`__change_type` = 'DELETE'" -%}
  {%- set is_upsert = "source.`__change_type` <> 'DELETE'" -%}
  {%- set soft = delete_mode == 'soft' -%}
  {%- set soft_revive = ["target._deleted = false", "target._deleted_version = null", "target._deleted_at = null"] if soft else [] -%}
  {%- set on = [] -%}
  {%- for key in keys -%}
    {%- do on.append('target.' ~ adapter.quote(key) ~ ' = source.' ~ adapter.quote(key)) -%}
  {%- endfor -%}
  {%- set assignments = [] -%}
  {%- for column in update_columns -%}
    {%- do assignments.append('target.' ~ adapter.quote(column) ~ ' = source.' ~ adapter.quote(column)) -%}
  {%- endfor -%}
  {%- set quoted_inserts = [] -%}
  {%- set insert_values = [] -%}
  {%- for column in insert_columns -%}
    {%- do quoted_inserts.append(adapter.quote(column)) -%}
    {%- do insert_values.append('source.' ~ adapter.quote(column)) -%}
  {%- endfor -%}
  {%- set merge_sql -%}
merge into {{ target }} as target
using (
{{ source_sql }}
) as source
on {{ on | join(' and ') }}
{%- if delete_mode == 'hard' %}
when matched and {{ is_delete }} then delete
{%- elif soft %}
when matched and {{ is_delete }} then update set
  target._deleted = true, target._deleted_version = source.`__commit_version`, target._deleted_at = source.`__commit_timestamp`
{%- endif %}
{%- if assignments or soft_revive %}
when matched and {{ is_upsert }} then update set
  {{ (assignments + soft_revive) | join(',\n  ') }}
{%- endif %}
when not matched and {{ is_upsert }} then insert ({{ (quoted_inserts + (['_deleted', '_deleted_version', '_deleted_at'] if soft else [])) | join(', ') }})
  values ({{ (insert_values + (['false', 'null', 'null'] if soft else [])) | join(', ') }})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}

{#-- The offsets log is created empty from the row's own select (so its columns are the row's) and
     then appended: blind appends of different streams do not conflict in Delta. --#}
{% macro spark__offsets_log_create_sql(relation, select_sql) %}
  {{ return('create table if not exists ' ~ relation ~ ' using delta as\nselect * from (\n' ~ select_sql ~ '\n) as __tablestream_offset where 1 = 0') }}
{% endmacro %}

{% macro spark__offsets_log_append_sql(relation, select_sql) %}
  {{ return('insert into ' ~ relation ~ '\n' ~ select_sql) }}
{% endmacro %}

{% macro spark__pause_sql(seconds) %}
  {{ return("select java_method('java.lang.Thread', 'sleep', cast(" ~ ((seconds * 1000) | int) ~ " as bigint)) as paused") }}
{% endmacro %}


{#-- ---------------------------------------------------------------- steps --#}

{% macro spark__stream_source_state(relation, stream_name, at_timestamp, want_earliest) %}
  {%- set source = relation.schema ~ '.' ~ relation.identifier -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ exceptions.raise_compiler_error(
        "Stream " ~ stream_name ~ ": the source " ~ source ~ " does not exist. Create it, or point the model at the right source.") }}
  {%- endif -%}
  {%- set detail = run_query(dbt_tablestream.spark__describe_detail_sql(relation)).rows[0] -%}
  {%- if (detail['format'] | lower) != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        "Stream " ~ stream_name ~ ": the source " ~ source ~ " is a " ~ detail['format'] ~ " table, not Delta, so it has no change feed. "
        ~ "Convert it with `CONVERT TO DELTA " ~ relation ~ "` or stream a Delta table.") }}
  {%- endif -%}
  {%- set latest = run_query(dbt_tablestream.spark__describe_history_sql(relation, 1)).rows[0] -%}
  {%- set properties = {} -%}
  {%- for row in run_query(dbt_tablestream.spark__table_properties_sql(relation)).rows -%}
    {%- do properties.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- set feed_enabled = (properties.get('delta.enableChangeDataFeed', 'false') | string | lower) == 'true' -%}

  {%- set history = run_query(dbt_tablestream.spark__describe_history_sql(relation, none)).rows if (want_earliest or at_timestamp is not none) else [] -%}
  {%- set earliest = none -%}
  {%- if want_earliest and feed_enabled -%}
    {#-- The feed is on now; it has been on since the newest commit that set it, or since the
         oldest commit still in the log. --#}
    {%- set found = {'version': history[-1]['version'] | int} -%}
    {%- for row in history if 'delta.enableChangeDataFeed' in (row['operationParameters'] | string) -%}
      {%- if loop.first -%}{%- do found.update({'version': row['version'] | int}) -%}{%- endif -%}
    {%- endfor -%}
    {%- set earliest = found.version -%}
  {%- endif -%}
  {%- set version_at_timestamp = none -%}
  {%- if at_timestamp is not none -%}
    {%- set moment = run_query(dbt_tablestream.spark__timestamp_sql(at_timestamp)).rows[0][0] -%}
    {%- if moment is none -%}
      {{ exceptions.raise_compiler_error(
          "Stream " ~ stream_name ~ ": start_at timestamp '" ~ at_timestamp ~ "' is not ISO-8601 (e.g. '2024-01-15T10:00:00Z').") }}
    {%- endif -%}
    {%- set candidates = [] -%}
    {%- for row in history if row['timestamp'] <= moment -%}{%- do candidates.append(row['version'] | int) -%}{%- endfor -%}
    {%- if not candidates -%}
      {{ exceptions.raise_compiler_error(
          "Stream " ~ stream_name ~ ": the source " ~ source ~ " has no version committed at or before " ~ at_timestamp
          ~ ". Use a later start_at timestamp, or start_at: earliest.") }}
    {%- endif -%}
    {%- set version_at_timestamp = candidates | max -%}
  {%- endif -%}
  {{ return({
      'latest_version': latest['version'] | int,
      'table_id': detail['id'],
      'latest_timestamp': latest['timestamp'] | string,
      'change_feed_enabled': feed_enabled,
      'earliest_change_version': earliest,
      'version_at_timestamp': version_at_timestamp,
  }) }}
{% endmacro %}


{#-- The newest marker the stream left in the target's commitInfo.userMetadata: recent history
     first, the whole history only when the recent part has none. --#}
{% macro spark__stream_target_marker(target, stream_name) %}
  {%- set recent = 50 -%}
  {%- set rows = run_query(dbt_tablestream.spark__describe_history_sql(target, recent)).rows -%}
  {%- set marker = dbt_tablestream.spark__find_marker(rows, stream_name) -%}
  {%- if marker is none and rows | length >= recent -%}
    {%- set marker = dbt_tablestream.spark__find_marker(run_query(dbt_tablestream.spark__describe_history_sql(target, none)).rows, stream_name) -%}
  {%- endif -%}
  {{ return(marker) }}
{% endmacro %}

{% macro spark__find_marker(history_rows, stream_name) %}
  {%- for row in history_rows -%}
    {%- set metadata = row['userMetadata'] -%}
    {%- if metadata is string and '"tablestream.stream"' in metadata -%}
      {%- set parsed = fromjson(metadata) -%}
      {%- if parsed is mapping and parsed.get('tablestream.stream') == stream_name -%}
        {%- set marker = {'commit_version': row['version'] | int} -%}
        {%- for key, value in parsed.items() if key.startswith('tablestream.') -%}
          {%- do marker.update({key[12:]: value}) -%}
        {%- endfor -%}
        {{ return(marker) }}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- Refuses a window that cannot be read completely and exactly (DESIGN.md section 7), then
     returns the relation its changes are read from. --#}
{% macro spark__register_stream_window(relation, stream, table_id) %}
  {%- if not stream.snapshot -%}
    {%- set problem = dbt_tablestream.spark__window_problem(relation, stream, table_id, dbt_tablestream.stream_reset_remedy()) -%}
    {%- if problem is not none -%}{{ exceptions.raise_compiler_error(problem) }}{%- endif -%}
  {%- endif -%}
  {{ return(dbt_tablestream.spark__window_relation_sql(relation, stream)) }}
{% endmacro %}


{#-- Why the window (after, through] of the source cannot be read, or none. --#}
{% macro spark__window_problem(relation, stream, table_id, remedy, window_rows=none) %}
  {%- if table_id is not none and table_id != stream.source_table_id -%}
    {{ return("Stream " ~ stream.stream ~ ": the source " ~ stream.source ~ " was dropped and recreated (Delta table id "
        ~ table_id ~ " is now " ~ stream.source_table_id ~ "), so its versions no longer continue the stream. " ~ remedy) }}
  {%- endif -%}
  {%- if stream.after > stream.through -%}
    {{ return("Stream " ~ stream.stream ~ ": its offset is version " ~ stream.after ~ " but the source " ~ stream.source
        ~ " is only at version " ~ stream.through ~ "; the source was recreated or restored. " ~ remedy) }}
  {%- endif -%}
  {%- if stream.after == stream.through -%}{{ return(none) }}{%- endif -%}
  {%- set window = window_rows if window_rows is not none else run_query(dbt_tablestream.spark__describe_history_sql(relation, stream.through - stream.after + 1)).rows -%}
  {%- set listed = [] -%}
  {%- for row in window -%}{%- do listed.append(row['version'] | int) -%}{%- endfor -%}
  {%- if (stream.after + 1) not in listed -%}
    {{ return("Stream " ~ stream.stream ~ " is stale: version " ~ (stream.after + 1) ~ " of " ~ stream.source
        ~ " is no longer in its Delta log (log retention, delta.logRetentionDuration), so the changes after the stream's offset "
        ~ stream.after ~ " cannot be read. " ~ remedy) }}
  {%- endif -%}
  {{ return(dbt_tablestream.spark__window_commits_problem(stream, window, remedy)) }}
{% endmacro %}


{#-- The window's commits, oldest first: every data commit had the change feed on (a setting
     changed inside the window is tracked from there), and none is older than what a later
     VACUUM in the window kept. Delta itself refuses such reads too, but later and less clearly. --#}
{% macro spark__window_commits_problem(stream, window_rows, remedy) %}
  {%- set data_operations = ['WRITE', 'MERGE', 'DELETE', 'UPDATE', 'STREAMING UPDATE', 'TRUNCATE', 'COPY INTO',
                             'CREATE TABLE AS SELECT', 'REPLACE TABLE AS SELECT', 'CREATE OR REPLACE TABLE AS SELECT', 'RESTORE'] -%}
  {%- set commits = [] -%}
  {%- for row in window_rows if (row['version'] | int) > stream.after and (row['version'] | int) <= stream.through -%}
    {%- set parameters = row['operationParameters'] | string -%}
    {%- set setting = modules.re.search('enableChangeDataFeed\\W+(true|false)', parameters, modules.re.IGNORECASE) -%}
    {%- do commits.append({
        'version': row['version'] | int, 'timestamp': row['timestamp'], 'operation': row['operation'] | upper,
        'feed': (setting.group(1) | lower == 'true') if setting else none,
        'retention': modules.re.search('specifiedRetentionMillis\\W+(\\d+)', parameters)
                     or modules.re.search('defaultRetentionMillis\\W+(\\d+)', parameters)}) -%}
  {%- endfor -%}
  {%- set commits = commits | sort(attribute='version') -%}
  {%- set toggles = commits | selectattr('feed', 'ne', none) | list -%}
  {%- set state = {'feed': not (toggles and toggles[0].feed)} -%}
  {%- for commit in commits -%}
    {%- if commit.feed is not none -%}
      {%- do state.update({'feed': commit.feed}) -%}
    {%- elif commit.operation in data_operations and not state.feed -%}
      {{ return("Stream " ~ stream.stream ~ ": the change data feed of " ~ stream.source ~ " was not enabled at version " ~ commit.version
          ~ ", inside the stream's window (" ~ stream.after ~ ", " ~ stream.through ~ "], so its changes were not recorded. "
          ~ "Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ stream.source
          ~ "}'` and " ~ remedy[0] | lower ~ remedy[1:]) }}
    {%- endif -%}
    {%- if commit.operation == 'VACUUM START' and commit.retention -%}
      {%- set kept_from = commit.timestamp - modules.datetime.timedelta(milliseconds=commit.retention.group(1) | int) -%}
      {%- for older in commits if older.version < commit.version and older.operation in data_operations and older.timestamp < kept_from -%}
        {{ return("Stream " ~ stream.stream ~ " is stale: files of version " ~ older.version ~ " of " ~ stream.source
            ~ " were removed (VACUUM) or may have been: the VACUUM at version " ~ commit.version ~ " kept only files younger than "
            ~ ((commit.retention.group(1) | int) / 3600000) | round(2) ~ " hours, so the changes after the stream's offset "
            ~ stream.after ~ " cannot be read. Reading past them would silently drop changes. " ~ remedy) }}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- A stream's position against its source (see stream_health). --#}
{% macro spark__stream_health(row) %}
  {%- set relation = dbt_tablestream.parse_relation(row['source']) -%}
  {%- set health = {'offset_time': none, 'source_version': none, 'source_time': none, 'stale': false,
                    'problem': none, 'at_risk_from': none} -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {%- do health.update({'stale': true, 'problem': "the source " ~ row['source'] ~ " does not exist. Create it, or drop the stream."}) -%}
    {{ return(health) }}
  {%- endif -%}
  {%- set latest = run_query(dbt_tablestream.spark__describe_history_sql(relation, 1)).rows[0] -%}
  {%- set latest_version = latest['version'] | int -%}
  {%- do health.update({'source_version': latest_version, 'source_time': latest['timestamp'] | string}) -%}
  {%- set offset = row['to_version'] -%}
  {%- if offset is none -%}
    {%- do health.update({'problem': 'reset: its next run starts again from start_at (a new epoch).'}) -%}
    {{ return(health) }}
  {%- endif -%}
  {%- set detail = run_query(dbt_tablestream.spark__describe_detail_sql(relation)).rows[0] -%}
  {%- set stream = {'stream': row['stream_name'], 'source': row['source'], 'after': offset | int, 'through': latest_version,
                    'source_table_id': detail['id']} -%}
  {%- set remedy = "Reset the stream with `dbt run --full-refresh -s " ~ (row['target'].split('.') | last) ~ "` or `tablestream reset " ~ row['stream_name'] ~ "`." -%}
  {#-- One read of the history since the offset serves both the window check and the offset's time. --#}
  {%- set since = run_query(dbt_tablestream.spark__describe_history_sql(relation, latest_version - offset + 1)).rows
                  if offset >= 0 and offset <= latest_version else none -%}
  {%- set problem = dbt_tablestream.spark__window_problem(relation, stream, row['source_table_id'], remedy, since) -%}
  {%- do health.update({'stale': problem is not none, 'problem': problem}) -%}
  {%- for commit in since or [] if (commit['version'] | int) == offset -%}
    {%- do health.update({'offset_time': commit['timestamp'] | string}) -%}
  {%- endfor -%}
  {{ return(health) }}
{% endmacro %}


{#-- The target DML as one marked Delta commit. Before it, the target's marker says whether the
     window is still this run's to apply; after it, whether Delta applied it or skipped it because
     a concurrent run had (a SetTransaction at or above this version). --#}
{% macro spark__stream_commit(target, sql, mode, stream) %}
  {%- if mode != 'overwrite' -%}
    {%- set verdict = dbt_tablestream.stream_marker_verdict(stream, dbt_tablestream.spark__stream_target_marker(target, stream.stream)) -%}
    {%- if verdict == 'applied' -%}
      {{ return({'code': 'SKIPPED', 'rows_affected': 0}) }}
    {%- endif -%}
  {%- endif -%}
  {%- for statement_sql in dbt_tablestream.spark__stream_commit_open_sql(stream) -%}
    {%- do run_query(statement_sql) -%}
  {%- endfor -%}
  {%- call statement('main', fetch_result=True) -%}
    {{ sql }}
  {%- endcall -%}
  {%- for statement_sql in dbt_tablestream.spark__stream_commit_close_sql() -%}
    {%- do run_query(statement_sql) -%}
  {%- endfor -%}
  {%- set history = run_query(dbt_tablestream.spark__describe_history_sql(target, 50)).rows -%}
  {%- set marker = dbt_tablestream.spark__find_marker(history, stream.stream) -%}
  {%- if marker is not none and marker.stream_id == stream.stream_id and (marker.to | int) >= stream.through
        and marker.invocation_id != invocation_id -%}
    {{ return({'code': 'SKIPPED', 'rows_affected': 0}) }}
  {%- endif -%}
  {{ return({'code': 'OK', 'rows_affected': dbt_tablestream.spark__rows_written(load_result('main'), history, marker)}) }}
{% endmacro %}


{#-- MERGE reports num_affected_rows; an INSERT or CREATE reports nothing, so the commit's
     operationMetrics (numOutputRows) in the target's history are read instead. --#}
{% macro spark__rows_written(result, history, marker) %}
  {%- if result.table is not none and 'num_affected_rows' in result.table.column_names and result.table.rows | length > 0 -%}
    {{ return(result.table.rows[0]['num_affected_rows'] | int) }}
  {%- endif -%}
  {%- for row in history if marker is not none and (row['version'] | int) == marker.commit_version -%}
    {%- set metrics = row['operationMetrics'] -%}
    {%- if metrics is mapping and 'numOutputRows' in metrics -%}
      {{ return(metrics['numOutputRows'] | int) }}
    {%- endif -%}
    {%- set found = modules.re.search('numOutputRows\\W+(\\d+)', metrics | string) -%}
    {{ return(found.group(1) | int if found else none) }}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{% macro spark__append_offsets_row(relation, select_sql) %}
  {% call statement('create_stream_offsets') -%}
    {{ dbt_tablestream.spark__offsets_log_create_sql(relation, select_sql) }}
  {%- endcall %}
  {% call statement('append_stream_offset') -%}
    {{ dbt_tablestream.spark__offsets_log_append_sql(relation, select_sql) }}
  {%- endcall %}
{% endmacro %}


{% macro spark__pause_point(point, seconds) %}
  {%- do run_query(dbt_tablestream.spark__pause_sql(seconds)) -%}
{% endmacro %}


{#-- ----- directory tables: a listing through Spark's binaryFile source (its content column is never
     selected, so no file is read), diffed against the table and applied with one MERGE. ----- --#}

{#-- A glob list as one anchored Java regex over relative paths, with Python's fnmatch rules as the
     embedded engine applies them: `*` and `?` also match `/`, `[seq]` and `[!seq]` are classes. --#}
{% macro glob_regex(patterns) %}
  {%- set alternatives = [] -%}
  {%- for pattern in patterns -%}
    {%- set state = namespace(text='', in_class=false, class_start=false) -%}
    {%- for character in pattern -%}
      {%- if state.in_class -%}
        {%- if character == '!' and state.class_start -%}{%- set state.text = state.text ~ '^' -%}
        {%- elif character == ']' and not state.class_start -%}{%- set state.text = state.text ~ ']' -%}{%- set state.in_class = false -%}
        {%- elif character in '\\[]&^' -%}{%- set state.text = state.text ~ '\\' ~ character -%}
        {%- else -%}{%- set state.text = state.text ~ character -%}
        {%- endif -%}
        {%- set state.class_start = false -%}
      {%- elif character == '[' -%}{%- set state.text = state.text ~ '[' -%}{%- set state.in_class = true -%}{%- set state.class_start = true -%}
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


{% macro spark__directory_files_view_sql(files_view, settings) %}
  {{ return("create or replace temporary view " ~ files_view ~ " using binaryFile options (path "
            ~ dbt_tablestream.sql_string(settings.location) ~ ", recursiveFileLookup '"
            ~ ('true' if settings.recursive else 'false') ~ "')") }}
{% endmacro %}


{#-- The listing in the directory table's columns. The fingerprint is what the file system gives
     for free: size and modification time (reading every file to hash it would cost a full scan). --#}
{% macro spark__directory_listing_view_sql(listing_view, files_view, settings) %}
  {%- set root = settings.location.split('://')[-1].rstrip('/') -%}
  {%- set listing_sql -%}
create or replace temporary view {{ listing_view }} as
select * from (
  select
    substring(path, instr(path, {{ dbt_tablestream.sql_string(root) }}) + {{ root | length + 1 }}) as relative_path,
    path as url,
    length as size,
    modificationTime as last_modified_time,
    concat(cast(length as string), '-', cast(unix_micros(modificationTime) as string)) as fingerprint
  from {{ files_view }}
) as __tablestream_files
where not relative_path rlike '(^|/)[._]'
{%- if settings.include %}
  and relative_path rlike {{ dbt_tablestream.sql_string(dbt_tablestream.glob_regex(settings.include)) }}
{%- endif %}
{%- if settings.exclude %}
  and not relative_path rlike {{ dbt_tablestream.sql_string(dbt_tablestream.glob_regex(settings.exclude)) }}
{%- endif %}
  {%- endset -%}
  {{ return(listing_sql) }}
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


{% macro spark__directory_create_sql(target, listing_view, properties) %}
  {%- set settings = {'delta.enableChangeDataFeed': 'true'} -%}
  {%- do settings.update(properties or {}) -%}
  {%- set pairs = [] -%}
  {%- for key, value in settings.items() -%}
    {%- do pairs.append(dbt_tablestream.sql_string(key) ~ ' = ' ~ dbt_tablestream.sql_string(value)) -%}
  {%- endfor -%}
  {{ return("create or replace table " ~ target ~ " using delta tblproperties (" ~ pairs | join(', ')
            ~ ") as select relative_path, url, size, last_modified_time, fingerprint from " ~ listing_view) }}
{% endmacro %}


{#-- Needs Delta 2.3 (WHEN NOT MATCHED BY SOURCE), the cluster engine's minimum. --#}
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


{#-- The diff is counted first, so an unchanged folder commits nothing: a MERGE that matches
     nothing would still add a version. --#}
{% macro spark__sync_directory_table(relation, settings, rebuild) %}
  {%- set files_view = relation.identifier ~ '__tablestream_files' -%}
  {%- set listing_view = relation.identifier ~ '__tablestream_listing' -%}
  {%- do run_query(dbt_tablestream.spark__directory_files_view_sql(files_view, settings)) -%}
  {%- do run_query(dbt_tablestream.spark__directory_listing_view_sql(listing_view, files_view, settings)) -%}
  {%- if rebuild -%}
    {%- do run_query(dbt_tablestream.spark__directory_create_sql(relation, listing_view, config.get('tblproperties', none))) -%}
    {#-- Counted from the new table: the listing view would list the file system again. --#}
    {%- set files = run_query('select count(*) from ' ~ relation).rows[0][0] -%}
    {{ return({'files': files, 'inserted': files, 'updated': 0, 'deleted': 0, 'committed': true}) }}
  {%- endif -%}
  {%- set diff = run_query(dbt_tablestream.spark__directory_diff_sql(relation, listing_view)).rows[0] -%}
  {%- set changed = diff['inserted'] + diff['updated'] + diff['deleted'] -%}
  {%- if changed > 0 -%}
    {%- do run_query(dbt_tablestream.spark__directory_merge_sql(relation, listing_view)) -%}
  {%- endif -%}
  {{ return({'files': diff['files'], 'inserted': diff['inserted'], 'updated': diff['updated'],
             'deleted': diff['deleted'], 'committed': changed > 0}) }}
{% endmacro %}

{#-- Whether the window (after, through] of a stream can be read completely and exactly: the
     checks against the source's log that run before any read (docs/architecture.md, "One stream
     run, traced"), and the refusals they give. --#}


{#-- Refuses a window that cannot be read completely and exactly (docs/architecture.md, "One
     stream run, traced", step 2), then returns the relation its changes are read from. --#}
{% macro _register_stream_window(relation, stream, table_id, checked=false, columns=none) %}
  {%- set problem = none if checked else dbt_tablestream.stream_window_problem(relation, stream, table_id) -%}
  {%- if problem is not none -%}{{ exceptions.raise_compiler_error(problem.message) }}{%- endif -%}
  {{ return(dbt_tablestream.window_relation_sql(relation, stream, columns)) }}
{% endmacro %}


{#-- Why the stream's window cannot be read completely and exactly, or none (a snapshot reads no
     window). `window_rows`: the window's commits (_stream_window_commits), when already read. --#}
{% macro stream_window_problem(relation, stream, table_id, window_rows=none) %}
  {{ return(adapter.dispatch('stream_window_problem', 'dbt_tablestream')(relation, stream, table_id, window_rows)) }}
{% endmacro %}


{% macro spark__stream_window_problem(relation, stream, table_id, window_rows=none) %}
  {%- if stream.snapshot -%}{{ return(none) }}{%- endif -%}
  {%- set retained_from = run_query(dbt_tablestream.retained_from_sql(stream.file_retention)).rows[0][0]
                          if stream.after < stream.through else none -%}
  {{ return(dbt_tablestream._window_problem(relation, stream, table_id, window_rows, retained_from)) }}
{% endmacro %}


{#-- Why a window cannot be read: its `kind` decides what may follow (on_stale recovers from
     'stale', 'recreated' and 'restored'; stream_health reports it as `refusal`), its `message`
     says it with the remedy. Kinds: 'recreated' (the source's table id changed), 'restored' (the
     offset is past the source's latest version), 'stale' (log entries or files of the window are
     gone or may be), 'untracked' (the feed or row tracking did not record a commit). --#}
{% macro _window_refusal(kind, message) %}
  {%- if kind not in ['recreated', 'restored', 'stale', 'untracked'] -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream._window_refusal: unknown kind " ~ kind
        ~ "; expected recreated, restored, stale or untracked.") }}
  {%- endif -%}
  {{ return({'kind': kind, 'message': message}) }}
{% endmacro %}


{#-- Why the window (after, through] of the source cannot be read (a _window_refusal), or none.
     `retained_from`: the time before which VACUUM may have removed the source's files
     (spark__retained_from_sql). --#}
{% macro _window_problem(relation, stream, table_id, window_rows=none, retained_from=none) %}
  {%- set remedy = dbt_tablestream._stream_remedy(stream) -%}
  {%- if table_id is not none and table_id != stream.source_table_id -%}
    {{ return(dbt_tablestream._window_refusal('recreated', stream.subject ~ ": the source " ~ stream.source
        ~ " was dropped and recreated, or replaced (Delta table id " ~ table_id ~ " is now " ~ stream.source_table_id
        ~ "), so its versions no longer continue the stream. " ~ remedy)) }}
  {%- endif -%}
  {%- if stream.after > stream.through -%}
    {{ return(dbt_tablestream._window_refusal('restored', stream.subject ~ ": its offset is version " ~ stream.after
        ~ " but the source " ~ stream.source ~ " is only at version " ~ stream.through ~ "; the source was "
        ~ "recreated or restored. " ~ remedy)) }}
  {%- endif -%}
  {%- if stream.after == stream.through -%}{{ return(none) }}{%- endif -%}
  {%- set window = window_rows if window_rows is not none
                   else dbt_tablestream.history_since(relation, stream.after + 1, stream.through) -%}
  {%- set listed = [] -%}
  {%- for row in window -%}{%- do listed.append(row['version'] | int) -%}{%- endfor -%}
  {%- if (stream.after + 1) not in listed -%}
    {{ return(dbt_tablestream._window_refusal('stale', stream.subject ~ " is stale: version " ~ (stream.after + 1)
        ~ " of " ~ stream.source ~ " is no longer in its Delta log (log retention, delta.logRetentionDuration), so the "
        ~ "changes after the stream's offset " ~ stream.after ~ " cannot be read. " ~ remedy)) }}
  {%- endif -%}
  {#-- A VACUUM that kept the table's deletedFileRetentionDuration can have removed files of any
       commit older than that, logged or not (file systems such as s3 log no VACUUM): Delta's CDC
       reader refuses such a start itself since Delta 4.1, and earlier versions fail on a missing file. --#}
  {%- for row in window if retained_from is not none and (row['version'] | int) == stream.after + 1
        and row['timestamp'] < retained_from -%}
    {{ return(dbt_tablestream._window_refusal('stale', stream.subject ~ " is stale: version " ~ (stream.after + 1)
        ~ " of " ~ stream.source ~ " was committed at " ~ row['timestamp'] ~ ", longer ago than the source's "
        ~ "delta.deletedFileRetentionDuration (" ~ stream.file_retention ~ "), so a VACUUM may have removed files its "
        ~ "changes are read from, and the changes after the stream's offset " ~ stream.after ~ " cannot be read "
        ~ "completely. Run the stream more often than that, or raise the source's delta.deletedFileRetentionDuration. "
        ~ remedy)) }}
  {%- endfor -%}
  {{ return(dbt_tablestream._window_commits_problem(stream, window)) }}
{% endmacro %}


{#-- The window's commits, oldest first: every data commit was tracked (the change feed on, or for
     stream_read: changelog row tracking on from the window's first version, as Delta's changelog
     requires; a setting changed inside the window is tracked from there), unless the stream reads
     untracked commits from the Delta log (stream_read: delta_log, on_feed_off: delta_log); and
     none is older than what a later VACUUM in the window kept. Delta itself refuses such reads
     too, but later and less clearly. --#}
{% macro _window_commits_problem(stream, window_rows) %}
  {%- set remedy = dbt_tablestream._stream_remedy(stream) -%}
  {%- set data_operations = dbt_tablestream._delta_data_operations() -%}
  {%- set commits = dbt_tablestream._window_commit_states(stream, window_rows) -%}
  {%- set toggles = commits | selectattr('toggle', 'ne', none) | list -%}
  {#-- Delta's changelog reads a window only if row tracking is on at its first version and stays on. --#}
  {%- set untracked = toggles | rejectattr('toggle') | list -%}
  {%- if toggles and toggles[0].toggle and toggles[0].version > stream.after + 1 -%}
    {%- set untracked = [toggles[0]] -%}
  {%- endif -%}
  {%- if stream.read == 'changelog' and untracked -%}
    {{ return(dbt_tablestream._window_refusal('untracked',
        dbt_tablestream._changelog_window_problem(stream, untracked[0]))) }}
  {%- endif -%}
  {%- set from_log = dbt_tablestream._stream_reads_log(stream.read, stream.on_feed_off) -%}
  {%- for commit in commits -%}
    {%- if commit.operation in data_operations and not commit.tracked and not from_log -%}
      {{ return(dbt_tablestream._window_refusal('untracked', stream.subject ~ ": the change data feed of "
          ~ stream.source ~ " was not enabled at version " ~ commit.version ~ ", inside the stream's window ("
          ~ stream.after ~ ", " ~ stream.through ~ "], so its changes were not recorded. Enable it with `dbt "
          ~ "run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ stream.source ~ "}'` and "
          ~ remedy[0] | lower ~ remedy[1:] ~ " Or read such commits from the Delta log: on_feed_off: delta_log.")) }}
    {%- endif -%}
    {%- if commit.operation == 'VACUUM START' and commit.retention -%}
      {%- set retention = modules.datetime.timedelta(milliseconds=commit.retention.group(1) | int) -%}
      {%- set kept_from = commit.timestamp - retention -%}
      {%- for older in commits if older.version < commit.version and older.operation in data_operations
            and older.timestamp < kept_from -%}
        {{ return(dbt_tablestream._window_refusal('stale', stream.subject ~ " is stale: files of version "
            ~ older.version ~ " of " ~ stream.source ~ " were removed (VACUUM) or may have been: the VACUUM at version "
            ~ commit.version ~ " kept only files younger than "
            ~ ((commit.retention.group(1) | int) / 3600000) | round(2) ~ " hours, so the changes after the "
            ~ "stream's offset " ~ stream.after ~ " cannot be read. Reading past them would silently drop changes. "
            ~ remedy)) }}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- The window's commits (DESCRIBE HISTORY rows), oldest first, each with whether it was tracked
     (`tracked`: the source recorded its changes as stream.read needs, after the commit's own
     setting changes), the setting it made (`toggle`: true, false or none) and a VACUUM's
     retention. Before the first toggle the source was tracked, unless that toggle turns tracking
     on; with no toggle in the window, as the source is now (stream.files.feed_on, for a read
     that can read untracked commits from the log). --#}
{% macro _window_commit_states(stream, window_rows) %}
  {%- set tracking = dbt_tablestream._stream_tracking_property(stream.read if stream.read != 'delta_log'
                                                               else 'table_changes') -%}
  {%- set commits = [] -%}
  {%- for row in window_rows or [] if (row['version'] | int) > stream.after
        and (row['version'] | int) <= stream.through -%}
    {%- set parameters = row['operationParameters'] | string -%}
    {%- set operation = row['operation'] | upper -%}
    {%- set setting = modules.re.search(tracking.split('.')[1] ~ '\\W+(true|false)', parameters,
                                        modules.re.IGNORECASE) -%}
    {#-- UNSET TBLPROPERTIES lists only the keys it removed: an unset setting is off. --#}
    {%- set unset = operation == 'UNSET TBLPROPERTIES' and tracking in parameters -%}
    {%- do commits.append({
        'version': row['version'] | int, 'timestamp': row['timestamp'], 'operation': operation,
        'toggle': false if unset else ((setting.group(1) | lower == 'true') if setting else none),
        'retention': modules.re.search('specifiedRetentionMillis\\W+(\\d+)', parameters)
                     or modules.re.search('defaultRetentionMillis\\W+(\\d+)', parameters)}) -%}
  {%- endfor -%}
  {%- set commits = commits | sort(attribute='version') -%}
  {%- set toggles = commits | selectattr('toggle', 'ne', none) | list -%}
  {%- set now = stream.files.feed_on if stream.get('files') is not none and stream.read != 'changelog' else true -%}
  {%- set state = {'tracked': not toggles[0].toggle if toggles else now} -%}
  {%- for commit in commits -%}
    {%- if commit.toggle is not none -%}{%- do state.update({'tracked': commit.toggle}) -%}{%- endif -%}
    {%- do commit.update({'tracked': state.tracked}) -%}
  {%- endfor -%}
  {{ return(commits) }}
{% endmacro %}


{#-- Whether every commit of the versions (after, through] only appended rows, as DESCRIBE HISTORY
     (`window_rows`) names them: an INSERT INTO or a DataFrame append (WRITE, mode Append), a
     streaming append (STREAMING UPDATE, outputMode Append) or a CREATE TABLE AS SELECT. Their
     change feed holds inserts alone, nothing to cancel as a carry-over (_stream_drops_carryovers),
     whose cancellation is a shuffle of every row of the window. False for any other operation and
     for a version the rows do not list. --#}
{% macro _window_appends_only(after, through, window_rows) %}
  {%- set found = namespace(appends=0) -%}
  {%- for row in window_rows or [] if (row['version'] | int) > after and (row['version'] | int) <= through -%}
    {%- set operation = row['operation'] | upper -%}
    {%- set parameters = row['operationParameters'] | string -%}
    {%- set mode = modules.re.search('(?<![A-Za-z])mode\\W+(\\w+)', parameters) if operation == 'WRITE'
          else modules.re.search('outputMode\\W+(\\w+)', parameters) if operation == 'STREAMING UPDATE' else none -%}
    {%- if operation == 'CREATE TABLE AS SELECT' or (mode and mode.group(1) | lower == 'append') -%}
      {%- set found.appends = found.appends + 1 -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(through > after and found.appends == through - after) }}
{% endmacro %}


{#-- About how many files a read of the versions (after, through] opens, from their commits'
     operationMetrics in DESCRIBE HISTORY (`window_rows`): the data and change files each commit
     added or removed and the files it gave a new deletion vector, which the change feed reads
     whole to find the rows the vector removed. None when the rows do not list every version with
     its metrics.
     stream_merge caches a window that opens many (docs/architecture.md, "A window's write"). --#}
{% macro _window_files(after, through, window_rows) %}
  {%- set found = namespace(versions=0, files=0) -%}
  {%- for row in window_rows or [] if (row['version'] | int) > after and (row['version'] | int) <= through
        and row.get('operationMetrics') is not none -%}
    {%- set found.versions = found.versions + 1 -%}
    {%- for count in modules.re.findall('num(?:AddedFiles|RemovedFiles|Files|AddedChangeFiles'
                                        ~ '|DeletionVectorsAdded|DeletionVectorsUpdated)\W+(\d+)',
                                        row['operationMetrics'] | string) -%}
      {%- set found.files = found.files + (count | int) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(found.files if through > after and found.versions == through - after else none) }}
{% endmacro %}


{#-- A window that Delta's changelog cannot read: row tracking was turned on after its first
     version, or turned off inside it. --#}
{% macro _changelog_window_problem(stream, toggle) %}
  {%- set remedy = dbt_tablestream._stream_remedy(stream) -%}
  {%- if toggle.tracked -%}
    {{ return(stream.subject ~ ": row tracking was enabled on " ~ stream.source ~ " at version " ~ toggle.version
        ~ ", after the first version " ~ (stream.after + 1) ~ " of the stream's window (" ~ stream.after ~ ", "
        ~ stream.through ~ "], and Delta's changelog (stream_read: changelog) reads only versions where row tracking "
        ~ "was already on. Nothing was written. If the source's change data feed covers the window, run the model once "
        ~ "with stream_read: table_changes to pass version " ~ toggle.version ~ "; otherwise " ~ remedy[0] | lower
        ~ remedy[1:]) }}
  {%- endif -%}
  {{ return(stream.subject ~ ": row tracking was disabled on " ~ stream.source ~ " at version " ~ toggle.version
      ~ ", inside the stream's window (" ~ stream.after ~ ", " ~ stream.through ~ "], so Delta's changelog "
      ~ "(stream_read: changelog) cannot read it. Nothing was written. Enable it with `dbt run-operation "
      ~ "dbt_tablestream.enable_change_tracking --args '{relation: " ~ stream.source ~ ", mode: changelog}'` and "
      ~ remedy[0] | lower ~ remedy[1:]) }}
{% endmacro %}


{#-- The operations that change a table's schema in place. Delta's batch change feed reads a
     range with one schema, so a window must not span one (Delta refuses a rename or drop inside
     the range, or reads older rows with the wrong columns; docs/architecture.md, "Carry-overs,
     bounded runs and change queries"). --#}
{% macro _delta_schema_operations() %}
  {{ return(['ADD COLUMNS', 'CHANGE COLUMN', 'CHANGE COLUMNS', 'RENAME COLUMN', 'DROP COLUMNS', 'REPLACE COLUMNS']) }}
{% endmacro %}


{#-- Where a window must end so it does not span a schema change: the version before the first
     schema-changing commit after the window's first version, with that commit; or none. The next
     window starts at the change and is read with the new schema. --#}
{% macro _schema_change_split(after, through, window_rows, operations=none) %}
  {%- set operations = operations if operations is not none else dbt_tablestream._delta_schema_operations() -%}
  {%- set changes = [] -%}
  {%- for row in window_rows or [] if (row['version'] | int) > after + 1 and (row['version'] | int) <= through
        and (row['operation'] | upper) in operations -%}
    {%- do changes.append({'version': row['version'] | int, 'operation': row['operation'] | upper}) -%}
  {%- endfor -%}
  {{ return((changes | sort(attribute='version') | first) if changes else none) }}
{% endmacro %}


{#-- Whether a read takes commits from the Delta log's file actions: all of them (stream_read:
     delta_log) or those the change feed did not record (on_feed_off: delta_log). --#}
{% macro _stream_reads_log(read, on_feed_off) %}
  {{ return(read == 'delta_log' or on_feed_off == 'delta_log') }}
{% endmacro %}


{#-- The window's versions read from the Delta log (stream.files.versions): none for all of them
     (stream_read: delta_log), else the commits the feed did not record (on_feed_off: delta_log). --#}
{% macro _window_log_versions(stream, window_rows) %}
  {{ return(none if stream.read == 'delta_log'
            else dbt_tablestream._window_commit_states(stream, window_rows) | rejectattr('tracked')
                 | map(attribute='version') | list) }}
{% endmacro %}

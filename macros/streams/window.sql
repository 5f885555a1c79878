{#-- The window (after, through] of a stream: checked against the source's log, then read. --#}


{#-- Checks the window (unless `checked`: the caller already asked stream_window_problem) and
     returns the relation its raw change rows are read from. `columns`: the window's
     (window_columns), when the caller has them. --#}
{% macro register_stream_window(relation, stream, table_id, checked=false, columns=none) %}
  {{ return(adapter.dispatch('register_stream_window', 'dbt_tablestream')(relation, stream, table_id, checked, columns)) }}
{% endmacro %}


{#-- Refuses a window that cannot be read completely and exactly (docs/architecture.md, "One
     stream run, traced", step 2), then returns the relation its changes are read from. --#}
{% macro spark__register_stream_window(relation, stream, table_id, checked=false, columns=none) %}
  {%- set problem = none if checked else dbt_tablestream.stream_window_problem(relation, stream, table_id) -%}
  {%- if problem is not none -%}{{ exceptions.raise_compiler_error(problem.message) }}{%- endif -%}
  {{ return(dbt_tablestream.window_relation_sql(relation, stream, columns)) }}
{% endmacro %}


{#-- Why the stream's window cannot be read completely and exactly, or none (a snapshot reads no
     window). `window_rows`: the window's commits (stream_window_commits), when already read. --#}
{% macro stream_window_problem(relation, stream, table_id, window_rows=none) %}
  {{ return(adapter.dispatch('stream_window_problem', 'dbt_tablestream')(relation, stream, table_id, window_rows)) }}
{% endmacro %}


{% macro spark__stream_window_problem(relation, stream, table_id, window_rows=none) %}
  {%- if stream.snapshot -%}{{ return(none) }}{%- endif -%}
  {%- set retained_from = run_query(dbt_tablestream.retained_from_sql(stream.file_retention)).rows[0][0] if stream.after < stream.through else none -%}
  {{ return(dbt_tablestream.window_problem(relation, stream, table_id, window_rows, retained_from)) }}
{% endmacro %}


{#-- The source's commits from the window's first version on (DESCRIBE HISTORY rows, newest
     first), or none when the window is empty or reversed: read once, for the schema-change split
     and the window check. `known`: the rows already read with the source's state ({rows, limit},
     stream_source_state); when they reach the window's start nothing more is read. --#}
{% macro stream_window_commits(relation, stream, known=none) %}
  {{ return(adapter.dispatch('stream_window_commits', 'dbt_tablestream')(relation, stream, known)) }}
{% endmacro %}


{% macro spark__stream_window_commits(relation, stream, known=none) %}
  {%- if stream.snapshot or stream.after >= stream.through -%}{{ return(none) }}{%- endif -%}
  {%- set first = stream.after + 1 -%}
  {%- if known is not none and known.rows and (known.limit is none or dbt_tablestream.history_limit_to_reach(known.rows, first, known.limit) is none) -%}
    {#-- The rows history_since would read: from the newest down to the version before the window. --#}
    {%- set rows = [] -%}
    {%- for row in known.rows if (row['version'] | int) >= first - 1 -%}{%- do rows.append(row) -%}{%- endfor -%}
    {{ return(rows) }}
  {%- endif -%}
  {{ return(dbt_tablestream.history_since(relation, first, stream.through)) }}
{% endmacro %}


{#-- The operations that change a table's schema in place. Delta's batch change feed reads a
     range with one schema, so a window must not span one (Delta refuses a rename or drop inside
     the range, or reads older rows with the wrong columns; docs/architecture.md, "Carry-overs,
     bounded runs and change queries"). --#}
{% macro delta_schema_operations() %}
  {{ return(['ADD COLUMNS', 'CHANGE COLUMN', 'CHANGE COLUMNS', 'RENAME COLUMN', 'DROP COLUMNS', 'REPLACE COLUMNS']) }}
{% endmacro %}


{#-- Where a window must end so it does not span a schema change: the version before the first
     schema-changing commit after the window's first version, with that commit; or none. The next
     window starts at the change and is read with the new schema. --#}
{% macro schema_change_split(after, through, window_rows, operations=none) %}
  {%- set operations = operations if operations is not none else dbt_tablestream.delta_schema_operations() -%}
  {%- set changes = [] -%}
  {%- for row in window_rows or [] if (row['version'] | int) > after + 1 and (row['version'] | int) <= through
        and (row['operation'] | upper) in operations -%}
    {%- do changes.append({'version': row['version'] | int, 'operation': row['operation'] | upper}) -%}
  {%- endfor -%}
  {{ return((changes | sort(attribute='version') | first) if changes else none) }}
{% endmacro %}


{% macro window_relation_sql(relation, stream, columns=none) %}
  {{ return(adapter.dispatch('window_relation_sql', 'dbt_tablestream')(relation, stream, columns)) }}
{% endmacro %}


{#-- The relation the window's raw changes are read from: the change data feed (`table_changes`) or
     Delta's changelog (stream_read: changelog). Both bounds are inclusive and the end is explicit, so
     a commit landing while the model runs is left for the next window. --#}
{% macro spark__window_relation_sql(relation, stream, columns=none) %}
  {%- if stream.snapshot -%}
    {%- set relation_sql -%}
(select *, 'insert' as _change_type, cast({{ stream.through }} as bigint) as _commit_version,
    cast('{{ stream.timestamp }}' as timestamp) as _commit_timestamp
  from {{ relation }} version as of {{ stream.through }}) as __tablestream_snapshot
    {%- endset -%}
    {{ return(relation_sql) }}
  {%- endif -%}
  {%- if stream.read == 'changelog' -%}
    {{ return(dbt_tablestream.changelog_relation_sql(relation, stream.after + 1, stream.through, stream.spark_net_changes)) }}
  {%- endif -%}
  {%- if stream.get('files') is not none -%}
    {{ return(dbt_tablestream.window_files_relation_sql(relation, stream, columns)) }}
  {%- endif -%}
  {{ return(dbt_tablestream.table_changes_sql(relation, stream.after + 1, stream.through)) }}
{% endmacro %}


{% macro table_changes_sql(relation, first, through) %}
  {{ return("table_changes('" ~ (relation | string | replace("'", "\\'")) ~ "', " ~ first ~ ", " ~ through ~ ")") }}
{% endmacro %}


{#-- A window read, whole or in part, from the Delta log's file actions (delta_log_read.sql):
     `stream.files.versions` lists the versions to read there (on_feed_off: delta_log, the commits
     the feed did not record), or none for all of them (stream_read: delta_log). The versions after
     the last one the log must read come from the change feed, in one table_changes; any earlier
     run of recorded versions is read from the log too, since two table_changes of one catalog table
     in one query were seen to return the first one's rows twice (delta-spark 4.4). Its rows are
     final: the carry-overs dropped and a key's delete and insert in a commit paired into
     update_preimage / update_postimage, both within a commit and so only where a commit both
     removed and added files; an append's rows skip both, each a shuffle of every row (a read of
     1M appended rows took 0.55 s with the cancellation, 0.12 s without; bench/README.md). --#}
{% macro window_files_relation_sql(relation, stream, columns=none) %}
  {%- set window = range(stream.after + 1, stream.through + 1) | list -%}
  {%- set listed = window if stream.files.versions is none else stream.files.versions | select('in', window) | list -%}
  {%- set feed_from = (listed | max) + 1 if listed else stream.after + 1 -%}
  {%- set parts = [] -%}
  {%- if feed_from <= stream.through -%}
    {%- do parts.append('select * from ' ~ dbt_tablestream.table_changes_sql(relation, feed_from, stream.through)) -%}
  {%- endif -%}
  {%- set from_log = window | select('lt', feed_from) | list -%}
  {%- set columns = columns if columns is not none else dbt_tablestream.window_columns(relation, stream) -%}
  {%- set log = dbt_tablestream.delta_log_changes_sql(relation, stream, dbt_tablestream.delta_log_commits(relation, stream, from_log), columns) -%}
  {%- if log.rewritten is not none -%}{%- do parts.append(log.rewritten) -%}{%- endif -%}
  {%- set rows = [] -%}
  {%- if parts -%}
    {%- set keys = dbt_tablestream.stream_pairing_keys(stream, columns) -%}
    {%- set changes = dbt_tablestream.drop_carryovers_sql('(\n  ' ~ parts | join('\n  union all\n  ') ~ '\n) as __tablestream_rewritten', columns) -%}
    {%- set change_type = "case when __tablestream_paired then (case _change_type when 'delete' then 'update_preimage' else 'update_postimage' end) "
          ~ "else _change_type end as _change_type" if keys else '_change_type' -%}
    {%- do rows.append('select ' ~ dbt_tablestream.quoted_columns(columns | map(attribute='name')) ~ ', ' ~ change_type ~ ', _commit_version, _commit_timestamp\n  from '
          ~ (dbt_tablestream.paired_changes_sql(changes, keys) if keys else changes)) -%}
  {%- endif -%}
  {%- if log.one_sided is not none -%}{%- do rows.append(log.one_sided) -%}{%- endif -%}
  {%- if not rows -%}
    {{ return('(select *, cast(null as string) as _change_type, cast(null as bigint) as _commit_version, cast(null as timestamp) as _commit_timestamp from '
        ~ relation ~ ' where 1 = 0) as __tablestream_changes') }}
  {%- endif -%}
  {{ return('(\n  ' ~ rows | join('\n  union all\n  ') ~ '\n) as __tablestream_changes') }}
{% endmacro %}


{#-- Why a window cannot be read: its `kind` decides what may follow (on_stale recovers from
     'stale', 'recreated' and 'restored'; stream_health reports it as `refusal`), its `message`
     says it with the remedy. Kinds: 'recreated' (the source's table id changed), 'restored' (the
     offset is past the source's latest version), 'stale' (log entries or files of the window are
     gone or may be), 'untracked' (the feed or row tracking did not record a commit). --#}
{% macro window_refusal(kind, message) %}
  {%- if kind not in ['recreated', 'restored', 'stale', 'untracked'] -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream.window_refusal: unknown kind " ~ kind ~ "; expected recreated, restored, stale or untracked.") }}
  {%- endif -%}
  {{ return({'kind': kind, 'message': message}) }}
{% endmacro %}


{% macro window_problem(relation, stream, table_id, window_rows=none, retained_from=none) %}
  {{ return(adapter.dispatch('window_problem', 'dbt_tablestream')(relation, stream, table_id, window_rows, retained_from)) }}
{% endmacro %}


{#-- Why the window (after, through] of the source cannot be read (a window_refusal), or none.
     `retained_from`: the time before which VACUUM may have removed the source's files
     (spark__retained_from_sql). --#}
{% macro spark__window_problem(relation, stream, table_id, window_rows=none, retained_from=none) %}
  {%- set remedy = dbt_tablestream.stream_remedy(stream) -%}
  {%- if table_id is not none and table_id != stream.source_table_id -%}
    {{ return(dbt_tablestream.window_refusal('recreated', stream.subject ~ ": the source " ~ stream.source ~ " was dropped and recreated, or replaced (Delta table id "
        ~ table_id ~ " is now " ~ stream.source_table_id ~ "), so its versions no longer continue the stream. " ~ remedy)) }}
  {%- endif -%}
  {%- if stream.after > stream.through -%}
    {{ return(dbt_tablestream.window_refusal('restored', stream.subject ~ ": its offset is version " ~ stream.after ~ " but the source " ~ stream.source
        ~ " is only at version " ~ stream.through ~ "; the source was recreated or restored. " ~ remedy)) }}
  {%- endif -%}
  {%- if stream.after == stream.through -%}{{ return(none) }}{%- endif -%}
  {%- set window = window_rows if window_rows is not none else dbt_tablestream.history_since(relation, stream.after + 1, stream.through) -%}
  {%- set listed = [] -%}
  {%- for row in window -%}{%- do listed.append(row['version'] | int) -%}{%- endfor -%}
  {%- if (stream.after + 1) not in listed -%}
    {{ return(dbt_tablestream.window_refusal('stale', stream.subject ~ " is stale: version " ~ (stream.after + 1) ~ " of " ~ stream.source
        ~ " is no longer in its Delta log (log retention, delta.logRetentionDuration), so the changes after the stream's offset "
        ~ stream.after ~ " cannot be read. " ~ remedy)) }}
  {%- endif -%}
  {#-- A VACUUM that kept the table's deletedFileRetentionDuration can have removed files of any
       commit older than that, logged or not (file systems such as s3 log no VACUUM): Delta's CDC
       reader refuses such a start itself since Delta 4.1, and earlier versions fail on a missing file. --#}
  {%- for row in window if retained_from is not none and (row['version'] | int) == stream.after + 1 and row['timestamp'] < retained_from -%}
    {{ return(dbt_tablestream.window_refusal('stale', stream.subject ~ " is stale: version " ~ (stream.after + 1) ~ " of " ~ stream.source ~ " was committed at "
        ~ row['timestamp'] ~ ", longer ago than the source's delta.deletedFileRetentionDuration (" ~ stream.file_retention
        ~ "), so a VACUUM may have removed files its changes are read from, and the changes after the stream's offset "
        ~ stream.after ~ " cannot be read completely. Run the stream more often than that, or raise the source's "
        ~ "delta.deletedFileRetentionDuration. " ~ remedy)) }}
  {%- endfor -%}
  {{ return(dbt_tablestream.window_commits_problem(stream, window)) }}
{% endmacro %}


{% macro history_since(relation, first, through) %}
  {{ return(adapter.dispatch('history_since', 'dbt_tablestream')(relation, first, through)) }}
{% endmacro %}


{#-- The source's commits from version `first` on, newest first. DESCRIBE HISTORY counts from the
     newest commit, and commits landing after the window was pinned at `through` would push its
     first versions out of a LIMIT of the window's size (a false "stale"): the read grows until it
     reaches `first` or the start of the log. --#}
{% macro spark__history_since(relation, first, through) %}
  {%- set read = namespace(limit=through - first + 2, rows=[]) -%}
  {%- for attempt in range(10) if read.limit is not none -%}
    {%- set read.rows = run_query(dbt_tablestream.describe_history_sql(relation, read.limit)).rows -%}
    {%- set read.limit = dbt_tablestream.history_limit_to_reach(read.rows, first, read.limit) -%}
  {%- endfor -%}
  {{ return(read.rows) }}
{% endmacro %}


{% macro history_limit_to_reach(rows, first, limit) %}
  {{ return(adapter.dispatch('history_limit_to_reach', 'dbt_tablestream')(rows, first, limit)) }}
{% endmacro %}


{#-- The LIMIT of the next DESCRIBE HISTORY read needed to reach version `first`, or none when
     `rows` (read with `limit`) already reach it or the start of the log. Every reader of a window's
     history uses it, the PySpark API included. --#}
{% macro spark__history_limit_to_reach(rows, first, limit) %}
  {%- set versions = [] -%}
  {%- for row in rows -%}{%- do versions.append(row['version'] | int) -%}{%- endfor -%}
  {%- if (versions | length) < limit or (versions | min) <= first -%}{{ return(none) }}{%- endif -%}
  {{ return((versions | max) - first + 1) }}
{% endmacro %}


{% macro window_commits_problem(stream, window_rows) %}
  {{ return(adapter.dispatch('window_commits_problem', 'dbt_tablestream')(stream, window_rows)) }}
{% endmacro %}


{#-- The window's commits, oldest first: every data commit was tracked (the change feed on, or for
     stream_read: changelog row tracking on from the window's first version, as Delta's changelog
     requires; a setting changed inside the window is tracked from there), unless the stream reads
     untracked commits from the Delta log (stream_read: delta_log, on_feed_off: delta_log); and
     none is older than what a later VACUUM in the window kept. Delta itself refuses such reads
     too, but later and less clearly. --#}
{% macro spark__window_commits_problem(stream, window_rows) %}
  {%- set remedy = dbt_tablestream.stream_remedy(stream) -%}
  {%- set data_operations = dbt_tablestream.delta_data_operations() -%}
  {%- set commits = dbt_tablestream.window_commit_states(stream, window_rows) -%}
  {%- set toggles = commits | selectattr('toggle', 'ne', none) | list -%}
  {#-- Delta's changelog reads a window only if row tracking is on at its first version and stays on. --#}
  {%- set untracked = toggles | rejectattr('toggle') | list -%}
  {%- if toggles and toggles[0].toggle and toggles[0].version > stream.after + 1 -%}{%- set untracked = [toggles[0]] -%}{%- endif -%}
  {%- if stream.read == 'changelog' and untracked -%}
    {{ return(dbt_tablestream.window_refusal('untracked', dbt_tablestream.changelog_window_problem(stream, untracked[0]))) }}
  {%- endif -%}
  {%- set from_log = dbt_tablestream.stream_reads_log(stream.read, stream.on_feed_off) -%}
  {%- for commit in commits -%}
    {%- if commit.operation in data_operations and not commit.tracked and not from_log -%}
      {{ return(dbt_tablestream.window_refusal('untracked', stream.subject ~ ": the change data feed of " ~ stream.source ~ " was not enabled at version " ~ commit.version
          ~ ", inside the stream's window (" ~ stream.after ~ ", " ~ stream.through ~ "], so its changes were not recorded. "
          ~ "Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ stream.source
          ~ "}'` and " ~ remedy[0] | lower ~ remedy[1:] ~ " Or read such commits from the Delta log: on_feed_off: delta_log.")) }}
    {%- endif -%}
    {%- if commit.operation == 'VACUUM START' and commit.retention -%}
      {%- set kept_from = commit.timestamp - modules.datetime.timedelta(milliseconds=commit.retention.group(1) | int) -%}
      {%- for older in commits if older.version < commit.version and older.operation in data_operations and older.timestamp < kept_from -%}
        {{ return(dbt_tablestream.window_refusal('stale', stream.subject ~ " is stale: files of version " ~ older.version ~ " of " ~ stream.source
            ~ " were removed (VACUUM) or may have been: the VACUUM at version " ~ commit.version ~ " kept only files younger than "
            ~ ((commit.retention.group(1) | int) / 3600000) | round(2) ~ " hours, so the changes after the stream's offset "
            ~ stream.after ~ " cannot be read. Reading past them would silently drop changes. " ~ remedy)) }}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- Whether a read takes commits from the Delta log's file actions: all of them (stream_read:
     delta_log) or those the change feed did not record (on_feed_off: delta_log). --#}
{% macro stream_reads_log(read, on_feed_off) %}
  {{ return(read == 'delta_log' or on_feed_off == 'delta_log') }}
{% endmacro %}


{#-- The window's versions read from the Delta log (stream.files.versions): none for all of them
     (stream_read: delta_log), else the commits the feed did not record (on_feed_off: delta_log). --#}
{% macro window_log_versions(stream, window_rows) %}
  {{ return(none if stream.read == 'delta_log'
            else dbt_tablestream.window_commit_states(stream, window_rows) | rejectattr('tracked') | map(attribute='version') | list) }}
{% endmacro %}


{#-- Whether every commit of the versions (after, through] only appended rows, as DESCRIBE HISTORY
     (`window_rows`) names them: an INSERT INTO or a DataFrame append (WRITE, mode Append), a
     streaming append (STREAMING UPDATE, outputMode Append) or a CREATE TABLE AS SELECT. Their
     change feed holds inserts alone, nothing to cancel as a carry-over (stream_drops_carryovers),
     whose cancellation is a shuffle of every row of the window. False for any other operation and
     for a version the rows do not list. --#}
{% macro window_appends_only(after, through, window_rows) %}
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


{#-- The window's commits (DESCRIBE HISTORY rows), oldest first, each with whether it was tracked
     (`tracked`: the source recorded its changes as stream.read needs, after the commit's own
     setting changes), the setting it made (`toggle`: true, false or none) and a VACUUM's
     retention. Before the first toggle the source was tracked, unless that toggle turns tracking
     on; with no toggle in the window, as the source is now (stream.files.feed_on, for a read
     that can read untracked commits from the log). --#}
{% macro window_commit_states(stream, window_rows) %}
  {%- set tracking = dbt_tablestream.stream_tracking_property(stream.read if stream.read != 'delta_log' else 'table_changes') -%}
  {%- set commits = [] -%}
  {%- for row in window_rows or [] if (row['version'] | int) > stream.after and (row['version'] | int) <= stream.through -%}
    {%- set parameters = row['operationParameters'] | string -%}
    {%- set operation = row['operation'] | upper -%}
    {%- set setting = modules.re.search(tracking.split('.')[1] ~ '\\W+(true|false)', parameters, modules.re.IGNORECASE) -%}
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


{#-- A window that Delta's changelog cannot read: row tracking was turned on after its first
     version, or turned off inside it. --#}
{% macro changelog_window_problem(stream, toggle) %}
  {%- set remedy = dbt_tablestream.stream_remedy(stream) -%}
  {%- if toggle.tracked -%}
    {{ return(stream.subject ~ ": row tracking was enabled on " ~ stream.source ~ " at version " ~ toggle.version
        ~ ", after the first version " ~ (stream.after + 1) ~ " of the stream's window (" ~ stream.after ~ ", " ~ stream.through
        ~ "], and Delta's changelog (stream_read: changelog) reads only versions where row tracking was already on. Nothing was written. "
        ~ "If the source's change data feed covers the window, run the model once with stream_read: table_changes to pass version "
        ~ toggle.version ~ "; otherwise " ~ remedy[0] | lower ~ remedy[1:]) }}
  {%- endif -%}
  {{ return(stream.subject ~ ": row tracking was disabled on " ~ stream.source ~ " at version " ~ toggle.version
      ~ ", inside the stream's window (" ~ stream.after ~ ", " ~ stream.through ~ "], so Delta's changelog (stream_read: changelog) cannot read it. "
      ~ "Nothing was written. Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ stream.source
      ~ ", mode: changelog}'` and " ~ remedy[0] | lower ~ remedy[1:]) }}
{% endmacro %}


{% macro file_retention(table_properties) %}
  {{ return(adapter.dispatch('file_retention', 'dbt_tablestream')(table_properties)) }}
{% endmacro %}


{#-- How long the source keeps removed files before a VACUUM may delete them: its
     delta.deletedFileRetentionDuration, Delta's default when unset. --#}
{% macro spark__file_retention(table_properties) %}
  {{ return(table_properties.get('delta.deletedFileRetentionDuration', 'interval 1 week')) }}
{% endmacro %}


{% macro retained_from_sql(file_retention) %}
  {{ return(adapter.dispatch('retained_from_sql', 'dbt_tablestream')(file_retention)) }}
{% endmacro %}


{#-- The moment before which a VACUUM honouring `file_retention` may have removed files
     (retained_from: NULL if Delta could not parse the interval either), and the moment of asking
     (checked_at), on the session's clock like DESCRIBE HISTORY's timestamps. --#}
{% macro spark__retained_from_sql(file_retention) %}
  {{ return("select current_timestamp() - try_cast(" ~ dbt_tablestream.sql_string(file_retention) ~ " as interval) as retained_from, current_timestamp() as checked_at") }}
{% endmacro %}


{#-- The relation whose columns a window's rows have: the source as of the window's
     `schema_version` when it ends before a schema change (its time-travel reads give those), else
     the source as it is. Pure, so the PySpark API reads its windows' columns by it too. --#}
{% macro window_schema_relation(relation, stream) %}
  {{ return(relation if stream.schema_version is none else relation ~ ' version as of ' ~ stream.schema_version) }}
{% endmacro %}


{#-- What a refusal of the reader's window advises: the value's own `remedy` (a change query's,
     stream_health's, the PySpark API's), else the model's stream reset. --#}
{% macro stream_remedy(stream) %}
  {{ return(stream.remedy if stream.remedy is not none else dbt_tablestream.stream_reset_remedy()) }}
{% endmacro %}


{#-- The remedy for a stream that can no longer continue from its offset. --#}
{% macro stream_reset_remedy() %}
  {{ return("Reset the stream with `dbt run --full-refresh -s " ~ model.name ~ "`: it rebuilds the target and starts the stream again from its start_at.") }}
{% endmacro %}

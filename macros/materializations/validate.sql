{#-- A stream model's configs: their defaults and accepted values in one table (stream_config_spec),
     one pure validation that fills every default (stream_settings_of), and the one macro that
     reads them from the model (stream_settings). Everything else reads the settings it returns.
     It runs before any SQL, and every error lists the accepted values. --#}

{#-- Every config a stream model reads, by name: `default`; `accepted`, either the values (each
     with what it means, or none) or a sentence; `doc`, what it does (docs/configuration.md is rendered
     from this table); `materialized`, the materializations it applies to (both when absent);
     `pyspark`, what the PySpark API (open_stream) takes instead; `change_query`, true for the
     configs a model's changes() reads as a stream would; `counterpart`, the same idea in
     Snowflake streams, Databricks APPLY CHANGES, dbt or Spark, for docs/configuration.md. --#}
{% macro stream_config_spec() %}
  {%- set merge_only = ['stream_merge'] -%}
  {{ return({
      'stream_name': {'counterpart': "Snowflake: the stream's name in `CREATE STREAM <name>`", 'default': none, 'accepted': 'letters, digits and underscores',
          'doc': "The stream's name, which keys its offset: two models share an offset only if they name the same stream. Unset, `<model>__<source>_<table>` (`<model>__<model>` for `ref_stream`)."},
      'stream_mode': {'counterpart': "Snowflake: `APPEND_ONLY = TRUE` (append_only) or a standard stream", 'default': 'standard', 'accepted': {'standard': none, 'append_only': none},
          'doc': "Which changes the stream sees: every insert, update and delete, or only inserts, as committed even if later updated or deleted."},
      'start_at': {'counterpart': "Snowflake: `SHOW_INITIAL_ROWS = TRUE` (snapshot; Snowflake's default is FALSE, as `latest`), `AT(VERSION/TIMESTAMP => ...)`", 'default': 'snapshot',
          'accepted': {'snapshot': none, 'latest': none, 'earliest': none, '{version: N}': none, "{timestamp: 'ISO-8601'}": none, '{stream: <stream name>}': none},
          'pyspark': {'default': 'latest', 'accepted': {'latest': none, 'earliest': none, '{version: N}': none}},
          'doc': "Where a new stream (first run, `--full-refresh`, a reset) starts: `snapshot`, the source's current rows as `INSERT`s, then changes; `latest`, changes from now; `earliest`, the whole readable change feed; `{version: N}`, changes after version N; `{timestamp: ...}`, changes after the last version committed at or before it; `{stream: <name>}`, changes after the offset another stream of the same source stands at in this model's offsets log (a second consumer, a blue/green rebuild)."},
      'stream_read': {'change_query': true, 'counterpart': "Delta: `table_changes()` or Spark's `CHANGES` clause", 'default': 'table_changes',
          'accepted': {'table_changes': "Delta's change data feed", 'changelog': "Delta's row-tracking changelog, through Spark 4.2's CHANGES clause",
                       'delta_log': "the files each commit added and removed, as the Delta log lists them; no change feed needed"},
          'renamed': {'changes': 'changelog'},
          'doc': "How the stream reads its source's changes. The project var `tablestream_stream_read` sets it for every model that sets none. `changelog` needs row tracking on the source, Spark >= 4.2 and Delta >= 4.4. `delta_log` needs neither the feed nor row tracking, only read access to the source's files: a commit's changes are the rows of the files it added and removed, diffed, so it costs the files a commit rewrote ([docs](delta-log-read.md))."},
      'on_feed_off': {'change_query': true, 'counterpart': "Databricks: none (a change feed read fails on such versions)", 'default': 'fail', 'accepted': {'fail': none, 'delta_log': none},
          'doc': "With `stream_read: table_changes`, what a run does with commits its window holds that the change feed did not record (the feed was off, or was never on): `fail` refuses; `delta_log` reads those commits from the Delta log's file actions, as `stream_read: delta_log` does, and the rest from the feed."},
      'spark_net_changes': {'counterpart': "Spark: `deduplicationMode = 'netChanges'`", 'default': false, 'accepted': 'true or false',
          'doc': "With `stream_read: changelog` and a `unique_key`: Spark nets each row's changes first (`deduplicationMode = 'netChanges'`); the package's per-key rule still runs."},
      'max_versions_per_run': {'counterpart': "Delta streaming: `maxFilesPerTrigger`", 'default': none, 'accepted': 'a whole number of source versions >= 1 (or unset, to read every pending version)',
          'doc': "A run reads at most this many source versions (whole commits) and logs how far behind it stopped; the next run continues."},
      'on_stale': {'counterpart': "Snowflake: a stale stream (`STALE = TRUE`) must be recreated, as `fail`", 'default': 'fail', 'accepted': {'fail': none, 'resnapshot': none, 'skip_to_latest': none},
          'doc': "What a run does when the source went stale (its window's log entries or files are gone, as after a `VACUUM`) or was dropped and recreated: `fail` refuses; `resnapshot` rebuilds the target from a snapshot of the latest version, in a new epoch; `skip_to_latest` moves the offset to the latest version in a new epoch and applies nothing, with a warning listing the skipped versions. The offsets row records why in its `note`."},
      'drop_carryovers': {'counterpart': "Spark `CHANGES`: carry-over removal; Snowflake streams never show unchanged rows", 'default': true, 'accepted': 'true or false',
          'doc': "Leave out rows a commit rewrote without changing them (equal pre- and post-images of an UPDATE or MERGE, an equal delete and insert in one version)."},
      'file_format': {'counterpart': "dbt: `file_format`", 'default': none, 'accepted': {'delta': none}, 'doc': "A stream target is a Delta table; leave it unset."},
      'on_schema_change': {'counterpart': "dbt incremental: `on_schema_change`", 'default': 'ignore', 'accepted': {'ignore': none, 'fail': none, 'append_new_columns': none, 'sync_all_columns': none},
          'doc': "dbt's handling of a change of the model's columns, applied at the window that starts at the source's schema change; a refusal names the change."},
      'unique_key': {'change_query': true, 'counterpart': "dbt: `unique_key`; APPLY CHANGES: `KEYS`", 'default': none, 'accepted': 'a column name or a list of column names',
          'doc': "The key of a target row. Required by `stream_merge`; on a `table_stream`, each run logs the window's net changes per key. With `stream_read: delta_log` (a stream, or `changes()` in the model) it also pairs a key's delete and insert in one commit into an update."},
      'net_changes': {'counterpart': "Snowflake: a standard stream returns net changes", 'default': true, 'accepted': 'true or false',
          'doc': "A `table_stream` with a `unique_key` logs one net change per key and window; `false` logs every change. `stream_merge` always applies net changes."},
      'max_rows_per_file': {'counterpart': "Spark: `maxRecordsPerFile`; Databricks: `delta.targetFileSize`", 'default': 250000, 'accepted': "a whole number of rows >= 0 (0 leaves file sizes to Spark's spark.sql.files.maxRecordsPerFile)", 'materialized': merge_only,
          'doc': "The most rows a file of a `stream_merge` target holds (the first build, a rebuild, each MERGE), so a run copies only the files that hold changed keys."},
      'delete_mode': {'counterpart': "APPLY CHANGES (SCD 1): deletes rows, as `hard`", 'default': 'hard', 'accepted': {'hard': none, 'soft': none, 'ignore': none}, 'materialized': merge_only,
          'doc': "What a delete does to the target row: `hard` deletes it, `soft` keeps it with `_deleted = true`, `_deleted_version` and `_deleted_at` (a later re-insert revives it), `ignore` drops deletes."},
      'merge_update_columns': {'counterpart': "dbt incremental: `merge_update_columns`", 'default': none, 'accepted': 'a list of column names', 'materialized': merge_only,
          'doc': "The only columns an update sets (not with `merge_exclude_columns`)."},
      'merge_exclude_columns': {'counterpart': "dbt incremental: `merge_exclude_columns`", 'default': none, 'accepted': 'a list of column names', 'materialized': merge_only,
          'doc': "Columns an update leaves as they are (not with `merge_update_columns`)."},
      'target_exclude_columns': {'counterpart': "APPLY CHANGES: `COLUMNS * EXCEPT (...)`", 'default': [], 'accepted': 'a list of column names', 'materialized': merge_only,
          'doc': "Model columns left out of the target (not the key)."},
      'merge_key_ranges': {'counterpart': "Databricks: dynamic file pruning does this unasked", 'default': 32, 'accepted': "a whole number >= 0 (the most key ranges of a window the MERGE names for Delta's file skipping; 0 names none)", 'materialized': merge_only,
          'doc': "The MERGE names up to this many of the window's key ranges in its ON clause, so Delta reads only the files that hold changed keys."},
      'sequence_by': {'counterpart': "APPLY CHANGES: `SEQUENCE BY`", 'default': none, 'accepted': 'a column name or a list of column names (compared in order)', 'materialized': merge_only,
          'doc': "Makes the source a CDC event source: per key the event with the greatest sequence wins, within a window and across runs."},
      'apply_as_deletes': {'counterpart': "APPLY CHANGES: `APPLY AS DELETE WHEN`", 'default': none, 'accepted': "a SQL boolean expression over the model's columns, such as op = 'd'", 'materialized': merge_only,
          'doc': "With `sequence_by`: which events are deletes."},
      'ignore_null_updates': {'counterpart': "APPLY CHANGES: `IGNORE NULL UPDATES`", 'default': false, 'accepted': {true: 'every column', false: none, 'a list of column names': none}, 'materialized': merge_only,
          'doc': "With `sequence_by`: a NULL in an update keeps the stored value (in every column, or in those listed)."},
      'tombstone_retention': {'counterpart': "APPLY CHANGES: `pipelines.cdc.tombstoneGCThresholdInSeconds`", 'default': '7 days', 'accepted': "a whole number of days, hours or minutes, such as '36 hours'", 'materialized': merge_only,
          'doc': "With `sequence_by` and `delete_mode: hard`: how long a delete is remembered (in `<target>__tablestream_tombstones`) against late, older events."},
      'apply_as_truncates': {'counterpart': "APPLY CHANGES: `APPLY AS TRUNCATE WHEN`", 'default': none, 'accepted': 'not supported (apply a truncate as deletes of its keys with apply_as_deletes)', 'materialized': merge_only,
          'doc': "Refused: apply a truncate as deletes of its keys, or rebuild with `--full-refresh`."},
      'scd_type': {'counterpart': "APPLY CHANGES: `STORED AS SCD TYPE 1 / 2`; dbt snapshots (type 2)", 'default': 1, 'accepted': {1: "the target holds each key's current row", 2: 'the target keeps every version, with dbt_valid_from and dbt_valid_to'}, 'materialized': merge_only,
          'doc': "History: with 2 the target keeps every version of each key, with dbt snapshot's columns (`dbt_scd_id`, `dbt_updated_at`, `dbt_valid_from`, `dbt_valid_to`)."},
      'track_history_columns': {'counterpart': "APPLY CHANGES: `TRACK HISTORY ON (...)`; dbt snapshot: `check_cols`", 'default': none, 'accepted': 'a non-empty list of column names', 'materialized': merge_only,
          'doc': "With `scd_type: 2`: the columns whose change opens a new version (unset, every column); the others are updated in place."},
      'track_history_except_columns': {'counterpart': "APPLY CHANGES: `TRACK HISTORY ON * EXCEPT (...)`", 'default': none, 'accepted': 'a non-empty list of column names', 'materialized': merge_only,
          'doc': "With `scd_type: 2`: every column but these opens a new version."},
      'hard_deletes': {'counterpart': "dbt snapshot: `hard_deletes`, the same values", 'default': 'invalidate',
          'accepted': {'invalidate': 'a delete closes the current version', 'new_record': 'also a row with dbt_is_deleted = true', 'ignore': 'deletes close nothing'},
          'materialized': merge_only, 'doc': "With `scd_type: 2`: what a delete does to the key's history, as dbt snapshots' `hard_deletes`."},
  }) }}
{% endmacro %}


{#-- The accepted values of a config as the messages and docs list them: `a (meaning), b`, the
     default marked when the values have meanings. --#}
{% macro stream_config_accepted(entry) %}
  {%- if entry.accepted is string -%}{{ return(entry.accepted) }}{%- endif -%}
  {%- set explained = entry.accepted.values() | reject('none') | list | length > 0 -%}
  {%- set values = [] -%}
  {%- for value, meaning in entry.accepted.items() -%}
    {%- set notes = ([meaning] if meaning else []) + (['the default'] if explained and value == entry.default else []) -%}
    {%- do values.append(((value | string | lower) if value is boolean else value | string) ~ (' (' ~ notes | join(', ') ~ ')' if notes else '')) -%}
  {%- endfor -%}
  {{ return(values | join(', ')) }}
{% endmacro %}


{#-- The stream settings of one model: `raw` holds its configs (a missing or none value takes the
     default); `subject` opens each error ("Model orders"); `materialized` is table_stream,
     stream_merge, pyspark (open_stream's arguments) or none (a model reading changes()). Pure:
     it reads nothing but its arguments, so the PySpark API renders it too. Returns every config
     of the spec with its default filled and its value normalised (`unique_key` and the column
     lists as lists, `max_rows_per_file` none for 0), and for stream_merge `events`, `history` and
     `strategy` (net, events or history: the MERGE the materialization runs). --#}
{% macro stream_settings_of(raw, subject, materialized) %}
  {%- set settings = {'materialized': materialized, 'configured': []} -%}
  {%- set accepted = {} -%}
  {%- set choices = {} -%}
  {%- set renamed = {} -%}
  {%- for name, listed in dbt_tablestream.stream_config_spec().items()
        if 'materialized' not in listed or materialized in listed.materialized -%}
    {%- set entry = listed.pyspark if materialized == 'pyspark' and 'pyspark' in listed else listed -%}
    {%- set value = raw.get(name) -%}
    {%- if value is not none -%}{%- do settings.configured.append(name) -%}{%- endif -%}
    {%- do settings.update({name: value if value is not none else entry.default}) -%}
    {%- do accepted.update({name: dbt_tablestream.stream_config_accepted(entry)}) -%}
    {%- if entry.accepted is mapping -%}{%- do choices.update({name: entry.accepted.keys() | list}) -%}{%- endif -%}
    {%- if 'renamed' in listed -%}{%- do renamed.update({name: listed.renamed}) -%}{%- endif -%}
  {%- endfor -%}

  {#-- A value renamed before 1.0 is refused with its new name until 1.0, before anything runs. --#}
  {%- for name, names in renamed.items() if settings[name] is string and settings[name] in names -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " '" ~ settings[name] ~ "' was renamed to '" ~ names[settings[name]]
        ~ "' in 0.2.0: set " ~ name ~ ": " ~ names[settings[name]] ~ " (in the model's config, or the project var tablestream_" ~ name
        ~ " where the project sets it). The old name is refused until 1.0.") }}
  {%- endfor -%}
  {%- for name in ['stream_mode', 'on_stale', 'on_schema_change', 'on_feed_off'] if name in settings and settings[name] not in choices[name] -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid " ~ name ~ " '" ~ settings[name] ~ "'. Accepted values: " ~ accepted[name]
        ~ (" (what a run does when the source went stale or was recreated: refuse, rebuild the target from a snapshot, or skip to the latest version)." if name == 'on_stale' else "")) }}
  {%- endfor -%}

  {%- set start_at = settings.start_at -%}
  {%- set start_kinds = ['version'] if materialized == 'pyspark' else ['version', 'timestamp', 'stream'] -%}
  {%- if start_at is mapping -%}
    {%- if start_at | length != 1 or (start_at.keys() | list)[0] not in start_kinds -%}
      {{ exceptions.raise_compiler_error(subject ~ ": invalid start_at " ~ start_at ~ ". Accepted values: " ~ accepted.start_at) }}
    {%- endif -%}
    {%- if 'version' in start_at and not dbt_tablestream.is_whole_number(start_at.version, 0) -%}
      {{ exceptions.raise_compiler_error(subject ~ ": start_at version must be a whole number >= 0, got " ~ start_at.version) }}
    {%- endif -%}
    {%- if 'timestamp' in start_at and start_at.timestamp is not string -%}
      {{ exceptions.raise_compiler_error(subject ~ ": start_at timestamp must be an ISO-8601 string in quotes, got " ~ start_at.timestamp) }}
    {%- endif -%}
    {%- if 'stream' in start_at and (start_at.stream is not string or not modules.re.fullmatch('[A-Za-z0-9_]+', start_at.stream)) -%}
      {{ exceptions.raise_compiler_error(subject ~ ": start_at stream must name a stream of the same source (letters, digits and underscores), got " ~ start_at.stream) }}
    {%- endif -%}
  {%- elif start_at not in choices.start_at -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid start_at '" ~ start_at ~ "'. Accepted values: " ~ accepted.start_at) }}
  {%- endif -%}
  {%- if materialized == 'pyspark' -%}{{ return(settings) }}{%- endif -%}

  {%- if settings.stream_read not in choices.stream_read -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid stream_read '" ~ settings.stream_read ~ "' (the model's config, or the project var tablestream_stream_read). Accepted values: "
        ~ accepted.stream_read ~ ".") }}
  {%- endif -%}
  {%- if settings.on_feed_off != 'fail' and settings.stream_read != 'table_changes' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": on_feed_off says how a change feed read treats commits the feed did not record, so it needs stream_read: table_changes (stream_read is '" ~ settings.stream_read ~ "'). Remove on_feed_off.") }}
  {%- endif -%}
  {#-- The key also pairs a Delta log read's deletes and inserts into updates, changes() included. --#}
  {%- set unique_key = settings.unique_key -%}
  {%- set keys = [] if unique_key is none else [unique_key] if unique_key is string else unique_key -%}
  {%- if unique_key is not none and (keys is not sequence or keys | length == 0 or keys | reject('string') | list | length > 0) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": unique_key must be " ~ accepted.unique_key ~ ", got " ~ unique_key) }}
  {%- endif -%}
  {%- do settings.update({'unique_key': keys | list}) -%}
  {%- if materialized not in ['table_stream', 'stream_merge'] -%}{{ return(settings) }}{%- endif -%}
  {%- for name in ['spark_net_changes', 'drop_carryovers', 'net_changes'] if settings[name] not in [true, false] -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " must be " ~ accepted[name] ~ ", got " ~ settings[name]) }}
  {%- endfor -%}
  {%- if settings.spark_net_changes and settings.stream_read != 'changelog' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": spark_net_changes asks Spark's CHANGES clause to net the changes, so it needs stream_read: changelog (stream_read is '" ~ settings.stream_read ~ "').") }}
  {%- endif -%}
  {%- if settings.spark_net_changes and materialized == 'table_stream' and (not settings.unique_key or not settings.net_changes) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": spark_net_changes nets changes, and a table_stream without unique_key (or with net_changes: false) logs every change. Set unique_key, or remove spark_net_changes.") }}
  {%- endif -%}

  {%- set max_versions = settings.max_versions_per_run -%}
  {%- if max_versions is not none and not dbt_tablestream.is_whole_number(max_versions, 1) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": max_versions_per_run must be " ~ accepted.max_versions_per_run ~ ", got " ~ max_versions) }}
  {%- endif -%}
  {%- set stream_name = settings.stream_name -%}
  {%- if stream_name is not none and (stream_name is not string or not modules.re.fullmatch('[A-Za-z0-9_]+', stream_name)) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": stream_name '" ~ stream_name ~ "' must be letters, digits and underscores.") }}
  {%- endif -%}
  {%- if settings.file_format is not none and settings.file_format not in choices.file_format -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a stream target is a Delta table, so file_format '" ~ settings.file_format ~ "' cannot be used. Accepted values: " ~ accepted.file_format ~ " (or leave it unset).") }}
  {%- endif -%}
  {%- if materialized == 'stream_merge' -%}
    {%- do settings.update(dbt_tablestream.stream_merge_settings_of(settings, subject, accepted, choices)) -%}
  {%- endif -%}
  {{ return(settings) }}
{% endmacro %}


{#-- The stream_merge part of stream_settings_of: the key, deletes, update columns, and the
     event (validate_stream_events_config) and history (validate_stream_history_config) configs,
     from which the strategy is chosen once. --#}
{% macro stream_merge_settings_of(settings, subject, accepted, choices) %}
  {%- set keys = settings.unique_key -%}
  {%- if not keys -%}
    {{ exceptions.raise_compiler_error(subject ~ " is a stream_merge model and needs unique_key: the column (or list of columns) that identifies a target row.") }}
  {%- endif -%}
  {%- if settings.delete_mode not in choices.delete_mode -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid delete_mode '" ~ settings.delete_mode ~ "'. Accepted values: " ~ accepted.delete_mode) }}
  {%- endif -%}
  {%- set update_columns = settings.merge_update_columns -%}
  {%- set exclude_columns = settings.merge_exclude_columns -%}
  {%- if update_columns is not none and exclude_columns is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": set merge_update_columns or merge_exclude_columns, not both.") }}
  {%- endif -%}
  {%- for option in [update_columns, exclude_columns] if option is not none and (option is string or option is not sequence) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": merge_update_columns and merge_exclude_columns take " ~ accepted.merge_update_columns ~ ", got " ~ option) }}
  {%- endfor -%}
  {%- if not settings.net_changes -%}
    {{ exceptions.raise_compiler_error(subject ~ ": stream_merge always applies net changes (at most one change meets each target row); remove net_changes: false.") }}
  {%- endif -%}
  {%- set target_exclude = settings.target_exclude_columns -%}
  {%- if target_exclude is string or target_exclude is not sequence or target_exclude | reject('string') | list -%}
    {{ exceptions.raise_compiler_error(subject ~ ": target_exclude_columns takes " ~ accepted.target_exclude_columns ~ ", got " ~ target_exclude) }}
  {%- endif -%}
  {%- set excluded_keys = keys | select('in', target_exclude) | list -%}
  {%- if excluded_keys -%}
    {{ exceptions.raise_compiler_error(subject ~ ": target_exclude_columns lists the unique_key column(s) " ~ excluded_keys | join(', ') ~ "; a target row is found by its key, so the key stays in the target.") }}
  {%- endif -%}
  {%- set key_ranges = settings.merge_key_ranges -%}
  {%- if not dbt_tablestream.is_whole_number(key_ranges, 0) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": merge_key_ranges must be " ~ accepted.merge_key_ranges ~ ", got " ~ key_ranges) }}
  {%- endif -%}
  {%- set bound = settings.max_rows_per_file -%}
  {%- if not dbt_tablestream.is_whole_number(bound, 0) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": max_rows_per_file must be " ~ accepted.max_rows_per_file ~ ", got " ~ bound) }}
  {%- endif -%}
  {%- set events = dbt_tablestream.validate_stream_events_config(settings, subject, accepted) -%}
  {%- set history = dbt_tablestream.validate_stream_history_config(settings, subject, accepted, choices, events) -%}
  {{ return({'target_exclude_columns': target_exclude | list, 'merge_key_ranges': key_ranges | int, 'max_rows_per_file': bound | int if bound > 0 else none,
             'events': events, 'history': history, 'sequence': events.sequence if events else [],
             'strategy': 'history' if history is not none else 'events' if events is not none else 'net'}) }}
{% endmacro %}


{#-- Whether a config's value is a whole number >= `minimum`. YAML's true is a number to Jinja,
     so true and false are not whole numbers here; 2.0 is, 2.5 is not. --#}
{% macro is_whole_number(value, minimum) %}
  {{ return(value is number and value is not boolean and value >= minimum and value == value | int) }}
{% endmacro %}


{#-- The settings of the stream model being compiled or run, validated by stream_settings_of,
     after the checks that need the connection (the engine, and dbt-spark's shared session), with
     the run's commit protocol (`protocol`: stream_commit_protocol's {name, reason}). --#}
{% macro stream_settings() %}
  {%- set model_name = model.name if model is defined else this.identifier -%}
  {%- do dbt_tablestream.stream_engine_check('the stream model ' ~ model_name) -%}
  {%- do dbt_tablestream.validate_stream_session(model_name) -%}
  {%- set settings = dbt_tablestream.stream_settings_of(dbt_tablestream.stream_configs('Model ' ~ model_name), 'Model ' ~ model_name, config.get('materialized', none)) -%}
  {{ return(dict(settings, protocol=dbt_tablestream.stream_commit_protocol())) }}
{% endmacro %}


{#-- The current model's stream configs as it sets them (none when unset), each read by
     stream_model_config (under meta, at the top level, and for stream_read the project var
     tablestream_stream_read when the model sets none). --#}
{% macro stream_configs(subject) %}
  {%- set raw = {} -%}
  {%- for name in dbt_tablestream.stream_config_spec() -%}
    {%- do raw.update({name: dbt_tablestream.stream_model_config(name, subject, project_var='tablestream_stream_read' if name == 'stream_read' else none)}) -%}
  {%- endfor -%}
  {{ return(raw) }}
{% endmacro %}


{#-- A stream's commit is marked with Delta's session-wide settings (write.txnAppId, txnVersion,
     commitInfo.userMetadata). dbt-spark's session method gives every dbt thread the same
     SparkSession, so with more than one thread one model's marker could land on another's write. --#}
{% macro validate_stream_session(model_name) %}
  {%- set method = adapter.config.credentials.method | string if adapter.type() == 'spark' else none -%}
  {%- if method in ['session', 'SparkConnectionMethod.SESSION'] and (target.threads | int) > 1 -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_name ~ " is a stream model, and dbt-spark's session method shares one SparkSession between its "
        ~ target.threads ~ " threads, so Delta's session-wide write settings that mark each stream commit would be shared too. "
        ~ "Nothing was written. Either use `type: tablestream` (a local session per dbt thread) or set `threads: 1` in this profile.") }}
  {%- endif -%}
{% endmacro %}


{#-- The configs of an SCD type 2 target (`scd_type: 2`; docs/architecture.md, "History"):
     `track_history_columns` or `track_history_except_columns`, and `hard_deletes`. Returns none
     for scd_type 1, otherwise {hard_deletes, track, track_except}. --#}
{% macro validate_stream_history_config(settings, subject, accepted, choices, events) %}
  {%- set track = settings.track_history_columns -%}
  {%- set track_except = settings.track_history_except_columns -%}
  {%- if settings.scd_type | string not in choices.scd_type | map('string') | list -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid scd_type '" ~ settings.scd_type ~ "'. Accepted values: " ~ accepted.scd_type ~ ".") }}
  {%- endif -%}
  {%- if settings.scd_type | string == '1' -%}
    {%- set history_only = ['track_history_columns', 'track_history_except_columns', 'hard_deletes'] | select('in', settings.configured) | list -%}
    {%- if history_only -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ history_only | join(', ') ~ " shape the history of an SCD type 2 target, so "
          ~ ("it needs" if history_only | length == 1 else "they need") ~ " scd_type: 2.") }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- if track is not none and track_except is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": set track_history_columns or track_history_except_columns, not both.") }}
  {%- endif -%}
  {%- for name, option in [['track_history_columns', track], ['track_history_except_columns', track_except]]
        if option is not none and (option is string or option is not sequence or option | reject('string') | list or not option) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " takes " ~ accepted[name] ~ ", got " ~ option) }}
  {%- endfor -%}
  {%- if settings.hard_deletes not in choices.hard_deletes -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid hard_deletes '" ~ settings.hard_deletes ~ "'. Accepted values: " ~ accepted.hard_deletes ~ ".") }}
  {%- endif -%}
  {%- if settings.delete_mode != 'hard' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": delete_mode '" ~ settings.delete_mode ~ "' shapes an SCD type 1 target; with scd_type: 2 a delete closes the key's version. "
        ~ "Use hard_deletes (" ~ accepted.hard_deletes ~ ") instead.") }}
  {%- endif -%}
  {%- if settings.merge_update_columns is not none or settings.merge_exclude_columns is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": merge_update_columns and merge_exclude_columns shape an SCD type 1 update; with scd_type: 2 "
        ~ "use track_history_columns or track_history_except_columns (the other columns are updated in place).") }}
  {%- endif -%}
  {%- if events and events['ignore_null'] -%}
    {{ exceptions.raise_compiler_error(subject ~ ": ignore_null_updates is not supported with scd_type: 2 (docs/history.md); "
        ~ "coalesce the columns in the model instead.") }}
  {%- endif -%}
  {%- if events and events['sequence'] | length > 1 -%}
    {{ exceptions.raise_compiler_error(subject ~ ": with scd_type: 2, dbt_valid_from and dbt_valid_to take the sequence_by value, so sequence_by must be one column, got "
        ~ events['sequence'] | join(', ') ~ ". Combine them in the model into one comparable column.") }}
  {%- endif -%}
  {{ return({'hard_deletes': settings.hard_deletes, 'track': track, 'track_except': track_except}) }}
{% endmacro %}


{#-- The columns whose change opens a new version of an SCD type 2 target: track_history_columns,
     or the data columns less track_history_except_columns, never the key or the sequence (a new
     sequence is a new event, not a new version). Refuses a listed column the output lacks. --#}
{% macro history_tracked_columns(stream, history, data_columns, keys, sequence) %}
  {%- set listed = history['track'] if history['track'] is not none else history['track_except'] or [] -%}
  {%- set config_name = 'track_history_columns' if history['track'] is not none else 'track_history_except_columns' -%}
  {%- for column in listed if column not in data_columns -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream.stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": " ~ config_name ~ " names " ~ column ~ ", which is not a column of the target of model "
        ~ model.name ~ " (" ~ data_columns | join(', ') ~ "). Fix the config or select the column. Nothing was written.") }}
  {%- endfor -%}
  {%- set reserved = data_columns | select('in', dbt_tablestream.history_columns({'hard_deletes': 'new_record'})) | list -%}
  {%- if reserved -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream.stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": the output of model " ~ model.name ~ " has " ~ reserved | join(', ')
        ~ ", which an SCD type 2 target adds itself. Rename or drop them in the model, or list them in target_exclude_columns. Nothing was written.") }}
  {%- endif -%}
  {%- set tracked = history['track'] if history['track'] is not none else data_columns | reject('in', listed) | list -%}
  {{ return(tracked | reject('in', keys + sequence) | list) }}
{% endmacro %}


{#-- The configs of a CDC event source (docs/architecture.md, "Event sources"): `sequence_by`,
     `apply_as_deletes`, `ignore_null_updates`, `tombstone_retention`. Returns none without
     `sequence_by`, otherwise {sequence, deletes, ignore_null, tombstone_retention}. --#}
{% macro validate_stream_events_config(settings, subject, accepted) %}
  {%- set keys = settings.unique_key -%}
  {%- set sequence_by = settings.sequence_by -%}
  {%- set deletes = settings.apply_as_deletes -%}
  {%- set ignore_null = settings.ignore_null_updates -%}
  {%- if 'apply_as_truncates' in settings.configured -%}
    {{ exceptions.raise_compiler_error(subject ~ ": apply_as_truncates is not supported (docs/cdc-events.md). "
        ~ "Apply a truncate as deletes of its keys with apply_as_deletes, or rebuild the target with --full-refresh.") }}
  {%- endif -%}
  {%- if sequence_by is none -%}
    {%- set needing = [] -%}
    {%- for name in ['apply_as_deletes', 'ignore_null_updates', 'tombstone_retention'] if name in settings.configured and settings[name] != false -%}
      {%- do needing.append(name) -%}
    {%- endfor -%}
    {%- if needing -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ needing | join(', ') ~ " order events by their sequence, so "
          ~ ("it needs" if needing | length == 1 else "they need") ~ " sequence_by: the column (or list of columns) whose greatest value per key wins.") }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set sequence = [sequence_by] if sequence_by is string else sequence_by -%}
  {%- if sequence is string or sequence is not sequence or sequence | length == 0 or sequence | reject('string') | list -%}
    {{ exceptions.raise_compiler_error(subject ~ ": sequence_by must be " ~ accepted.sequence_by ~ ", got " ~ sequence_by) }}
  {%- endif -%}
  {%- set keyed = sequence | select('in', keys) | list -%}
  {%- if keyed -%}
    {{ exceptions.raise_compiler_error(subject ~ ": sequence_by lists the unique_key column(s) " ~ keyed | join(', ') ~ "; the sequence orders the events of one key, so it must be other columns.") }}
  {%- endif -%}
  {%- set stream_columns = sequence | select('in', ['__change_type', '__commit_version', '__commit_timestamp']) | list -%}
  {%- if stream_columns -%}
    {{ exceptions.raise_compiler_error(subject ~ ": sequence_by lists the stream column(s) " ~ stream_columns | join(', ')
        ~ ", which the target does not keep. Select it as a column of your own (such as __commit_version as commit_seq) and name that.") }}
  {%- endif -%}
  {%- set hidden = sequence | select('in', settings.target_exclude_columns) | list -%}
  {%- if hidden and settings.scd_type | string != '2' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": target_exclude_columns lists the sequence_by column(s) " ~ hidden | join(', ')
        ~ ". The target keeps each row's sequence, which is how a late event is recognised as older (docs/cdc-events.md); exclude the event's other columns, such as its operation.") }}
  {%- endif -%}
  {%- if deletes is not none and (deletes is not string or not deletes | trim) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": apply_as_deletes must be " ~ accepted.apply_as_deletes ~ ", got " ~ deletes) }}
  {%- endif -%}
  {%- if ignore_null is sequence and ignore_null is not string -%}
    {%- if not ignore_null or ignore_null | reject('string') | list -%}
      {{ exceptions.raise_compiler_error(subject ~ ": ignore_null_updates takes true, false or a non-empty list of column names, got " ~ ignore_null) }}
    {%- endif -%}
    {%- set ignore_null = ignore_null | list -%}
  {%- elif ignore_null in [true, false, none] -%}
    {%- set ignore_null = ignore_null or false -%}
  {%- else -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid ignore_null_updates '" ~ ignore_null ~ "'. Accepted values: " ~ accepted.ignore_null_updates ~ ".") }}
  {%- endif -%}
  {%- set retention = settings.tombstone_retention -%}
  {%- set parsed = modules.re.fullmatch('\\s*(\\d+)\\s+(day|days|hour|hours|minute|minutes)\\s*', retention | string) -%}
  {%- if not parsed -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid tombstone_retention '" ~ retention ~ "'. Accepted values: " ~ accepted.tombstone_retention ~ "; the default is '" ~ dbt_tablestream.stream_config_spec().tombstone_retention.default ~ "'.") }}
  {%- endif -%}
  {{ return({'sequence': sequence | list, 'deletes': deletes, 'ignore_null': ignore_null, 'ignore_deletes': settings.delete_mode == 'ignore',
             'tombstone_retention': parsed.group(1) ~ ' ' ~ parsed.group(2)}) }}
{% endmacro %}

{#-- Validation of stream configs. Runs before any SQL; every error lists the accepted values. --#}

{% macro validate_stream_config() %}
  {%- set model_name = model.name if model is defined else this.identifier -%}
  {%- do dbt_tablestream.stream_engine_check('the stream model ' ~ model_name) -%}
  {%- do dbt_tablestream.validate_stream_session(model_name) -%}
  {%- set mode = config.get('stream_mode', 'standard') -%}
  {%- set accepted_modes = ['standard', 'append_only'] -%}
  {%- if mode not in accepted_modes -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid stream_mode '" ~ mode ~ "'. Accepted values: " ~ accepted_modes | join(', ')) }}
  {%- endif -%}

  {%- set start_at = config.get('start_at', 'snapshot') -%}
  {%- set accepted_start = "snapshot, latest, earliest, {version: N}, {timestamp: 'ISO-8601'}, {stream: <stream name>}" -%}
  {%- if start_at is mapping -%}
    {%- if start_at | length != 1 or (start_at.keys() | list)[0] not in ['version', 'timestamp', 'stream'] -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid start_at " ~ start_at ~ ". Accepted values: " ~ accepted_start) }}
    {%- endif -%}
    {%- if 'version' in start_at and (start_at.version is not number or start_at.version < 0 or start_at.version != start_at.version | int) -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": start_at version must be a whole number >= 0, got " ~ start_at.version) }}
    {%- endif -%}
    {%- if 'timestamp' in start_at and start_at.timestamp is not string -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": start_at timestamp must be an ISO-8601 string in quotes, got " ~ start_at.timestamp) }}
    {%- endif -%}
    {%- if 'stream' in start_at and (start_at.stream is not string or not modules.re.fullmatch('[A-Za-z0-9_]+', start_at.stream)) -%}
      {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": start_at stream must name a stream of the same source (letters, digits and underscores), got " ~ start_at.stream) }}
    {%- endif -%}
  {%- elif start_at not in ['snapshot', 'latest', 'earliest'] -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid start_at '" ~ start_at ~ "'. Accepted values: " ~ accepted_start) }}
  {%- endif -%}

  {%- set read = dbt_tablestream.stream_read_mode() -%}
  {%- set accepted_reads = ['table_changes', 'changes'] -%}
  {%- if read not in accepted_reads -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid stream_read '" ~ read ~ "' (the model's config, or the project var tablestream_stream_read). Accepted values: "
        ~ "table_changes (Delta's change data feed, the default), changes (Spark 4.2's CHANGES clause over Delta's row tracking).") }}
  {%- endif -%}
  {%- set spark_net_changes = config.get('spark_net_changes', false) -%}
  {%- if spark_net_changes not in [true, false] -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": spark_net_changes must be true or false, got " ~ spark_net_changes) }}
  {%- endif -%}
  {%- if spark_net_changes and read != 'changes' -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": spark_net_changes asks Spark's CHANGES clause to net the changes, so it needs stream_read: changes (stream_read is '" ~ read ~ "').") }}
  {%- endif -%}
  {%- if spark_net_changes and config.get('materialized') == 'table_stream' and (config.get('unique_key', none) is none or not config.get('net_changes', true)) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": spark_net_changes nets changes, and a table_stream without unique_key (or with net_changes: false) logs every change. Set unique_key, or remove spark_net_changes.") }}
  {%- endif -%}

  {%- set max_versions = config.get('max_versions_per_run', none) -%}
  {%- if max_versions is not none and (max_versions is not number or max_versions is boolean or max_versions < 1 or max_versions != max_versions | int) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": max_versions_per_run must be a whole number of source versions >= 1 (or unset, to read every pending version), got " ~ max_versions) }}
  {%- endif -%}
  {%- set on_stale = config.get('on_stale', 'fail') -%}
  {%- set accepted_stale = ['fail', 'resnapshot', 'skip_to_latest'] -%}
  {%- if on_stale not in accepted_stale -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid on_stale '" ~ on_stale ~ "'. Accepted values: " ~ accepted_stale | join(', ')
        ~ " (what a run does when the source went stale or was recreated: refuse, rebuild the target from a snapshot, or skip to the latest version).") }}
  {%- endif -%}
  {%- set drop_carryovers = config.get('drop_carryovers', true) -%}
  {%- if drop_carryovers not in [true, false] -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": drop_carryovers must be true or false, got " ~ drop_carryovers) }}
  {%- endif -%}

  {%- set stream_name = config.get('stream_name', none) -%}
  {%- if stream_name is not none and (stream_name is not string or not modules.re.fullmatch('[A-Za-z0-9_]+', stream_name)) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": stream_name '" ~ stream_name ~ "' must be letters, digits and underscores.") }}
  {%- endif -%}

  {%- set file_format = config.get('file_format', none) -%}
  {%- if file_format is not none and file_format != 'delta' -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": a stream target is a Delta table, so file_format '" ~ file_format ~ "' cannot be used. Accepted values: delta (or leave it unset).") }}
  {%- endif -%}

  {%- set on_schema_change = config.get('on_schema_change', 'ignore') -%}
  {%- set accepted_changes = ['ignore', 'fail', 'append_new_columns', 'sync_all_columns'] -%}
  {%- if on_schema_change not in accepted_changes -%}
    {{ exceptions.raise_compiler_error("Model " ~ model_name ~ ": invalid on_schema_change '" ~ on_schema_change ~ "'. Accepted values: " ~ accepted_changes | join(', ')) }}
  {%- endif -%}
  {%- do dbt_tablestream.stream_max_rows_per_file() -%}
{% endmacro %}


{#-- The most rows a file of the target's writes holds (`max_rows_per_file`; default 250,000,
     bench/run.py --scale), or none when set to 0 (Spark's own setting then applies). --#}
{% macro stream_max_rows_per_file() %}
  {%- set bound = config.get('max_rows_per_file', 250000) -%}
  {%- if bound is not number or bound is boolean or bound < 0 or bound != bound | int -%}
    {{ exceptions.raise_compiler_error("Model " ~ (model.name if model is defined else this.identifier) ~ ": max_rows_per_file must be a whole number of rows >= 0 "
        ~ "(0 leaves file sizes to Spark's spark.sql.files.maxRecordsPerFile), got " ~ bound) }}
  {%- endif -%}
  {{ return(bound | int if bound > 0 else none) }}
{% endmacro %}


{#-- How the stream reads its source's changes: the model's `stream_read`, else the project var
     `tablestream_stream_read`, else Delta's change data feed. --#}
{% macro stream_read_mode() %}
  {{ return(config.get('stream_read', none) or var('tablestream_stream_read', 'table_changes')) }}
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


{#-- `unique_key` as a list of column names ([] when unset). --#}
{% macro stream_unique_key() %}
  {%- set unique_key = config.get('unique_key', none) -%}
  {%- if unique_key is none -%}{{ return([]) }}{%- endif -%}
  {%- set keys = [unique_key] if unique_key is string else unique_key -%}
  {%- if keys is not sequence or keys | length == 0 or keys | reject('string') | list | length > 0 -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": unique_key must be a column name or a list of column names, got " ~ unique_key) }}
  {%- endif -%}
  {{ return(keys | list) }}
{% endmacro %}


{#-- The stream_merge configs, validated; returns them normalised. --#}
{% macro validate_stream_merge_config() %}
  {%- do dbt_tablestream.validate_stream_config() -%}
  {%- set keys = dbt_tablestream.stream_unique_key() -%}
  {%- if not keys -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ " is a stream_merge model and needs unique_key: the column (or list of columns) that identifies a target row.") }}
  {%- endif -%}
  {%- set delete_mode = config.get('delete_mode', 'hard') -%}
  {%- set accepted_delete = ['hard', 'soft', 'ignore'] -%}
  {%- if delete_mode not in accepted_delete -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": invalid delete_mode '" ~ delete_mode ~ "'. Accepted values: " ~ accepted_delete | join(', ')) }}
  {%- endif -%}
  {%- set update_columns = config.get('merge_update_columns', none) -%}
  {%- set exclude_columns = config.get('merge_exclude_columns', none) -%}
  {%- if update_columns is not none and exclude_columns is not none -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": set merge_update_columns or merge_exclude_columns, not both.") }}
  {%- endif -%}
  {%- for option in [update_columns, exclude_columns] if option is not none and (option is string or option is not sequence) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": merge_update_columns and merge_exclude_columns take a list of column names, got " ~ option) }}
  {%- endfor -%}
  {%- if not config.get('net_changes', true) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": stream_merge always applies net changes (at most one change meets each target row); remove net_changes: false.") }}
  {%- endif -%}
  {%- set target_exclude = config.get('target_exclude_columns', []) -%}
  {%- if target_exclude is string or target_exclude is not sequence or target_exclude | reject('string') | list -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": target_exclude_columns takes a list of column names, got " ~ target_exclude) }}
  {%- endif -%}
  {%- set excluded_keys = keys | select('in', target_exclude) | list -%}
  {%- if excluded_keys -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": target_exclude_columns lists the unique_key column(s) " ~ excluded_keys | join(', ') ~ "; a target row is found by its key, so the key stays in the target.") }}
  {%- endif -%}
  {%- set key_ranges = config.get('merge_key_ranges', 32) -%}
  {%- if key_ranges is not number or key_ranges is boolean or key_ranges < 0 or key_ranges != key_ranges | int -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": merge_key_ranges must be a whole number >= 0 (the most key ranges of a window "
        ~ "the MERGE names for Delta's file skipping; 0 names none), got " ~ key_ranges) }}
  {%- endif -%}
  {%- set events = dbt_tablestream.validate_stream_events_config(keys, target_exclude, delete_mode) -%}
  {{ return({'keys': keys, 'delete_mode': delete_mode, 'update_columns': update_columns, 'exclude_columns': exclude_columns,
             'target_exclude_columns': target_exclude | list, 'events': events, 'merge_key_ranges': key_ranges | int,
             'history': dbt_tablestream.validate_stream_history_config(delete_mode, update_columns, exclude_columns, events)}) }}
{% endmacro %}


{#-- The configs of an SCD type 2 target (`scd_type: 2`; docs/architecture.md, "History"):
     `track_history_columns` or `track_history_except_columns`, and `hard_deletes`. Returns none
     for scd_type 1, otherwise {hard_deletes, track, track_except}. --#}
{% macro validate_stream_history_config(delete_mode, update_columns, exclude_columns, events) %}
  {%- set scd_type = config.get('scd_type', 1) -%}
  {%- set track = config.get('track_history_columns', none) -%}
  {%- set track_except = config.get('track_history_except_columns', none) -%}
  {%- set hard_deletes = config.get('hard_deletes', none) -%}
  {%- if scd_type | string not in ['1', '2'] -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": invalid scd_type '" ~ scd_type ~ "'. Accepted values: 1 (the default: the target holds each key's current row), 2 (the target keeps every version, with dbt_valid_from and dbt_valid_to).") }}
  {%- endif -%}
  {%- if scd_type | string == '1' -%}
    {%- set history_only = [] -%}
    {%- for name, value in [['track_history_columns', track], ['track_history_except_columns', track_except], ['hard_deletes', hard_deletes]] if value is not none -%}
      {%- do history_only.append(name) -%}
    {%- endfor -%}
    {%- if history_only -%}
      {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": " ~ history_only | join(', ') ~ " shape the history of an SCD type 2 target, so "
          ~ ("it needs" if history_only | length == 1 else "they need") ~ " scd_type: 2.") }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- if track is not none and track_except is not none -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": set track_history_columns or track_history_except_columns, not both.") }}
  {%- endif -%}
  {%- for name, option in [['track_history_columns', track], ['track_history_except_columns', track_except]]
        if option is not none and (option is string or option is not sequence or option | reject('string') | list or not option) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": " ~ name ~ " takes a non-empty list of column names, got " ~ option) }}
  {%- endfor -%}
  {%- set hard_deletes = hard_deletes or 'invalidate' -%}
  {%- set accepted_deletes = ['invalidate', 'new_record', 'ignore'] -%}
  {%- if hard_deletes not in accepted_deletes -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": invalid hard_deletes '" ~ hard_deletes ~ "'. Accepted values: invalidate (the default: a delete closes the current version), "
        ~ "new_record (also a row with dbt_is_deleted = true), ignore (deletes close nothing).") }}
  {%- endif -%}
  {%- if delete_mode != 'hard' -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": delete_mode '" ~ delete_mode ~ "' shapes an SCD type 1 target; with scd_type: 2 a delete closes the key's version. "
        ~ "Use hard_deletes (invalidate, new_record or ignore) instead.") }}
  {%- endif -%}
  {%- if update_columns is not none or exclude_columns is not none -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": merge_update_columns and merge_exclude_columns shape an SCD type 1 update; with scd_type: 2 "
        ~ "use track_history_columns or track_history_except_columns (the other columns are updated in place).") }}
  {%- endif -%}
  {%- if events and events['ignore_null'] -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": ignore_null_updates is not supported with scd_type: 2 (README, section 'History'); "
        ~ "coalesce the columns in the model instead.") }}
  {%- endif -%}
  {%- if events and events['sequence'] | length > 1 -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": with scd_type: 2, dbt_valid_from and dbt_valid_to take the sequence_by value, so sequence_by must be one column, got "
        ~ events['sequence'] | join(', ') ~ ". Combine them in the model into one comparable column.") }}
  {%- endif -%}
  {{ return({'hard_deletes': hard_deletes, 'track': track, 'track_except': track_except}) }}
{% endmacro %}


{#-- The columns whose change opens a new version of an SCD type 2 target: track_history_columns,
     or the data columns less track_history_except_columns, never the key or the sequence (a new
     sequence is a new event, not a new version). Refuses a listed column the output lacks. --#}
{% macro history_tracked_columns(stream, history, data_columns, keys, sequence) %}
  {%- set listed = history['track'] if history['track'] is not none else history['track_except'] or [] -%}
  {%- set config_name = 'track_history_columns' if history['track'] is not none else 'track_history_except_columns' -%}
  {%- for column in listed if column not in data_columns -%}
    {{ exceptions.raise_compiler_error(
        "Stream " ~ stream.stream ~ " on " ~ stream.source ~ ": " ~ config_name ~ " names " ~ column ~ ", which is not a column of the target of model "
        ~ model.name ~ " (" ~ data_columns | join(', ') ~ "). Fix the config or select the column. Nothing was written.") }}
  {%- endfor -%}
  {%- set reserved = data_columns | select('in', dbt_tablestream.history_columns({'hard_deletes': 'new_record'})) | list -%}
  {%- if reserved -%}
    {{ exceptions.raise_compiler_error(
        "Stream " ~ stream.stream ~ " on " ~ stream.source ~ ": the output of model " ~ model.name ~ " has " ~ reserved | join(', ')
        ~ ", which an SCD type 2 target adds itself. Rename or drop them in the model, or list them in target_exclude_columns. Nothing was written.") }}
  {%- endif -%}
  {%- set tracked = history['track'] if history['track'] is not none else data_columns | reject('in', listed) | list -%}
  {{ return(tracked | reject('in', keys + sequence) | list) }}
{% endmacro %}


{#-- The configs of a CDC event source (docs/architecture.md, "Event sources"): `sequence_by`,
     `apply_as_deletes`, `ignore_null_updates`, `tombstone_retention`. Returns none without
     `sequence_by`, otherwise {sequence, deletes, ignore_null, tombstone_retention}. --#}
{% macro validate_stream_events_config(keys, target_exclude, delete_mode='hard') %}
  {%- set sequence_by = config.get('sequence_by', none) -%}
  {%- set deletes = config.get('apply_as_deletes', none) -%}
  {%- set ignore_null = config.get('ignore_null_updates', false) -%}
  {%- set retention = config.get('tombstone_retention', none) -%}
  {%- if config.get('apply_as_truncates', none) is not none -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": apply_as_truncates is not supported (README, section 'CDC event sources'). "
        ~ "Apply a truncate as deletes of its keys with apply_as_deletes, or rebuild the target with --full-refresh.") }}
  {%- endif -%}
  {%- if sequence_by is none -%}
    {%- set needing = [] -%}
    {%- if deletes is not none -%}{%- do needing.append('apply_as_deletes') -%}{%- endif -%}
    {%- if ignore_null not in [false, none] -%}{%- do needing.append('ignore_null_updates') -%}{%- endif -%}
    {%- if retention is not none -%}{%- do needing.append('tombstone_retention') -%}{%- endif -%}
    {%- if needing -%}
      {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": " ~ needing | join(', ') ~ " order events by their sequence, so "
          ~ ("it needs" if needing | length == 1 else "they need") ~ " sequence_by: the column (or list of columns) whose greatest value per key wins.") }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set sequence = [sequence_by] if sequence_by is string else sequence_by -%}
  {%- if sequence is string or sequence is not sequence or sequence | length == 0 or sequence | reject('string') | list -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": sequence_by must be a column name or a list of column names (compared in order), got " ~ sequence_by) }}
  {%- endif -%}
  {%- set keyed = sequence | select('in', keys) | list -%}
  {%- if keyed -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": sequence_by lists the unique_key column(s) " ~ keyed | join(', ') ~ "; the sequence orders the events of one key, so it must be other columns.") }}
  {%- endif -%}
  {%- set stream_columns = sequence | select('in', ['__change_type', '__commit_version', '__commit_timestamp']) | list -%}
  {%- if stream_columns -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": sequence_by lists the stream column(s) " ~ stream_columns | join(', ')
        ~ ", which the target does not keep. Select it as a column of your own (such as __commit_version as commit_seq) and name that.") }}
  {%- endif -%}
  {%- set hidden = sequence | select('in', target_exclude) | list -%}
  {%- if hidden and config.get('scd_type', 1) | string != '2' -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": target_exclude_columns lists the sequence_by column(s) " ~ hidden | join(', ')
        ~ ". The target keeps each row's sequence, which is how a late event is recognised as older (README, section 'CDC event sources'); exclude the event's other columns, such as its operation.") }}
  {%- endif -%}
  {%- if deletes is not none and (deletes is not string or not deletes | trim) -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": apply_as_deletes must be a SQL boolean expression over the model's columns, such as op = 'd', got " ~ deletes) }}
  {%- endif -%}
  {%- if ignore_null is sequence and ignore_null is not string -%}
    {%- if not ignore_null or ignore_null | reject('string') | list -%}
      {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": ignore_null_updates takes true, false or a non-empty list of column names, got " ~ ignore_null) }}
    {%- endif -%}
    {%- set ignore_null = ignore_null | list -%}
  {%- elif ignore_null in [true, false, none] -%}
    {%- set ignore_null = ignore_null or false -%}
  {%- else -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": invalid ignore_null_updates " ~ ignore_null ~ ". Accepted values: true (every column), false (the default), a list of column names.") }}
  {%- endif -%}
  {%- set retention = retention or '7 days' -%}
  {%- set parsed = modules.re.fullmatch('\\s*(\\d+)\\s+(day|days|hour|hours|minute|minutes)\\s*', retention | string) -%}
  {%- if not parsed -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ ": invalid tombstone_retention '" ~ retention ~ "'. Accepted values: a whole number of days, hours or minutes, such as '7 days' (the default) or '36 hours'.") }}
  {%- endif -%}
  {{ return({'sequence': sequence | list, 'deletes': deletes, 'ignore_null': ignore_null, 'ignore_deletes': delete_mode == 'ignore',
             'tombstone_retention': parsed.group(1) ~ ' ' ~ parsed.group(2)}) }}
{% endmacro %}

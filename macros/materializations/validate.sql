{#-- A stream model's settings: one pure validation (_settings_from_configs) that checks each config
     by its kind (_stream_config_spec, settings_kinds.sql), then the rules that relate configs, and
     fills every default; and the one macro that reads them from the model (_stream_settings).
     Everything else reads the settings it returns. It runs before any SQL, and every error says
     what is accepted. --#}

{#-- The settings of one model: `raw` holds its configs (a missing or none value takes the
     default); `subject` opens each error ("Model orders"); `materialized` is the model's
     materialization (a stream materialization, snapshot_mirror or directory_table), pyspark
     (open_stream's arguments) or none (a model reading changes()). Pure: it reads nothing but its
     arguments, so the PySpark API renders it too. Each setting the materialization takes
     (_setting_applies) is checked by its kind (settings_kinds.sql), one it needs (`needed_by`)
     refused when unset, then the rules that relate settings run. Returns every config it takes
     with its default filled and its value normalised (`unique_key` and the column lists as lists,
     `max_rows_per_file` none for 0), for stream_merge `events`, `history` and `strategy` (net,
     events or history: the MERGE the materialization runs), for snapshot_mirror `key_columns`.
     `protocol`: the run's commit protocol (_stream_commit_protocol), whose settings_check refuses
     what it cannot keep exactly once; none where nothing is written by a protocol. --#}
{% macro _settings_from_configs(raw, subject, materialized, protocol=none) %}
  {%- set checked = {'materialized': materialized, 'configured': []} -%}
  {%- for name, listed in dbt_tablestream._stream_config_spec().items()
        if dbt_tablestream._setting_applies(listed, materialized) -%}
    {%- set entry = listed.pyspark if materialized == 'pyspark' and 'pyspark' in listed else listed -%}
    {%- set needed = listed.get('needed_by', {}).get(materialized) -%}
    {%- set value = raw.get(name) -%}
    {%- if value is none and needed -%}
      {{ exceptions.raise_compiler_error(subject ~ " is a " ~ materialized ~ " model and needs " ~ name ~ ", " ~ needed
          ~ ". It takes " ~ dbt_tablestream._stream_config_accepted(entry) ~ ". Nothing was written.") }}
    {%- endif -%}
    {%- if value is not none -%}{%- do checked.configured.append(name) -%}{%- endif -%}
    {%- do checked.update({name: dbt_tablestream._config_checked(name, value if value is not none else entry.default,
                                                                 dict(entry, needed=needed is not none), subject)}) -%}
  {%- endfor -%}
  {%- if materialized == 'snapshot_mirror' -%}{{ return(dict(checked, key_columns=checked.unique_key)) }}{%- endif -%}
  {%- if materialized == 'directory_table' -%}{{ return(checked) }}{%- endif -%}
  {#-- The key also pairs a Delta log read's deletes and inserts into updates, changes() included. --#}
  {%- set settings = dict(checked, unique_key=checked.unique_key or []) -%}
  {%- if protocol is not none -%}
    {%- do dbt_tablestream._protocol_step('settings_check', protocol)(settings, subject, protocol) -%}
  {%- endif -%}
  {%- if settings.on_feed_off != 'fail' and settings.stream_read != 'table_changes' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": on_feed_off says how a change feed read treats commits the feed "
        ~ "did not record, so it needs stream_read: table_changes (stream_read is '" ~ settings.stream_read
        ~ "'). Remove on_feed_off.") }}
  {%- endif -%}
  {%- if materialized == 'stream_aggregate' -%}
    {{ return(dict(settings, **dbt_tablestream._stream_aggregate_settings_of(settings, subject))) }}
  {%- endif -%}
  {%- if materialized == 'stream_view' -%}
    {{ return(dict(settings, **dbt_tablestream._stream_view_settings_of(settings, subject))) }}
  {%- endif -%}
  {%- if materialized not in ['table_stream', 'stream_merge'] -%}{{ return(settings) }}{%- endif -%}
  {%- if settings.spark_net_changes and settings.stream_read != 'changelog' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": spark_net_changes asks Spark's CHANGES clause to net the changes, "
        ~ "so it needs stream_read: changelog (stream_read is '" ~ settings.stream_read ~ "').") }}
  {%- endif -%}
  {%- if settings.spark_net_changes and materialized == 'table_stream'
      and (not settings.unique_key or not settings.net_changes) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": spark_net_changes nets changes, and a table_stream without "
        ~ "unique_key (or with net_changes: false) logs every change. Set unique_key, or remove spark_net_changes.") }}
  {%- endif -%}
  {%- if materialized == 'stream_merge' -%}
    {{ return(dict(settings, **dbt_tablestream._stream_merge_settings_of(settings, subject))) }}
  {%- endif -%}
  {{ return(settings) }}
{% endmacro %}


{#-- The stream_merge part of _settings_from_configs: the key, the update columns, and the event
     (_validate_stream_events_config) and history (_validate_stream_history_config) configs, from
     which the strategy is chosen once. --#}
{% macro _stream_merge_settings_of(settings, subject) %}
  {%- set keys = settings.unique_key -%}
  {%- if settings.merge_update_columns is not none and settings.merge_exclude_columns is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": set merge_update_columns or merge_exclude_columns, not both.") }}
  {%- endif -%}
  {%- if not settings.net_changes -%}
    {{ exceptions.raise_compiler_error(subject ~ ": stream_merge always applies net changes (at most one change meets "
        ~ "each target row); remove net_changes: false.") }}
  {%- endif -%}
  {%- set excluded_keys = keys | select('in', settings.target_exclude_columns) | list -%}
  {%- if excluded_keys -%}
    {{ exceptions.raise_compiler_error(subject ~ ": target_exclude_columns lists the unique_key column(s) "
        ~ excluded_keys | join(', ') ~ "; a target row is found by its key, so the key stays in the target.") }}
  {%- endif -%}
  {%- set events = dbt_tablestream._validate_stream_events_config(settings, subject) -%}
  {%- set history = dbt_tablestream._validate_stream_history_config(settings, subject, events) -%}
  {%- set strategy = 'history' if history is not none else 'events' if events is not none else 'net' -%}
  {%- set refusal = dbt_tablestream._replace_where_refusal(settings, strategy) -%}
  {%- if settings.merge_write in ['replace_where', 'rewrite'] and refusal is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": merge_write: " ~ settings.merge_write ~ " " ~ refusal
        ~ ". Use merge_write: auto (replace_where or rewrite for the windows that qualify) or merge.") }}
  {%- endif -%}
  {{ return({'max_rows_per_file': settings.max_rows_per_file or none, 'events': events, 'history': history,
             'sequence': events.sequence if events else [], 'strategy': strategy,
             'replace_where_keys': 0 if refusal is not none or settings.merge_write == 'merge'
                                   else settings.replace_where_max_keys}) }}
{% endmacro %}


{#-- The stream_aggregate part of _settings_from_configs (docs/stream-aggregate.md): `group_by` and
     `aggregates` are required (their spec entries' `needed_by`), and what would break the
     contract (the target equals the model's GROUP BY over the whole source as of each window's
     end) is refused: a start other than a snapshot of the source (the target would aggregate only
     later changes), on_stale: skip_to_latest (it would miss changes for good), stream_mode:
     append_only (it would miss updates and deletes), and unique_key (the target's key is
     group_by). Returns {group_by, aggregates}: the aggregates as _checked_aggregates parses them. --#}
{% macro _stream_aggregate_settings_of(settings, subject) %}
  {%- set accepted = "; the target equals the model's GROUP BY over the whole source as of each window's end "
      ~ "(docs/stream-aggregate.md). Nothing was written." -%}
  {%- if 'unique_key' in settings.configured -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a stream_aggregate's target is keyed by group_by ("
        ~ settings.group_by | join(', ') ~ "); remove unique_key" ~ accepted) }}
  {%- endif -%}
  {%- do dbt_tablestream._refuse_partial_sources(settings, subject, 'aggregate', accepted) -%}
  {%- if settings.spark_net_changes -%}
    {{ exceptions.raise_compiler_error(subject ~ ": spark_net_changes nets changes per key; a stream_aggregate reads "
        ~ "every change row. Remove spark_net_changes" ~ accepted) }}
  {%- endif -%}
  {%- set groups = settings.group_by | map('lower') | list -%}
  {%- set names = [] -%}
  {%- for aggregate in settings.aggregates -%}
    {%- if aggregate.name | lower in groups or aggregate.name | lower in names -%}
      {{ exceptions.raise_compiler_error(subject ~ ": aggregates names the output column " ~ aggregate.name
          ~ " twice, or as a group_by column too; give each output column one name. Nothing was written.") }}
    {%- endif -%}
    {%- do names.append(aggregate.name | lower) -%}
  {%- endfor -%}
  {{ return({'group_by': settings.group_by, 'aggregates': settings.aggregates,
             'max_rows_per_file': settings.max_rows_per_file or none}) }}
{% endmacro %}


{#-- What would leave a target that equals a select over its sources' whole state
     (stream_aggregate, stream_view) with only part of it: a start other than a snapshot (the target
     would `verb` only later changes), on_stale: skip_to_latest (it would miss changes for good)
     and stream_mode: append_only (it would miss updates and deletes). --#}
{% macro _refuse_partial_sources(settings, subject, verb, accepted) %}
  {%- if settings.start_at != 'snapshot' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": start_at " ~ settings.start_at ~ " would " ~ verb ~ " only the "
        ~ "changes after it; a " ~ settings.materialized ~ " starts from a snapshot of its sources. Remove start_at"
        ~ accepted) }}
  {%- endif -%}
  {%- if settings.on_stale == 'skip_to_latest' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": on_stale: skip_to_latest would leave the skipped changes out of "
        ~ "the target for good. Use on_stale: resnapshot (rebuild from the sources) or fail" ~ accepted) }}
  {%- endif -%}
  {%- if settings.stream_mode == 'append_only' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": stream_mode: append_only would keep rows that were since updated "
        ~ "or deleted. Remove stream_mode" ~ accepted) }}
  {%- endif -%}
{% endmacro %}


{#-- The stream_view part of _settings_from_configs (docs/stream-view.md): what would break the
     contract (the target equals the model's select over its inputs as of the versions each run
     pinned) is refused, as for a stream_aggregate; the rest are the settings of stream_merge's
     net write (_stream_merge_plan), which applies the view's changed rows, with every column of a
     changed row written and a row the view no longer has deleted. --#}
{% macro _stream_view_settings_of(settings, subject) %}
  {%- set accepted = "; the target equals the model's select over its inputs as of the versions each run pinned "
      ~ "(docs/stream-view.md). Nothing was written." -%}
  {%- do dbt_tablestream._refuse_partial_sources(settings, subject, 'keep', accepted) -%}
  {%- set fixed = {'events': none, 'history': none, 'sequence': [], 'strategy': 'net'} -%}
  {%- set refusal = dbt_tablestream._replace_where_refusal(
        dict(settings, **dbt_tablestream._stream_view_write_settings()), 'net') -%}
  {%- if settings.merge_write in ['replace_where', 'rewrite'] and refusal is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": merge_write: " ~ settings.merge_write ~ " " ~ refusal
        ~ ". Use merge_write: auto (replace_where or rewrite for the windows that qualify) or merge.") }}
  {%- endif -%}
  {{ return(dict(fixed, max_rows_per_file=settings.max_rows_per_file or none,
                 replace_where_keys=0 if refusal is not none or settings.merge_write == 'merge'
                                    else settings.replace_where_max_keys)) }}
{% endmacro %}


{#-- What stream_merge's net write reads of a stream_view's settings, which are no configs of a
     view: every column of a changed row written, and a row the view no longer has deleted. --#}
{% macro _stream_view_write_settings() %}
  {{ return({'delete_mode': 'hard', 'merge_update_columns': none, 'merge_exclude_columns': none,
             'target_exclude_columns': []}) }}
{% endmacro %}


{#-- Why no window of the model can be written with replaceWhere (stream_replace_where_sql), or
     none: it replaces every row of each key the window names with the key's net change, so it
     needs net changes of one key column whose deletes delete, with every column updated, and it
     lists the keys with their ranges. --#}
{% macro _replace_where_refusal(settings, strategy) %}
  {%- if strategy != 'net' -%}
    {{ return("writes net changes, so it takes neither sequence_by nor scd_type: 2") }}
  {%- elif settings.unique_key | length != 1 -%}
    {{ return("lists the window's keys, so it needs a unique_key of one column (unique_key is "
        ~ settings.unique_key | join(', ') ~ ")") }}
  {%- elif settings.delete_mode != 'hard' -%}
    {{ return("deletes every row of a key it replaces, so it needs delete_mode: hard (delete_mode is "
        ~ settings.delete_mode ~ ")") }}
  {%- elif settings.merge_update_columns is not none or settings.merge_exclude_columns is not none -%}
    {{ return("writes every column of a changed row, so it takes neither merge_update_columns nor "
        ~ "merge_exclude_columns") }}
  {%- elif settings.merge_key_ranges == 0 or settings.replace_where_max_keys == 0 -%}
    {{ return("names the window's keys and key ranges, so it needs merge_key_ranges and "
        ~ "replace_where_max_keys above 0") }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}


{#-- The settings of the stream model being compiled or run, validated by _settings_from_configs,
     after the checks that need the connection (the engine, and dbt-spark's shared session), with
     the run's commit protocol (`protocol`: _stream_commit_protocol's {name, reason}) and what the
     model's dbt tblproperties give its target (`target_layout`: {vectors, feed}, which a window's
     write is chosen by). --#}
{% macro _stream_settings() %}
  {%- set model_name = model.name if model is defined else this.identifier -%}
  {%- do dbt_tablestream.stream_engine_check('the stream model ' ~ model_name) -%}
  {%- do dbt_tablestream._validate_stream_session(model_name) -%}
  {%- set protocol = dbt_tablestream._stream_commit_protocol() -%}
  {%- set settings = dbt_tablestream._settings_from_configs(dbt_tablestream._raw_stream_configs('Model ' ~ model_name),
                                                         'Model ' ~ model_name, config.get('materialized', none),
                                                         protocol) -%}
  {%- set properties = config.get('tblproperties') or {} -%}
  {%- set target_layout = {'vectors': (properties.get('delta.enableDeletionVectors') | string | lower) == 'true',
                           'feed': (properties.get('delta.enableChangeDataFeed') | string | lower) == 'true'} -%}
  {{ return(dict(settings, protocol=protocol, target_layout=target_layout)) }}
{% endmacro %}


{#-- The current model's stream configs as it sets them (none when unset), each read by
     _model_config_value (under meta, at the top level, and for stream_read the project var
     tablestream_stream_read when the model sets none). --#}
{% macro _raw_stream_configs(subject) %}
  {%- set raw = {} -%}
  {%- for name, entry in dbt_tablestream._stream_config_spec().items() -%}
    {%- do raw.update({name: dbt_tablestream._model_config_value(name, subject, project_var=entry.project_var)}) -%}
  {%- endfor -%}
  {{ return(raw) }}
{% endmacro %}


{#-- A stream's commit is marked with Delta's session-wide settings (write.txnAppId, txnVersion,
     commitInfo.userMetadata). dbt-spark's session method gives every dbt thread the same
     SparkSession, so with more than one thread one model's marker could land on another's write. --#}
{% macro _validate_stream_session(model_name) %}
  {%- set method = adapter.config.credentials.method | string if adapter.type() == 'spark' else none -%}
  {%- if method in ['session', 'SparkConnectionMethod.SESSION'] and (target.threads | int) > 1 -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model_name ~ " is a stream model, and dbt-spark's session method shares one "
        ~ "SparkSession between its " ~ target.threads ~ " threads, so Delta's session-wide write settings that mark "
        ~ "each stream commit would be shared too. Nothing was written. Either use `type: tablestream` (a local "
        ~ "session per dbt thread) or set `threads: 1` in this profile.") }}
  {%- endif -%}
{% endmacro %}


{#-- The configs of an SCD type 2 target (`scd_type: 2`; docs/architecture.md, "History"):
     `track_history_columns` or `track_history_except_columns`, and `hard_deletes`. Returns none
     for scd_type 1, otherwise {hard_deletes, track, track_except}. --#}
{% macro _validate_stream_history_config(settings, subject, events) %}
  {%- set track = settings.track_history_columns -%}
  {%- set track_except = settings.track_history_except_columns -%}
  {%- if settings.scd_type == 1 -%}
    {%- set history_only = ['track_history_columns', 'track_history_except_columns', 'hard_deletes']
                           | select('in', settings.configured) | list -%}
    {%- if history_only -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ history_only | join(', ') ~ " shape the history of an SCD "
          ~ "type 2 target, so " ~ ("it needs" if history_only | length == 1 else "they need") ~ " scd_type: 2.") }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- if track is not none and track_except is not none -%}
    {{ exceptions.raise_compiler_error(subject
        ~ ": set track_history_columns or track_history_except_columns, not both.") }}
  {%- endif -%}
  {%- if settings.delete_mode != 'hard' -%}
    {{ exceptions.raise_compiler_error(subject ~ ": delete_mode '" ~ settings.delete_mode ~ "' shapes an SCD type 1 "
        ~ "target; with scd_type: 2 a delete closes the key's version. Use hard_deletes ("
        ~ dbt_tablestream._stream_config_accepted(dbt_tablestream._stream_config_spec().hard_deletes) ~ ") instead.") }}
  {%- endif -%}
  {%- if settings.merge_update_columns is not none or settings.merge_exclude_columns is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": merge_update_columns and merge_exclude_columns shape an SCD type 1 "
        ~ "update; with scd_type: 2 use track_history_columns or track_history_except_columns (the other columns are "
        ~ "updated in place).") }}
  {%- endif -%}
  {%- if events and events['ignore_null'] -%}
    {{ exceptions.raise_compiler_error(subject ~ ": ignore_null_updates is not supported with scd_type: 2 "
        ~ "(docs/history.md); coalesce the columns in the model instead.") }}
  {%- endif -%}
  {%- if events and events['sequence'] | length > 1 -%}
    {{ exceptions.raise_compiler_error(subject ~ ": with scd_type: 2, dbt_valid_from and dbt_valid_to take the "
        ~ "sequence_by value, so sequence_by must be one column, got " ~ events['sequence'] | join(', ')
        ~ ". Combine them in the model into one comparable column.") }}
  {%- endif -%}
  {{ return({'hard_deletes': settings.hard_deletes, 'track': track, 'track_except': track_except}) }}
{% endmacro %}


{#-- The columns whose change opens a new version of an SCD type 2 target: track_history_columns,
     or the data columns less track_history_except_columns, never the key or the sequence (a new
     sequence is a new event, not a new version). Refuses a listed column the output lacks. --#}
{% macro _history_tracked_columns(stream, history, data_columns, keys, sequence) %}
  {%- set listed = history['track'] if history['track'] is not none else history['track_except'] or [] -%}
  {%- set config_name = 'track_history_columns' if history['track'] is not none else 'track_history_except_columns' -%}
  {%- for column in listed if column not in data_columns -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": " ~ config_name ~ " names "
        ~ column ~ ", which is not a column of the target of model " ~ model.name ~ " (" ~ data_columns | join(', ')
        ~ "). Fix the config or select the column. Nothing was written.") }}
  {%- endfor -%}
  {%- set reserved = data_columns | select('in', dbt_tablestream._history_columns({'hard_deletes': 'new_record'}))
                     | list -%}
  {%- if reserved -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": the output of model " ~ model.name
        ~ " has " ~ reserved | join(', ') ~ ", which an SCD type 2 target adds itself. Rename or drop them in the "
        ~ "model, or list them in target_exclude_columns. Nothing was written.") }}
  {%- endif -%}
  {%- set tracked = history['track'] if history['track'] is not none else data_columns | reject('in', listed) | list -%}
  {{ return(tracked | reject('in', keys + sequence) | list) }}
{% endmacro %}


{#-- The configs of a CDC event source (docs/architecture.md, "Event sources"): `sequence_by`,
     `apply_as_deletes`, `ignore_null_updates`, `tombstone_retention`. Returns none without
     `sequence_by`, otherwise {sequence, deletes, ignore_null, tombstone_retention}. --#}
{% macro _validate_stream_events_config(settings, subject) %}
  {%- set keys = settings.unique_key -%}
  {%- set sequence_by = settings.sequence_by -%}
  {%- set deletes = settings.apply_as_deletes -%}
  {%- set ignore_null = settings.ignore_null_updates -%}
  {%- if sequence_by is none -%}
    {%- set needing = [] -%}
    {%- for name in ['apply_as_deletes', 'ignore_null_updates', 'tombstone_retention']
        if name in settings.configured and settings[name] != false -%}
      {%- do needing.append(name) -%}
    {%- endfor -%}
    {%- if needing -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ needing | join(', ') ~ " order events by their sequence, so "
          ~ ("it needs" if needing | length == 1 else "they need") ~ " sequence_by: the column (or list of columns) "
          ~ "whose greatest value per key wins.") }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set sequence = sequence_by -%}
  {%- set keyed = sequence | select('in', keys) | list -%}
  {%- if keyed -%}
    {{ exceptions.raise_compiler_error(subject ~ ": sequence_by lists the unique_key column(s) " ~ keyed | join(', ')
        ~ "; the sequence orders the events of one key, so it must be other columns.") }}
  {%- endif -%}
  {%- set stream_columns = sequence | select('in', ['__change_type', '__commit_version', '__commit_timestamp'])
                           | list -%}
  {%- if stream_columns -%}
    {{ exceptions.raise_compiler_error(subject ~ ": sequence_by lists the stream column(s) "
        ~ stream_columns | join(', ') ~ ", which the target does not keep. Select it as a column of your own (such as "
        ~ "__commit_version as commit_seq) and name that.") }}
  {%- endif -%}
  {%- set hidden = sequence | select('in', settings.target_exclude_columns) | list -%}
  {%- if hidden and settings.scd_type != 2 -%}
    {{ exceptions.raise_compiler_error(subject ~ ": target_exclude_columns lists the sequence_by column(s) "
        ~ hidden | join(', ') ~ ". The target keeps each row's sequence, which is how a late event is recognised as "
        ~ "older (docs/cdc-events.md); exclude the event's other columns, such as its operation.") }}
  {%- endif -%}
  {{ return({'sequence': sequence, 'deletes': deletes, 'ignore_null': ignore_null,
             'ignore_deletes': settings.delete_mode == 'ignore',
             'tombstone_retention': settings.tombstone_retention}) }}
{% endmacro %}

{% macro stream_merge_strategy_sql(strategy, args) %}
  {{ return(adapter.dispatch('stream_merge_strategy_sql', 'dbt_tablestream')(strategy, args)) }}
{% endmacro %}


{#-- stream_merge's strategies (docs/architecture.md, "stream_merge's strategies"): the SQL of a run
     for each way a target is kept, chosen once from the settings (_settings_from_configs's
     `strategy`), as dbt-spark's incremental strategies are. Each returns the run's plan and sends
     no statement of its own (relation_exists and relation_columns, below, are the caller's):
     - `statements`: statements to run before the target's commit ({name, sql}; the tombstones of
       CDC events);
     - `write_sql`: the rows of a rebuild (written by stream_write_sql), or the MERGE of a later run;
     - `upserts_sql`: on a later run, the rows the MERGE writes, whose columns on_schema_change
       compares with the target's; none on a rebuild;
     - `write` and `write_options` (net, later runs): the write _stream_net_write_choice chose ('merge',
       'merge_copying', 'replace_where' or 'rewrite') and the session settings of its commit.
     `args`: compiled_code, keys, columns (the output's), data_columns (the target's), settings,
     stream, target, existing (the target relation on a later run, none on a rebuild), rebuild,
     key_ranges, window_keys ({count, listed, type, files}: inspect_stream_window's distinct_keys,
     listed_keys and key_files, and the key's type), write_choice (the net strategy's later runs:
     _stream_net_write_choice's), relation_exists (a macro telling whether a relation exists) and
     relation_columns (one giving a relation's column names). --#}
{% macro spark__stream_merge_strategy_sql(strategy, args) %}
  {%- if strategy == 'net' -%}
    {{ return(dbt_tablestream.stream_merge_net_sql(args)) }}
  {%- elif strategy == 'events' -%}
    {{ return(dbt_tablestream.stream_merge_events_sql(args)) }}
  {%- elif strategy == 'history' -%}
    {{ return(dbt_tablestream.stream_merge_history_sql(args)) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error("No known SQL for the stream_merge strategy '" ~ strategy
      ~ "'. Accepted values: net, events, history.") }}
{% endmacro %}


{% macro stream_merge_net_sql(args) %}
  {{ return(adapter.dispatch('stream_merge_net_sql', 'dbt_tablestream')(args)) }}
{% endmacro %}


{#-- Net changes per key (the default): one change per key and window, upserted or deleted, by the
     write _stream_net_write_choice gives it: a MERGE, the window's keys replaced, or the target
     rewritten from itself. --#}
{% macro spark__stream_merge_net_sql(args) %}
  {%- set reapplies = dbt_tablestream._protocol_step('reapplies_windows', args.settings.protocol)() -%}
  {%- set changes = dbt_tablestream.net_changes_sql(args.compiled_code, args['keys'], args.columns,
                                                    touched_deletes=not args.rebuild and reapplies) -%}
  {%- set soft = args.settings.delete_mode == 'soft' -%}
  {%- if args.rebuild -%}
    {{ return({'statements': [], 'upserts_sql': none,
               'write_sql': dbt_tablestream.stream_merge_build_sql(changes, args.data_columns, soft, args['keys'])}) }}
  {%- endif -%}
  {%- set upserts_sql = dbt_tablestream.stream_merge_upserts_sql(changes, args.data_columns) -%}
  {%- set choice = args.write_choice -%}
  {%- if choice.write in ['replace_where', 'rewrite'] -%}
    {%- set target_columns = args.relation_columns(args.existing) -%}
    {#-- Both insert every target column: a target with other columns than the window's (before
         on_schema_change syncs them) keeps its MERGE. --#}
    {%- if target_columns | map('lower') | sort | list == args.data_columns | map('lower') | sort | list -%}
      {%- if choice.write == 'rewrite' -%}
        {%- set write_sql = dbt_tablestream.stream_rewrite_sql(args.target, changes, args['keys'], target_columns,
                                                               args.window_keys.count) -%}
      {%- else -%}
        {%- set key_list = dbt_tablestream._key_list_sql(args.window_keys.listed, args.window_keys.type) -%}
        {%- set write_sql = dbt_tablestream.stream_replace_where_sql(args.target, changes, args['keys'][0], key_list,
                                                                     args.key_ranges, target_columns) -%}
      {%- endif -%}
      {{ return({'statements': [], 'upserts_sql': upserts_sql, 'write': choice.write,
                 'write_options': choice.write_options, 'write_sql': write_sql}) }}
    {%- endif -%}
    {%- set choice = {'write': 'merge', 'write_options': dict(choice.write_options, replaces=false, aligned=false)} -%}
  {%- endif -%}
  {%- set source_sql = dbt_tablestream.stream_merge_source_sql(changes, args.data_columns,
                                                                '__commit_timestamp' in args.columns) -%}
  {%- set update_columns = dbt_tablestream._stream_merge_update_columns(args.settings, args.data_columns) -%}
  {%- set merge_sql = dbt_tablestream.stream_merge_sql(args.target, source_sql, args['keys'], args.settings.delete_mode,
      update_columns, args.data_columns, args.stream, args.key_ranges) -%}
  {{ return({'statements': [], 'upserts_sql': upserts_sql, 'write': choice.write, 'write_options': choice.write_options,
             'write_sql': merge_sql}) }}
{% endmacro %}


{% macro stream_merge_events_sql(args) %}
  {{ return(adapter.dispatch('stream_merge_events_sql', 'dbt_tablestream')(args)) }}
{% endmacro %}


{#-- CDC events (`sequence_by`): per key the newest event by sequence, against what the target
     already holds; under delete_mode hard the deletes are remembered in a tombstones table beside
     the target (docs/architecture.md, "Event sources"). --#}
{% macro spark__stream_merge_events_sql(args) %}
  {%- set settings = args.settings -%}
  {%- set events = settings.events -%}
  {%- set tombstones = dbt_tablestream._stream_tombstones_relation(args.target) if settings.delete_mode == 'hard'
                      else none -%}
  {%- set tombstones_exist = tombstones is not none and not args.rebuild and args.relation_exists(tombstones) -%}
  {%- set applied = [] if args.rebuild else [args.existing] + ([tombstones] if tombstones_exist else []) -%}
  {%- set changes = dbt_tablestream.sequenced_changes_sql(args.compiled_code, args['keys'], args.columns, events,
                                                          applied) -%}
  {%- set statements = [] -%}
  {%- if tombstones is not none -%}
    {%- do statements.append({'name': 'stream_tombstones',
        'sql': dbt_tablestream.stream_tombstones_sql(tombstones, changes, args['keys'], events.sequence,
                                                     events.tombstone_retention, not tombstones_exist)}) -%}
  {%- endif -%}
  {%- if args.rebuild -%}
    {#-- A soft-deleted row is the key's tombstone, so a delete builds one too. --#}
    {%- set soft = settings.delete_mode == 'soft' -%}
    {{ return({'statements': statements, 'upserts_sql': none,
               'write_sql': dbt_tablestream.stream_merge_build_sql(changes, args.data_columns, soft, args['keys'],
                                                                   args.columns)}) }}
  {%- endif -%}
  {%- set update_columns = dbt_tablestream._stream_merge_update_columns(settings, args.data_columns) -%}
  {%- set merge_sql = dbt_tablestream.stream_events_merge_sql(args.target, changes, args['keys'], settings.delete_mode,
      update_columns, args.data_columns, events, tombstones, args.columns, args.key_ranges) -%}
  {{ return({'statements': statements,
             'upserts_sql': dbt_tablestream.stream_merge_upserts_sql(changes, args.data_columns),
             'write_sql': merge_sql}) }}
{% endmacro %}


{% macro stream_merge_history_sql(args) %}
  {{ return(adapter.dispatch('stream_merge_history_sql', 'dbt_tablestream')(args)) }}
{% endmacro %}


{#-- History (`scd_type: 2`): every version of each key, with dbt snapshot's columns
     (docs/architecture.md, "History"). --#}
{% macro spark__stream_merge_history_sql(args) %}
  {%- set settings = args.settings -%}
  {%- set history = dict(settings.history) -%}
  {%- set tracked = dbt_tablestream._history_tracked_columns(args.stream, history, args.data_columns, args['keys'],
                                                            settings.sequence) -%}
  {%- do history.update({'tracked': tracked}) -%}
  {%- set reapplies = dbt_tablestream._protocol_step('reapplies_windows', settings.protocol)() -%}
  {%- set versions = dbt_tablestream.history_versions_sql(args.compiled_code, args['keys'], args.columns,
      args.data_columns, history, settings.events, none if args.rebuild else args.existing, drop_applied=reapplies) -%}
  {%- if args.rebuild -%}
    {{ return({'statements': [], 'upserts_sql': none,
               'write_sql': dbt_tablestream.stream_history_build_sql(versions, args['keys'])}) }}
  {%- endif -%}
  {{ return({'statements': [], 'upserts_sql': versions,
             'write_sql': dbt_tablestream.stream_history_merge_sql(args.target, versions, args.data_columns, history,
                                                                    args['keys'], args.key_ranges)}) }}
{% endmacro %}


{#-- The columns an update sets: merge_update_columns, or the target's less merge_exclude_columns. --#}
{% macro _stream_merge_update_columns(settings, data_columns) %}
  {%- if settings.merge_update_columns is not none -%}{{ return(settings.merge_update_columns) }}{%- endif -%}
  {{ return(data_columns | reject('in', settings.merge_exclude_columns or []) | list) }}
{% endmacro %}

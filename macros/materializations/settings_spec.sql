{#-- Every config a stream model reads, by name, and what it accepts: the one place a default or an
     accepted value is stated. Each entry has a `kind` (settings_kinds.sql holds one check per
     kind), its `default`, and the kind's parameters:
     - choice: `accepted`, each value with what it means or none; `renamed`, old values refused
       with their new names; `project_var`, the var that sets it for every model that sets none;
     - start_position: `accepted` as a choice, where `{kind: ...}` entries are the mappings taken;
     - whole_number: `minimum`, and `unit`, what is counted;
     - columns: `single`, a lone name taken as a list of one; `may_be_empty`; `or_all`, true
       (every column) and false taken too;
     - boolean, name, sql_condition, duration: none;
     - aggregates: `accepted`, the aggregate functions a stream_aggregate keeps (col: a column);
     - unsupported: `remedy`, what to do instead.
     - path: none; globs: none (a lone pattern is taken as a list of one).
     Besides: `materialized`, the materializations it applies to (_setting_applies: every stream
     materialization when absent); `needed_by`, the materializations that refuse a model without
     it, each with what the config is to it; `pyspark`, the entry the PySpark API (open_stream)
     takes instead; `change_query`, true for the configs a model's changes() reads as a stream
     would. What each config does, and its counterpart in Snowflake, Databricks, dbt or Spark, is
     docs/configuration.md's. --#}
{% macro _stream_config_spec() %}
  {%- set streams = dbt_tablestream._stream_materializations() -%}
  {%- set merge_only = ['stream_merge'] -%}
  {%- set aggregate_only = ['stream_aggregate'] -%}
  {#-- The layouts and file skipping of targets a MERGE keeps by key (a stream_aggregate's: group_by). --#}
  {%- set keyed_targets = ['stream_merge', 'stream_aggregate', 'stream_view'] -%}
  {#-- The targets written by a window's net changes: a MERGE, a replace of its keys or a rewrite. --#}
  {%- set net_writes = ['stream_merge', 'stream_view'] -%}
  {#-- A stream_aggregate's columns are its group_by and aggregates, and it reads every change row. --#}
  {%- set row_models = ['table_stream', 'stream_merge'] -%}
  {{ return({
      'stream_name': {'kind': 'name', 'default': none},
      'stream_mode': {'kind': 'choice', 'default': 'standard', 'accepted': {'standard': none, 'append_only': none}},
      'start_at': {'kind': 'start_position', 'default': 'snapshot',
          'accepted': {'snapshot': none, 'latest': none, 'earliest': none, '{version: N}': none,
                       "{timestamp: 'ISO-8601'}": none, '{stream: <stream name>}': none},
          'pyspark': {'kind': 'start_position', 'default': 'latest',
                      'accepted': {'latest': none, 'earliest': none, '{version: N}': none}}},
      'stream_read': {'kind': 'choice', 'change_query': true, 'default': 'table_changes',
          'project_var': 'tablestream_stream_read',
          'accepted': {'table_changes': "Delta's change data feed",
                       'changelog': "Delta's row-tracking changelog, through Spark 4.2's CHANGES clause",
                       'delta_log': "the files each commit added and removed, as the Delta log lists them; "
                                    ~ "no change feed needed"},
          'renamed': {'changes': 'changelog'}},
      'on_feed_off': {'kind': 'choice', 'change_query': true, 'default': 'fail',
          'accepted': {'fail': none, 'delta_log': none}},
      'spark_net_changes': {'kind': 'boolean', 'default': false},
      'max_versions_per_run': {'kind': 'whole_number', 'minimum': 1, 'unit': 'source versions', 'default': none},
      'on_stale': {'kind': 'choice', 'default': 'fail',
          'accepted': {'fail': none, 'resnapshot': none, 'skip_to_latest': none}},
      'drop_carryovers': {'kind': 'boolean', 'default': true},
      'file_format': {'kind': 'choice', 'default': none, 'materialized': streams + ['directory_table'],
          'accepted': {'delta': 'every table the package writes is a Delta table'}},
      'on_schema_change': {'kind': 'choice', 'default': 'ignore', 'materialized': row_models,
          'accepted': {'ignore': none, 'fail': none, 'append_new_columns': none, 'sync_all_columns': none}},
      'unique_key': {'kind': 'columns', 'single': true, 'change_query': true, 'default': none,
          'materialized': streams + ['snapshot_mirror'],
          'needed_by': {'stream_merge': 'the column or columns that identify a target row',
                        'stream_view': "the column or columns that identify a row of the view's select",
                        'snapshot_mirror': "the column or columns that identify a row of the snapshot, for example "
                                           ~ "config(materialized='snapshot_mirror', unique_key='order_id')"}},
      'net_changes': {'kind': 'boolean', 'default': true, 'materialized': row_models},
      'max_rows_per_file': {'kind': 'whole_number', 'minimum': 0, 'unit': 'rows', 'default': 250000,
          'materialized': keyed_targets},
      'delete_mode': {'kind': 'choice', 'default': 'hard', 'accepted': {'hard': none, 'soft': none, 'ignore': none},
          'materialized': ['stream_merge', 'snapshot_mirror']},
      'merge_update_columns': {'kind': 'columns', 'may_be_empty': true, 'default': none, 'materialized': merge_only},
      'merge_exclude_columns': {'kind': 'columns', 'may_be_empty': true, 'default': none, 'materialized': merge_only},
      'target_exclude_columns': {'kind': 'columns', 'may_be_empty': true, 'default': [], 'materialized': merge_only},
      'merge_key_ranges': {'kind': 'whole_number', 'minimum': 0, 'unit': 'key ranges', 'default': 32,
          'materialized': keyed_targets},
      'merge_write': {'kind': 'choice', 'default': 'auto', 'materialized': net_writes,
          'accepted': {'auto': 'per window: rewrite when its keys fall in half the files or more, replace_where when '
                               ~ 'they are spread out, merge otherwise',
                       'merge': 'every window with one MERGE',
                       'replace_where': 'every window that qualifies with INSERT ... REPLACE WHERE',
                       'rewrite': 'every window with INSERT OVERWRITE of the target from itself'}},
      'replace_where_max_keys': {'kind': 'whole_number', 'minimum': 0, 'unit': 'keys', 'default': 100000,
          'materialized': net_writes},
      'sequence_by': {'kind': 'columns', 'single': true, 'default': none, 'materialized': merge_only},
      'apply_as_deletes': {'kind': 'sql_condition', 'default': none, 'materialized': merge_only},
      'ignore_null_updates': {'kind': 'columns', 'or_all': true, 'default': false, 'materialized': merge_only},
      'tombstone_retention': {'kind': 'duration', 'default': '7 days', 'materialized': merge_only},
      'apply_as_truncates': {'kind': 'unsupported', 'default': none, 'materialized': merge_only,
          'remedy': "Apply a truncate as deletes of its keys with apply_as_deletes, or rebuild the target with "
                    ~ "--full-refresh (docs/cdc-events.md)."},
      'scd_type': {'kind': 'choice', 'default': 1, 'materialized': merge_only,
          'accepted': {1: "the target holds each key's current row",
                       2: 'the target keeps every version, with dbt_valid_from and dbt_valid_to'}},
      'track_history_columns': {'kind': 'columns', 'default': none, 'materialized': merge_only},
      'track_history_except_columns': {'kind': 'columns', 'default': none, 'materialized': merge_only},
      'hard_deletes': {'kind': 'choice', 'default': 'invalidate', 'materialized': merge_only,
          'accepted': {'invalidate': 'a delete closes the current version',
                       'new_record': 'also a row with dbt_is_deleted = true',
                       'ignore': 'deletes close nothing'}},
      'group_by': {'kind': 'columns', 'single': true, 'default': none, 'materialized': aggregate_only,
          'needed_by': {'stream_aggregate': "the column or columns of the model's select to group by"}},
      'aggregates': {'kind': 'aggregates', 'default': none, 'materialized': aggregate_only,
          'needed_by': {'stream_aggregate': 'its columns besides group_by'},
          'accepted': {'count(*)': none, 'count(col)': none, 'sum(col)': none, 'avg(col)': none, 'min(col)': none,
                       'max(col)': none}},
      'location': {'kind': 'path', 'default': none, 'materialized': ['directory_table'],
          'needed_by': {'directory_table': "the folder to list, for example "
                                           ~ "config(materialized='directory_table', location='landing/orders')"}},
      'recursive': {'kind': 'boolean', 'default': true, 'materialized': ['directory_table']},
      'include': {'kind': 'globs', 'default': [], 'materialized': ['directory_table']},
      'exclude': {'kind': 'globs', 'default': [], 'materialized': ['directory_table']},
  }) }}
{% endmacro %}


{#-- The materializations that read a stream, which take every entry of _stream_config_spec that
     lists no `materialized`. --#}
{% macro _stream_materializations() %}
  {{ return(['table_stream', 'stream_merge', 'stream_aggregate', 'stream_view']) }}
{% endmacro %}


{#-- Whether a spec entry applies to `materialized`, the one statement of the rule: a
     materialization takes the entries that list it in `materialized`, and a stream
     materialization the entries that list none too. snapshot_mirror and directory_table write
     sources rather than read streams, so they take only the entries that name them. Any other
     reader of a stream (the PySpark API as `pyspark`, a model's changes() as none, a model of
     another materialization reading ref_stream) takes what every stream materialization takes. --#}
{% macro _setting_applies(entry, materialized) %}
  {%- set streams = dbt_tablestream._stream_materializations() -%}
  {%- set listed = entry.materialized if 'materialized' in entry else streams -%}
  {%- if materialized in streams + ['snapshot_mirror', 'directory_table'] -%}
    {{ return(materialized in listed) }}
  {%- endif -%}
  {{ return(streams | reject('in', listed) | list | length == 0) }}
{% endmacro %}


{#-- Every project var the package reads, by name, as _stream_config_spec states a config: its
     kind (settings_kinds.sql), its one default and the kind's parameters; read only through
     _stream_project_var. `tablestream_stream_read` is the project-wide default of the config
     stream_read, and is its spec entry's `project_var`. What each does is docs/configuration.md's,
     "Project vars". --#}
{% macro _stream_project_var_spec() %}
  {{ return({
      'tablestream_commit_protocol': {'kind': 'choice', 'default': 'auto', 'var_only': true,
          'accepted': {'auto': 'reapply on a Databricks SQL warehouse, marked elsewhere',
                       'marked': "the commit carries Delta's idempotent-write session settings",
                       'reapply': 'no session settings: an unlogged window is re-applied'}},
      'tablestream_compact_every': {'kind': 'whole_number', 'minimum': 0, 'unit': 'runs', 'default': 50,
          'var_only': true},
      'tablestream_test_hooks': {'kind': 'boolean', 'default': false, 'var_only': true},
  }) }}
{% endmacro %}

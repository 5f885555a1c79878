{#-- Shared by the stream materializations: checks of the model's output, its schema changes, and the
     end of a run (the offsets append and the summary line). --#}

{#-- The model's output columns; refuses output lacking the columns a keyed stream needs: the key,
     __change_type and what orders a key's changes (`sequence`, the sequence_by columns, or else
     __commit_version, and __commit_timestamp when it dates versions: `timed`). --#}
{% macro _stream_output_columns(stream, sql, keys, sequence=[], timed=false) %}
  {%- set columns = dbt_tablestream._stream_output_schema(stream, sql, keys, sequence, timed)
                    | map(attribute='name') | list -%}
  {{ return(columns) }}
{% endmacro %}


{#-- _stream_output_columns as Columns, with their types. --#}
{% macro _stream_output_schema(stream, sql, keys, sequence=[], timed=false) %}
  {%- set schema = get_column_schema_from_query(sql) -%}
  {%- set columns = schema | map(attribute='name') | list -%}
  {%- set required = keys + sequence + ['__change_type']
                     + ([] if sequence else ['__commit_version'] + (['__commit_timestamp'] if timed else [])) -%}
  {%- set missing = [] -%}
  {%- for column in required if column not in columns -%}{%- do missing.append(column) -%}{%- endfor -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": the output of model " ~ model.name
        ~ " lacks " ~ missing | join(', ') ~ ". A keyed stream model must keep its unique_key columns ("
        ~ keys | join(', ')
        ~ ("), its sequence_by columns (" ~ sequence | join(', ') ~ ") and __change_type" if sequence
           else "), __change_type, __commit_version and __commit_timestamp (an SCD type 2 version starts at it)"
           if timed else "), __change_type and __commit_version")
        ~ "; select them from the stream. Nothing was written.") }}
  {%- endif -%}
  {{ return(schema) }}
{% endmacro %}


{#-- Refuses a stream_merge whose column configs name columns its output lacks:
     target_exclude_columns, ignore_null_updates, the columns apply_as_deletes refers to, and an
     SCD type 2 target's tracked columns (_history_tracked_columns). --#}
{% macro _check_stream_merge_columns(stream, columns, data_columns, settings) %}
  {%- if settings.history is not none -%}
    {%- do dbt_tablestream._history_tracked_columns(stream, settings.history, data_columns, settings.unique_key,
        settings.sequence) -%}
  {%- endif -%}
  {%- set events = settings['events'] or {} -%}
  {%- set named = [] -%}
  {%- for column in settings['target_exclude_columns'] -%}
    {%- do named.append(['target_exclude_columns', column]) -%}
  {%- endfor -%}
  {%- if events.get('ignore_null') is sequence and events.get('ignore_null') is not string -%}
    {%- for column in events['ignore_null'] -%}{%- do named.append(['ignore_null_updates', column]) -%}{%- endfor -%}
  {%- endif -%}
  {%- if events.get('deletes') -%}
    {%- for column in dbt_tablestream._expression_columns(events['deletes']) -%}
      {%- do named.append(['apply_as_deletes', column]) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set known = columns | map('lower') | list -%}
  {%- for config_name, column in named if column | lower not in known -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": " ~ config_name ~ " names "
        ~ column ~ ", which is not a column of the output of model " ~ model.name ~ " (" ~ columns | join(', ') ~ ")"
        ~ (" in the expression " ~ events['deletes'] if config_name == 'apply_as_deletes' else "") ~ ". Fix the config "
        ~ "or select the column. Nothing was written.") }}
  {%- endfor -%}
{% endmacro %}


{% macro inspect_stream_window(stream, sql, keys, sequence=[], key_ranges=none) %}
  {{ return(adapter.dispatch('inspect_stream_window', 'dbt_tablestream')(
      stream, sql, keys, sequence, key_ranges)) }}
{% endmacro %}


{#-- Refuses change rows whose key is NULL, which could match no target row, and events whose
     sequence is NULL, which no order can place. Returns how many change rows the model read from
     the window (rows_read) and, with `key_ranges` ({'column', 'type', 'cap', 'listed'}), the
     window's key ranges as literals (key_ranges: [[lo, hi], ...]), how many keys it holds
     (distinct_keys), with `file_keys` how many files of a key-ordered target its integer keys
     touch (key_files, stream_key_ranges_sql's estimate) and the target's rows (target_rows), and,
     when they are at most `listed`, the keys (listed_keys, as strings; _key_list_sql writes them
     as SQL), from the same one read of the window. --#}
{% macro spark__inspect_stream_window(stream, sql, keys, sequence=[], key_ranges=none) %}
  {%- set counts = run_query(dbt_tablestream.stream_null_keys_sql(sql, keys, sequence, key_ranges)).rows[0] -%}
  {%- set nulls = counts[1] -%}
  {%- if nulls > 0 -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": " ~ nulls ~ " change rows of the "
        ~ dbt_tablestream._stream_window_text(stream) ~ " have a NULL unique_key (" ~ keys | join(', ')
        ~ "). Filter them out in model " ~ model.name ~ " or fix the source; nothing was written and the "
        ~ "stream did not move.") }}
  {%- endif -%}
  {%- for column in sequence -%}
    {%- if counts[2 + loop.index0] > 0 -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source ~ ": " ~ counts[2 + loop.index0]
        ~ " events of the " ~ dbt_tablestream._stream_window_text(stream) ~ " have a NULL sequence_by column " ~ column
        ~ ", so they cannot be ordered. Filter them out or give them a sequence in model " ~ model.name
        ~ "; nothing was written and the stream did not move.") }}
    {%- endif -%}
  {%- endfor -%}
  {%- set ranges = [] -%}
  {%- set checked = {'rows_read': counts[0] | int, 'key_ranges': ranges, 'distinct_keys': none, 'listed_keys': none,
                     'key_files': none, 'target_rows': none} -%}
  {%- if key_ranges is not none -%}
    {%- do ranges.extend(dbt_tablestream._key_range_literals(counts['key_ranges'], key_ranges.type)) -%}
    {%- if key_ranges.get('listed', 0) > 0 -%}
      {%- do checked.update({'distinct_keys': counts['distinct_keys'] | int}) -%}
      {%- if key_ranges.get('file_keys') is not none -%}
        {%- do checked.update({'key_files': counts['key_files'] | int}) -%}
        {%- if key_ranges.get('target') is not none -%}
          {%- do checked.update({'target_rows': counts['target_rows'] | int}) -%}
        {%- endif -%}
      {%- endif -%}
      {%- if checked.distinct_keys <= key_ranges.listed -%}
        {%- do checked.update({'listed_keys': fromjson(counts['listed_keys'] or '[]')}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}
  {{ return(checked) }}
{% endmacro %}


{% macro stream_null_keys_sql(sql, keys, sequence=[], key_ranges=none) %}
  {{ return(adapter.dispatch('stream_null_keys_sql', 'dbt_tablestream')(sql, keys, sequence, key_ranges)) }}
{% endmacro %}


{% macro spark__stream_null_keys_sql(sql, keys, sequence=[], key_ranges=none) %}
  {%- set conditions = [] -%}
  {%- for key in keys -%}{%- do conditions.append(dbt_tablestream._sql_identifier(key) ~ ' is null') -%}{%- endfor -%}
  {%- set counts = [['rows_read', 'count(*)'], ['null_keys', 'count_if(' ~ conditions | join(' or ') ~ ')']] -%}
  {%- for column in sequence -%}
    {%- do counts.append(['null_sequence_' ~ loop.index0,
        "count_if(__change_type <> 'UPDATE_BEFORE' and " ~ dbt_tablestream._sql_identifier(column) ~ ' is null)']) -%}
  {%- endfor -%}
  {%- if key_ranges is not none -%}
    {{ return(dbt_tablestream.stream_key_ranges_sql('(' ~ sql ~ ') as __tablestream_rows', key_ranges.column,
                                                    key_ranges.type, key_ranges.cap, counts,
                                                    key_ranges.get('listed', 0), key_ranges.get('file_keys'),
                                                    key_ranges.get('target'))) }}
  {%- endif -%}
  {%- set selected = [] -%}
  {%- for name, aggregate in counts -%}{%- do selected.append(aggregate ~ ' as ' ~ name) -%}{%- endfor -%}
  {{ return('select ' ~ selected | join(', ') ~ ' from (' ~ sql ~ ') as __tablestream_keys') }}
{% endmacro %}


{#-- After the target write: the offsets log, the fault points around it, the run's summary, then
     dbt's model features on the target (`built`: {relation, existing, rebuilt, and optionally
     unit: what the target's rows are, 'rows' by default}; apply_stream_model_features). --#}
{% macro _finish_stream_run(stream, response, rows_read, built) %}
  {%- if response is not none and response.code == 'SKIPPED' -%}
    {{ log("stream " ~ stream.stream ~ ": " ~ dbt_tablestream._stream_window_text(stream)
           ~ " was already applied by a concurrent run; no-op", info=True) }}
    {{ return(none) }}
  {%- endif -%}
  {%- set rows_written = response.rows_affected if response is not none else 0 -%}
  {%- do dbt_tablestream.fault_point('after_target_commit') -%}
  {%- set appended = dbt_tablestream.append_stream_offset(stream, rows_written) -%}
  {%- do dbt_tablestream.fault_point('after_offsets_append') -%}
  {%- if appended == 0 -%}
    {{ log("stream " ~ stream.stream ~ ": " ~ dbt_tablestream._stream_window_text(stream) ~ " was applied and logged "
           ~ "by a concurrent run while this run applied it again, which changed nothing", info=True) }}
  {%- else -%}
    {%- set rows_reported = rows_read if rows_read is not none or built.get('unit') else rows_written -%}
    {{ log(dbt_tablestream._stream_summary(stream, rows_reported, rows_written, built.get('unit', 'rows')),
           info=True) }}
  {%- endif -%}
  {%- do dbt_tablestream.apply_stream_model_features(built.relation, built.existing, built.rebuilt) -%}
{% endmacro %}


{#-- The one line a stream model logs per run: window, rows read (unless none), rows applied (as
     `unit`), no-op or not; for a model reading several streams, the commit's rows and then each
     input's window. --#}
{% macro _stream_summary(stream, rows_read, rows_written, unit='rows') %}
  {%- if stream.inputs | length > 1 -%}
    {%- set parts = [] -%}
    {%- for input in stream.inputs -%}
      {%- do parts.append(input.stream ~ ": " ~ dbt_tablestream._stream_input_window_text(input)
          ~ (" is empty, offset at " ~ input.through if input.view is none
             else (" (snapshot)" if input.snapshot else "") ~ ", offset now " ~ input.through)
          ~ dbt_tablestream._stream_behind_text(input)) -%}
    {%- endfor -%}
    {{ return("streams " ~ stream.stream ~ ": " ~ ("every window is empty; no-op" if stream.view is none
        else rows_read ~ " change rows read, " ~ rows_written ~ " rows written in one commit")
        ~ "; " ~ parts | join('; ')) }}
  {%- endif -%}
  {%- set input = stream.inputs[0] -%}
  {%- if input.view is none -%}
    {{ return("stream " ~ input.stream ~ ": " ~ dbt_tablestream._stream_input_window_text(input)
        ~ " is empty; no-op, offset at " ~ input.through) }}
  {%- endif -%}
  {{ return("stream " ~ input.stream ~ ": " ~ dbt_tablestream._stream_input_window_text(input)
      ~ (" (snapshot)" if input.snapshot else "") ~ ", "
      ~ (rows_read ~ " change rows read, " if rows_read is not none else "") ~ rows_written ~ " " ~ unit
      ~ " written, offset now " ~ input.through ~ dbt_tablestream._stream_behind_text(input)) }}
{% endmacro %}


{#-- Why a run stopped short of an input's source's latest version, or nothing when it caught up. --#}
{% macro _stream_behind_text(stream) %}
  {%- set behind = (stream.latest | int) - stream.through -%}
  {{ return("; " ~ behind ~ " versions behind, caught up to " ~ stream.through ~ " of " ~ stream.latest ~ " ("
         ~ ("the window ends before the schema change " ~ stream.split ~ ", read with its own schema" if stream.split
            else "max_versions_per_run: " ~ stream.max_versions)
         ~ "); the next run continues" if behind > 0 else "") }}
{% endmacro %}


{#-- on_schema_change for stream targets: dbt's own handling, with stream-aware refusals. `fail`
     refuses any change of columns. `ignore` leaves new columns out, but cannot fill a target column
     the output lost (a source column renamed or dropped): a window that starts at a schema change
     is checked for that and refused with the change's version and the columns. --#}
{% macro _apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) %}
  {%- set schema_change = dbt_tablestream._stream_schema_change(stream) -%}
  {%- if on_schema_change == 'fail' or (on_schema_change == 'ignore' and schema_change) -%}
    {%- set changes = check_for_schema_changes(tmp_relation, existing_relation) -%}
    {%- set added = changes['source_not_in_target'] | map(attribute='name') | list -%}
    {%- set removed = changes['target_not_in_source'] | map(attribute='name') | list -%}
    {%- set at = " (the window starts at the schema change " ~ schema_change ~ ")" if schema_change else "" -%}
    {%- if on_schema_change == 'fail' and changes['schema_changed'] -%}
      {{ exceptions.raise_compiler_error(
          dbt_tablestream._stream_subject(stream.stream) ~ ": the columns of " ~ stream.source ~ at
          ~ " no longer match the target " ~ existing_relation ~ " (added: " ~ (added | join(', ') or 'none')
          ~ "; removed: " ~ (removed | join(', ') or 'none') ~ "; type changed: "
          ~ (changes['new_target_types'] | map(attribute='column_name') | join(', ') or 'none')
          ~ "), and on_schema_change is 'fail'. Nothing was written and the stream did not move. Set on_schema_change "
          ~ "to 'append_new_columns' or 'sync_all_columns', or rebuild with --full-refresh.") }}
    {%- endif -%}
    {%- if on_schema_change == 'ignore' and removed -%}
      {{ exceptions.raise_compiler_error(
          dbt_tablestream._stream_subject(stream.stream) ~ ": the schema change " ~ schema_change
          ~ " leaves the target " ~ existing_relation ~ " with columns the model's output no longer has ("
          ~ removed | join(', ') ~ ("; new in the output: " ~ added | join(', ') if added else "")
          ~ "), and on_schema_change 'ignore' (the default) cannot fill them. Nothing was written and the stream did "
          ~ "not move. Set on_schema_change to 'append_new_columns' (a renamed column arrives as a new one) or "
          ~ "'sync_all_columns', select the column under its old name in the model, or rebuild with --full-refresh.") }}
    {%- endif -%}
  {%- endif -%}
  {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
{% endmacro %}


{#-- The schema change the first of a group's inputs whose window starts at one starts at, with its
     source, or none. --#}
{% macro _stream_schema_change(stream) %}
  {%- for input in stream.inputs if input.schema_change -%}
    {{ return(input.schema_change ~ " of " ~ input.source) }}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{% macro existing_table(existing_relation) %}
  {{ return(adapter.dispatch('existing_table', 'dbt_tablestream')(existing_relation)) }}
{% endmacro %}


{#-- The model's table as it exists, or none: a view in its place is dropped first, as dbt's own
     table and incremental materializations drop one. Runs after the pre-hooks. --#}
{% macro spark__existing_table(existing_relation) %}
  {%- if existing_relation is not none and existing_relation.is_view -%}
    {%- do adapter.drop_relation(existing_relation) -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return(existing_relation) }}
{% endmacro %}

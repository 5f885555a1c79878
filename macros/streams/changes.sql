{#-- A change query without a cursor: the changes of a Delta table between two versions (or
     timestamps), in the stream column contract, with no stream, offset or marker. Snowflake's
     `CHANGES ... AT(...) END(...)`, for audits, backfills and tests. --#}
{% macro changes(relation, from, to=none, drop_carryovers=true) %}
  {%- do dbt_tablestream.stream_engine_check('changes') -%}
  {%- if not execute -%}
    {{ return("(select * from " ~ relation ~ " where 1 = 0)") }}
  {%- endif -%}
  {{ return(adapter.dispatch('changes', 'dbt_tablestream')(relation, from, to, drop_carryovers)) }}
{% endmacro %}


{#-- The range is checked as a stream's window is (window_checks.sql), with its own remedy, and
     read with the same relation and column contract, without the window marker a stream model
     commits. --#}
{% macro spark__changes(relation, from, to=none, drop_carryovers=true) %}
  {%- set source = dbt_tablestream._stream_source_name(relation) -%}
  {%- set query = 'changes(' ~ source ~ ', ' ~ from ~ ', ' ~ (to if to is not none else 'latest') ~ ')' -%}
  {%- for name, point in [['from', from], ['to', to]] if point is not none -%}
    {%- if not ((point is number and point is not boolean and point >= 0 and point == point | int)
                or point is string) -%}
      {{ exceptions.raise_compiler_error("dbt_tablestream." ~ query ~ ": `" ~ name ~ "` must be a version (a whole "
          ~ "number >= 0) or an ISO-8601 timestamp string, got " ~ point ~ ".") }}
    {%- endif -%}
  {%- endfor -%}
  {%- set configs = dbt_tablestream._raw_stream_configs('dbt_tablestream.' ~ query) -%}
  {%- set raw = {'drop_carryovers': drop_carryovers} -%}
  {%- for name, entry in dbt_tablestream._stream_config_spec().items() if entry.get('change_query') -%}
    {%- do raw.update({name: configs[name]}) -%}
  {%- endfor -%}
  {%- set settings = dbt_tablestream._settings_from_configs(raw, 'dbt_tablestream.' ~ query, none) -%}
  {%- set read = settings.stream_read -%}
  {%- if read == 'changelog' -%}{%- do dbt_tablestream.prepare_changelog_session(query) -%}{%- endif -%}
  {%- set state = dbt_tablestream.stream_source_state(relation, query, none, false, read) -%}
  {%- set from_log = dbt_tablestream._stream_reads_log(read, settings.on_feed_off) -%}
  {%- if not state.tracked and not from_log -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_untracked_message('dbt_tablestream.' ~ query, source, read)) }}
  {%- endif -%}
  {%- set first = dbt_tablestream.changes_range_version(relation, query, 'from', from) -%}
  {%- set last = state.latest_version if to is none
      else dbt_tablestream.changes_range_version(relation, query, 'to', to) -%}
  {%- if last > state.latest_version -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream." ~ query ~ ": version " ~ last ~ " is beyond the "
        ~ "latest version " ~ state.latest_version ~ " of " ~ source ~ ". Use a `to` from 0 to " ~ state.latest_version
        ~ ", or leave it out to read to the latest version.") }}
  {%- endif -%}
  {%- if first > last -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream." ~ query ~ ": the range starts at version " ~ first
        ~ " and ends at version " ~ last ~ " of " ~ source ~ ", so it is empty. Give a `from` at or before the "
        ~ "`to`.") }}
  {%- endif -%}
  {#-- A change query has no stream to reset: its refusals advise another range. --#}
  {%- set files = dbt_tablestream._stream_files(state.files, settings.unique_key) if from_log else none -%}
  {%- set range = dbt_tablestream._stream_input(settings, {
      'stream': query, 'source': source, 'source_table_id': state.table_id, 'after': first - 1, 'through': last,
      'file_retention': state.file_retention, 'files': files, 'subject': 'dbt_tablestream.' ~ query,
      'remedy': "Read a range whose versions the source still keeps (DESCRIBE HISTORY " ~ source ~ " lists them)."}) -%}
  {%- set retained_from = run_query(dbt_tablestream.retained_from_sql(state.file_retention)).rows[0][0] -%}
  {%- set window_rows = dbt_tablestream.history_since(relation, first, last) -%}
  {#-- The change feed reads an added column as NULL before it was added; a rename, drop or type
       change cannot be read across. The Delta log read reads each version's files with that
       version's columns, so it cannot read across an added column either. --#}
  {%- set operations = dbt_tablestream._delta_schema_operations() -%}
  {%- set split = dbt_tablestream._schema_change_split(first - 1, last, window_rows,
      operations if from_log else operations | reject('equalto', 'ADD COLUMNS') | list) -%}
  {%- if split is not none -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream." ~ query ~ ": the range spans the schema change "
        ~ split.operation ~ " at version " ~ split.version ~ " of " ~ source ~ ", and "
        ~ ("a read from the Delta log (stream_read: delta_log, on_feed_off: delta_log)" if from_log else "Delta")
        ~ " reads a range with one schema. Read versions " ~ first ~ " to " ~ (split.version - 1) ~ " and "
        ~ split.version ~ " to " ~ last ~ " separately.") }}
  {%- endif -%}
  {%- set range = dbt_tablestream._stream_input_with(range,
      {'appends_only': dbt_tablestream._window_appends_only(first - 1, last, window_rows)}) -%}
  {%- set problem = dbt_tablestream._window_problem(relation, range, none, window_rows, retained_from) -%}
  {%- if problem is not none -%}{{ exceptions.raise_compiler_error(problem.message) }}{%- endif -%}
  {%- if from_log -%}
    {%- set range = dbt_tablestream._stream_input_with(range,
        {'files': dict(range.files, versions=dbt_tablestream._window_log_versions(range, window_rows))}) -%}
  {%- endif -%}
  {%- set columns = dbt_tablestream.window_columns(relation, range) -%}
  {%- set range = dbt_tablestream._stream_input_with(range,
      {'view': dbt_tablestream.window_relation_sql(relation, range, columns)}) -%}
  {{ return(dbt_tablestream.change_rows_sql(range, relation, columns, false)) }}
{% endmacro %}


{% macro changes_range_version(relation, query, name, point) %}
  {{ return(adapter.dispatch('changes_range_version', 'dbt_tablestream')(relation, query, name, point)) }}
{% endmacro %}


{#-- One end of a change query's range as a version: a version as given; a timestamp as Delta's
     table_changes takes it, the first version committed at or after it (`from`) or the last at or
     before it (`to`). --#}
{% macro spark__changes_range_version(relation, query, name, point) %}
  {%- if point is number -%}{{ return(point | int) }}{%- endif -%}
  {%- set moment = run_query(dbt_tablestream.timestamp_sql(point)).rows[0][0] -%}
  {%- if moment is none -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream." ~ query ~ ": `" ~ name ~ "` '" ~ point ~ "' is neither a "
        ~ "version nor an ISO-8601 timestamp (e.g. '2024-01-15T10:00:00Z').") }}
  {%- endif -%}
  {%- set versions = [] -%}
  {%- for row in run_query(dbt_tablestream.describe_history_sql(relation, none)).rows
        if (row['timestamp'] >= moment if name == 'from' else row['timestamp'] <= moment) -%}
    {%- do versions.append(row['version'] | int) -%}
  {%- endfor -%}
  {%- if not versions -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream." ~ query ~ ": " ~ dbt_tablestream._stream_source_name(relation)
        ~ " has no version committed " ~ ("at or after" if name == 'from' else "at or before") ~ " " ~ point ~ ". Use "
        ~ ("an earlier `from`" if name == 'from' else "a later `to`") ~ ", or give a version.") }}
  {%- endif -%}
  {{ return(versions | min if name == 'from' else versions | max) }}
{% endmacro %}

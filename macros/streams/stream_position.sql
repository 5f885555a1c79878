{#-- Where a stream stands and where its window ends: the rules resolve_stream applies and the
     PySpark API renders (docs/architecture.md, "One stream run, traced", steps 1-2). Pure: each is
     handed what the caller read. --#}


{#-- The stream's position from its offsets log row (`logged`, read_stream_offset) and its
     target's marker (`marker`, _find_marker): the later of the two, by epoch then version.
     `log_counts`: the log's offset stands only while what it describes is there (a dbt model's
     target; a PySpark stream, whose state is the log). reset_stream back to start_at and
     drop_stream leave a row without an offset: the stream starts again, in the epoch that row
     opened. Returns {restart, epoch, after, table_id}; on a restart, `after` and `table_id` are
     none and the caller starts at start_at (_stream_start_after). --#}
{% macro _stream_position(logged, marker, log_counts, full_refresh=false) %}
  {%- set restart_pending = logged is not none and logged.mode in ['reset', 'dropped'] and logged.to_version is none -%}
  {%- set positions = [] -%}
  {%- if logged is not none and not restart_pending and log_counts -%}
    {%- do positions.append({'epoch': logged.epoch | int, 'to': logged.to_version | int,
                             'table_id': logged.source_table_id}) -%}
  {%- endif -%}
  {%- if marker is not none -%}
    {%- do positions.append({'epoch': marker.epoch | int, 'to': marker.to | int,
                             'table_id': marker.source_table_id}) -%}
  {%- endif -%}
  {%- set current = (positions | sort(attribute='to') | sort(attribute='epoch') | list | last) if positions
                    else none -%}
  {%- if current is not none and not full_refresh and not restart_pending -%}
    {{ return({'restart': false, 'epoch': current.epoch, 'after': current.to, 'table_id': current.table_id}) }}
  {%- endif -%}
  {#-- A restart opens an epoch above every one logged, or the log's newest epoch (an older run's)
       would win the next position and re-apply its window. --#}
  {%- set logged_epoch = none if logged is none
                         else ((logged.epoch | int) if restart_pending else (logged.epoch | int) + 1) -%}
  {%- set epoch = [(current.epoch + 1) if current is not none else 0,
                   logged_epoch if logged_epoch is not none else 0] | max -%}
  {{ return({'restart': true, 'epoch': epoch, 'after': none, 'table_id': none}) }}
{% endmacro %}


{#-- The version a new (or restarted) stream starts after, by start_at, from the source's state
     (_stream_source_state_of). start_at {stream: ...} reads another stream's offset, which the
     caller passes as `other_offset` (_stream_offset_to_start_at). --#}
{% macro _stream_start_after(start_at, state, stream_name, source, other_offset=none) %}
  {%- if start_at == 'snapshot' or start_at == 'latest' -%}
    {{ return(state.latest_version) }}
  {%- elif start_at == 'earliest' -%}
    {%- if state.earliest_change_version is none -%}
      {{ exceptions.raise_compiler_error(dbt_tablestream._stream_subject(stream_name) ~ ": the source " ~ source
          ~ " has no readable change feed up to its latest version (change data feed off or history removed). Enable "
          ~ "it with `dbt run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ source
          ~ "}'`, or use start_at: latest.") }}
    {%- endif -%}
    {{ return(state.earliest_change_version - 1) }}
  {%- elif 'stream' in start_at -%}
    {{ return(other_offset) }}
  {%- elif 'version' in start_at -%}
    {%- if (start_at.version | int) > state.latest_version -%}
      {{ exceptions.raise_compiler_error(dbt_tablestream._stream_subject(stream_name) ~ ": start_at version "
          ~ start_at.version ~ " is beyond the latest version " ~ state.latest_version ~ " of " ~ source
          ~ ". Use a version from 0 to " ~ state.latest_version ~ ".") }}
    {%- endif -%}
    {{ return(start_at.version | int) }}
  {%- endif -%}
  {{ return(state.version_at_timestamp) }}
{% endmacro %}


{#-- How the pinned window (_stream_input) is cut by the source's commits in it (`window_rows`,
     _stream_window_commits) and the source's current `table_id`. Returns the keys to update:
     - `recreated`: a continuing stream whose source was dropped and recreated (checked even when
       the window looks empty: a recreated source with fewer versions than the offset would
       otherwise pass as "nothing new");
     - `through` and `split`: a window ends before a schema change, the next starts at it
       (_delta_schema_operations);
     - `schema_change`: the window starts at a schema change (its part is applied under
       on_schema_change, and a refusal names the change);
     - `schema_version`: Delta reads a range with its end version's schema (column mapping), so a
       window ending before a later schema change is read with that version's columns. --#}
{% macro _stream_window_parts(stream, table_id, window_rows) %}
  {%- set parts = {'recreated': not stream.restart
                                and (stream.source_table_id != table_id or stream.after > stream.latest)} -%}
  {%- set schema_operations = dbt_tablestream._delta_schema_operations() -%}
  {%- set split = dbt_tablestream._schema_change_split(stream.after, stream.through, window_rows)
                  if not parts.recreated else none -%}
  {%- if split is not none -%}
    {%- do parts.update({'through': split.version - 1, 'split': split.operation ~ ' at version ' ~ split.version}) -%}
  {%- endif -%}
  {%- set through = parts.get('through', stream.through) -%}
  {%- if not parts.recreated and not stream.snapshot
      and dbt_tablestream._window_appends_only(stream.after, through, window_rows) -%}
    {%- do parts.update({'appends_only': true}) -%}
  {%- endif -%}
  {%- set window_files = dbt_tablestream._window_files(stream.after, through, window_rows)
                         if not parts.recreated and not stream.snapshot else none -%}
  {%- if window_files is not none -%}
    {%- do parts.update({'window_files': window_files}) -%}
  {%- endif -%}
  {%- for row in window_rows or [] if not parts.recreated and not stream.snapshot
        and (row['version'] | int) == stream.after + 1 and (row['operation'] | upper) in schema_operations -%}
    {%- do parts.update({'schema_change': (row['operation'] | upper) ~ ' at version ' ~ row['version']}) -%}
  {%- endfor -%}
  {%- for row in window_rows or [] if (row['version'] | int) > through
        and (row['operation'] | upper) in schema_operations and stream.schema_version is none -%}
    {%- do parts.update({'schema_version': through}) -%}
  {%- endfor -%}
  {{ return(parts) }}
{% endmacro %}

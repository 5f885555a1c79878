{#-- table_stream: append the stream's change rows to the target, an append-only change log.
     Commit protocol (docs/architecture.md, "One stream run, traced"): the window was pinned when
     the model compiled; the target write is one Delta commit carrying the stream's marker; only
     then is the offsets log appended. An empty window writes nothing to the target and still moves the offset. --#}
{% materialization table_stream, default %}
  {%- set settings = dbt_tablestream.stream_settings() -%}
  {%- set stream = dbt_tablestream.stream_of_compiled_code(compiled_code) -%}
  {%- set keys = settings.unique_key -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set on_schema_change = settings.on_schema_change -%}
  {%- set rows_sql = compiled_code -%}
  {%- set rows_read = none -%}
  {%- if keys and settings.net_changes and stream.view is not none -%}
    {%- set columns = dbt_tablestream.stream_output_columns(stream, compiled_code, keys) -%}
    {%- set rows_read = dbt_tablestream.check_stream_keys_not_null(stream, compiled_code, keys).rows_read -%}
    {%- set rows_sql = dbt_tablestream.net_changes_sql(compiled_code, keys, columns) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ adapter.drop_relation(existing_relation) }}
    {%- set existing_relation = none -%}
  {%- endif -%}

  {%- do dbt_tablestream.fault_point('before_target_commit') -%}
  {%- set response = none -%}
  {%- if existing_relation is none or stream.restart -%}
    {%- set response = dbt_tablestream.stream_commit(target_relation, dbt_tablestream.stream_write_sql(target_relation, rows_sql, 'overwrite', stream, dbt_tablestream.stream_kept_table_properties(existing_relation)), 'overwrite', stream) -%}
  {%- elif stream.view is none -%}
    {%- call noop_statement('main', 'NO-OP empty ' ~ dbt_tablestream.stream_window_text(stream), 'NO-OP', 0) -%}
    {%- endcall -%}
  {%- else -%}
    {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
    {%- call statement('create_tmp_relation') -%}
      {{ create_temporary_view(tmp_relation, rows_sql) }}
    {%- endcall -%}
    {%- do dbt_tablestream.apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) -%}
    {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
    {%- set select_sql = 'select ' ~ (dest_columns | map(attribute='quoted') | join(', ')) ~ ' from ' ~ tmp_relation -%}
    {%- set response = dbt_tablestream.stream_commit(target_relation, dbt_tablestream.stream_write_sql(target_relation, select_sql, 'append', stream), 'append', stream, {'compact': dbt_tablestream.stream_compaction_due(stream.inputs)}) -%}
    {%- do adapter.drop_relation(tmp_relation) -%}
  {%- endif -%}

  {%- do dbt_tablestream.finish_stream_run(stream, response, rows_read) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{#-- The one line a stream model logs per run: window, rows read, rows applied, no-op or not; for
     a model reading several streams, the commit's rows and then each input's window. --#}
{% macro stream_summary(stream, rows_read, rows_written) %}
  {%- if stream.inputs | length > 1 -%}
    {%- set parts = [] -%}
    {%- for input in stream.inputs -%}
      {%- do parts.append(input.stream ~ ": " ~ dbt_tablestream.stream_input_window_text(input)
          ~ (" is empty, offset at " ~ input.through if input.view is none else (" (snapshot)" if input.snapshot else "") ~ ", offset now " ~ input.through)
          ~ dbt_tablestream.stream_behind_text(input)) -%}
    {%- endfor -%}
    {{ return("streams " ~ stream.stream ~ ": " ~ ("every window is empty; no-op" if stream.view is none
        else rows_read ~ " change rows read, " ~ rows_written ~ " rows written in one commit") ~ "; " ~ parts | join('; ')) }}
  {%- endif -%}
  {%- set input = stream.inputs[0] -%}
  {%- if input.view is none -%}
    {{ return("stream " ~ input.stream ~ ": " ~ dbt_tablestream.stream_input_window_text(input) ~ " is empty; no-op, offset at " ~ input.through) }}
  {%- endif -%}
  {{ return("stream " ~ input.stream ~ ": " ~ dbt_tablestream.stream_input_window_text(input) ~ (" (snapshot)" if input.snapshot else "") ~ ", " ~ rows_read ~ " change rows read, " ~ rows_written ~ " rows written, offset now " ~ input.through
      ~ dbt_tablestream.stream_behind_text(input)) }}
{% endmacro %}


{#-- Why a run stopped short of an input's source's latest version, or nothing when it caught up. --#}
{% macro stream_behind_text(stream) %}
  {%- set behind = (stream.latest | int) - stream.through -%}
  {{ return("; " ~ behind ~ " versions behind, caught up to " ~ stream.through ~ " of " ~ stream.latest ~ " ("
         ~ ("the window ends before the schema change " ~ stream.split ~ ", read with its own schema" if stream.split else "max_versions_per_run: " ~ stream.max_versions)
         ~ "); the next run continues" if behind > 0 else "") }}
{% endmacro %}


{#-- on_schema_change for stream targets: dbt's own handling, with stream-aware refusals. `fail`
     refuses any change of columns. `ignore` leaves new columns out, but cannot fill a target column
     the output lost (a source column renamed or dropped): a window that starts at a schema change
     is checked for that and refused with the change's version and the columns. --#}
{% macro apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) %}
  {%- set schema_change = dbt_tablestream.stream_schema_change(stream) -%}
  {%- if on_schema_change == 'fail' or (on_schema_change == 'ignore' and schema_change) -%}
    {%- set changes = check_for_schema_changes(tmp_relation, existing_relation) -%}
    {%- set added = changes['source_not_in_target'] | map(attribute='name') | list -%}
    {%- set removed = changes['target_not_in_source'] | map(attribute='name') | list -%}
    {%- set at = " (the window starts at the schema change " ~ schema_change ~ ")" if schema_change else "" -%}
    {%- if on_schema_change == 'fail' and changes['schema_changed'] -%}
      {{ exceptions.raise_compiler_error(
          "Stream " ~ stream.stream ~ ": the columns of " ~ stream.source ~ at ~ " no longer match the target "
          ~ existing_relation ~ " (added: " ~ (added | join(', ') or 'none') ~ "; removed: " ~ (removed | join(', ') or 'none')
          ~ "; type changed: " ~ (changes['new_target_types'] | map(attribute='column_name') | join(', ') or 'none')
          ~ "), and on_schema_change is 'fail'. Nothing was written and the stream did not move. "
          ~ "Set on_schema_change to 'append_new_columns' or 'sync_all_columns', or rebuild with --full-refresh.") }}
    {%- endif -%}
    {%- if on_schema_change == 'ignore' and removed -%}
      {{ exceptions.raise_compiler_error(
          "Stream " ~ stream.stream ~ ": the schema change " ~ schema_change ~ " leaves the target "
          ~ existing_relation ~ " with columns the model's output no longer has (" ~ removed | join(', ') ~ ("; new in the output: " ~ added | join(', ') if added else "")
          ~ "), and on_schema_change 'ignore' (the default) cannot fill them. Nothing was written and the stream did not move. "
          ~ "Set on_schema_change to 'append_new_columns' (a renamed column arrives as a new one) or 'sync_all_columns', "
          ~ "select the column under its old name in the model, or rebuild with --full-refresh.") }}
    {%- endif -%}
  {%- endif -%}
  {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
{% endmacro %}


{#-- The schema change the first of a group's inputs whose window starts at one starts at, with its
     source, or none. --#}
{% macro stream_schema_change(stream) %}
  {%- for input in stream.inputs if input.schema_change -%}
    {{ return(input.schema_change ~ " of " ~ input.source) }}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}

{#-- The reapply protocol's write step (docs/architecture.md, "Exactly once without session
     settings"): the target DML with no session setting and no marker. The offsets log alone is the
     stream's position; every write leaves the target as one application of the window would, so
     a window whose offsets row a crash lost is simply applied again by the next run. --#}
{% macro stream_reapply_commit(target, sql, mode, stream, layout={}) %}
  {{ return(adapter.dispatch('stream_reapply_commit', 'dbt_tablestream')(target, sql, mode, stream, layout)) }}
{% endmacro %}


{#-- Before a write on top of the target (append or merge), the offsets log must still hold the
     position this run read from: a run that logged a later window has already applied this one
     (refused, nothing written). Two runs that both pass the check and write at once conflict in
     Delta, as their MERGEs read the files the other rewrites, and one fails; two that write one
     after the other both apply the window (the second changes nothing) and the offsets log takes
     the first row only (append_stream_offset). --#}
{% macro spark__stream_reapply_commit(target, sql, mode, stream, layout={}) %}
  {%- if mode != 'overwrite' -%}
    {%- do dbt_tablestream.check_stream_position_unmoved(stream) -%}
  {%- endif -%}
  {%- if layout.get('compact') -%}
    {#-- A target built under the marked protocol lacks the property that compacts it here. --#}
    {%- set properties = dbt_tablestream.stream_compaction_properties() -%}
    {%- set present = run_query(dbt_tablestream.table_properties_sql(target)).rows | map(attribute=0) | list -%}
    {%- for key, value in properties.items() if key not in present -%}
      {%- do run_query('alter table ' ~ target ~ ' set tblproperties (' ~ dbt_tablestream.sql_string(key) ~ ' = ' ~ dbt_tablestream.sql_string(value) ~ ')') -%}
    {%- endfor -%}
  {%- endif -%}
  {%- call statement('main', fetch_result=True) -%}
    {{ sql }}
  {%- endcall -%}
  {%- set result = load_result('main') -%}
  {%- if result.table is not none and 'num_affected_rows' in result.table.column_names and result.table.rows | length > 0 -%}
    {{ return({'code': 'OK', 'rows_affected': result.table.rows[0]['num_affected_rows'] | int}) }}
  {%- endif -%}
  {#-- A CREATE OR REPLACE reports nothing: its commit is the target's latest, as nothing else writes a target being rebuilt. --#}
  {%- set history = run_query(dbt_tablestream.describe_history_sql(target, 1)).rows -%}
  {{ return({'code': 'OK', 'rows_affected': dbt_tablestream.commit_output_rows(history, history[0]['version'] | int) if history else none}) }}
{% endmacro %}


{% macro check_stream_position_unmoved(stream) %}
  {{ return(adapter.dispatch('check_stream_position_unmoved', 'dbt_tablestream')(stream)) }}
{% endmacro %}


{#-- Refuses the write when the offsets log moved an input past where this run read it from:
     another run of the stream logged a later window (or a reset) after this run compiled. --#}
{% macro spark__check_stream_position_unmoved(stream) %}
  {%- for input in stream.inputs if input.view is not none -%}
    {%- set logged = dbt_tablestream.read_stream_offset(input.stream) -%}
    {%- if logged is not none and ((logged.epoch | int) != input.epoch or (logged.to_version is not none and (logged.to_version | int) > input.after)) -%}
      {{ exceptions.raise_compiler_error(
          dbt_tablestream.stream_subject(input.stream) ~ " is being consumed by another run: the offsets log moved it to "
          ~ ("epoch " ~ logged.epoch if (logged.epoch | int) != input.epoch else "version " ~ logged.to_version)
          ~ " after this run read " ~ input.source ~ " from version " ~ input.after
          ~ ". Nothing was written; run again to apply what is left.") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}


{% macro check_stream_reapply(stream, settings, output_columns) %}
  {{ return(adapter.dispatch('check_stream_reapply', 'dbt_tablestream')(stream, settings, output_columns)) }}
{% endmacro %}


{#-- Under the reapply protocol, refuses before any SQL runs what it cannot apply exactly once:
     a file bound, which only a session setting can give a MERGE; and a table_stream whose
     re-applied window could not be told from the rows already appended (several inputs, whose
     versions count different sources, or an output without __commit_version). --#}
{% macro spark__check_stream_reapply(stream, settings, output_columns) %}
  {%- if dbt_tablestream.stream_commit_protocol() != 'reapply' -%}{{ return(none) }}{%- endif -%}
  {%- set subject = "Model " ~ model.name ~ " (stream " ~ stream.stream ~ " on " ~ stream.source ~ ", commit protocol reapply)" -%}
  {%- if 'max_rows_per_file' in settings.configured -%}
    {{ exceptions.raise_compiler_error(subject ~ ": max_rows_per_file needs the session setting spark.sql.files.maxRecordsPerFile, "
        ~ "which a SQL warehouse refuses. Remove it and size the target's files with the table property delta.targetFileSize "
        ~ "(tblproperties). Nothing was written.") }}
  {%- endif -%}
  {%- if settings.materialized == 'table_stream' and stream.inputs | length > 1 -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a table_stream reading several streams cannot be re-applied safely, as its "
        ~ "rows do not say which source a version belongs to. Give each stream its own table_stream, read them in a stream_merge, "
        ~ "or run on a cluster (tablestream_commit_protocol: marked). Nothing was written.") }}
  {%- endif -%}
  {%- if settings.materialized == 'table_stream' and settings.unique_key and settings.net_changes -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a keyed table_stream appends each key's net change, and a window applied "
        ~ "again after a lost offsets row would net over a longer window than the rows already appended. Set net_changes: false "
        ~ "(every change row; net them downstream), use a stream_merge, or run on a cluster (tablestream_commit_protocol: marked). "
        ~ "Nothing was written.") }}
  {%- endif -%}
  {%- if settings.materialized == 'table_stream' and '__commit_version' not in output_columns | map('lower') | list -%}
    {{ exceptions.raise_compiler_error(subject ~ ": the output of the model lacks __commit_version, by which a re-applied "
        ~ "window's rows already in the target are recognised. Select __commit_version from the stream. Nothing was written.") }}
  {%- endif -%}
{% endmacro %}

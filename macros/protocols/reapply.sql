{#-- The reapply commit protocol (docs/architecture.md, "Exactly once without session settings"):
     no session setting and no marker. The offsets log alone is the stream's position; every write
     leaves the target as one application of the window would, so a window whose offsets row a
     crash lost is simply applied again by the next run. Each macro is one step of a run, reached
     through _protocol_step; macros/protocols/marked.sql holds the same steps for the marked
     protocol. --#}


{#-- The step `commit`: the target DML with no session setting and no marker. Before a write on
     top of the target (append or merge), the offsets log must still hold the position this run
     read from: a run that logged a later window has already applied this one (refused, nothing
     written). Two runs that both pass the check and write at once conflict in
     Delta, as their MERGEs read the files the other rewrites, and one fails; two that write one
     after the other both apply the window (the second changes nothing) and the offsets log takes
     the first row only (append_stream_offset). --#}
{% macro _reapply_commit(target, sql, mode, stream, write_options={}) %}
  {%- if mode != 'overwrite' -%}
    {%- do dbt_tablestream._check_stream_position_unmoved(stream) -%}
  {%- endif -%}
  {%- if write_options.get('compact') -%}
    {#-- A target built under the marked protocol lacks the property that compacts it here. --#}
    {%- set properties = dbt_tablestream.stream_compaction_properties() -%}
    {%- set present = run_query(dbt_tablestream.table_properties_sql(target)).rows | map(attribute=0) | list -%}
    {%- for key, value in properties.items() if key not in present -%}
      {%- do run_query('alter table ' ~ target ~ ' set tblproperties ('
                       ~ dbt_tablestream._sql_string(key) ~ ' = ' ~ dbt_tablestream._sql_string(value) ~ ')') -%}
    {%- endfor -%}
  {%- endif -%}
  {%- call statement('main', fetch_result=True) -%}
    {{ sql }}
  {%- endcall -%}
  {%- set result = load_result('main') -%}
  {%- if write_options.get('rows_written') is not none -%}
    {{ return({'code': 'OK', 'rows_affected': write_options.rows_written}) }}
  {%- endif -%}
  {%- if result.table is not none and 'num_affected_rows' in result.table.column_names
      and result.table.rows | length > 0 -%}
    {{ return({'code': 'OK', 'rows_affected': result.table.rows[0]['num_affected_rows'] | int}) }}
  {%- endif -%}
  {#-- A CREATE OR REPLACE reports nothing: its commit is the target's latest, as nothing else
       writes a target being rebuilt. --#}
  {%- set history = run_query(dbt_tablestream.describe_history_sql(target, 1)).rows -%}
  {{ return({'code': 'OK',
             'rows_affected': dbt_tablestream._commit_output_rows(history, history[0]['version'] | int)
                              if history else none}) }}
{% endmacro %}


{#-- The step `append_sql`: an append that a re-applied window cannot duplicate. Windows reach the
     target in order, each version of the source whole, so the versions of a window already there
     are the window's first ones, up to the newest present: only the rows of later versions are
     appended. A rebuild (--full-refresh) whose offsets row a crash lost leaves its snapshot's rows
     at their version, the snapshot standing for every version up to it: the next run re-applies
     the window from the log's older position, and the snapshot's version bounds it the same way
     (tests/functional/test_kills.py). The MERGE on the version still keeps two runs appending one
     window at once from both writing it (they conflict in Delta). The newest version present is a
     joined relation, not a scalar subquery: Delta refuses a MERGE whose source reads
     table_changes beside a scalar subquery of the target ("Table does not support reads"). The
     literal bounds let Delta read only the target files holding the window's versions
     (_reapply_check keeps a table_stream to one input and to an output with __commit_version). --#}
{% macro _reapply_append_sql(target, sql, stream) %}
  {%- set input = stream.inputs[0] -%}
  {%- set first, last = (input.after + 1) ~ 'L', input.through ~ 'L' -%}
  {%- set append_sql -%}
merge into {{ target }} as __tablestream_target
using (
  select __tablestream_rows.* from (
{{ sql }}
  ) as __tablestream_rows
  cross join (
    select coalesce(max(__commit_version), {{ input.after }}L) as __tablestream_present from {{ target }}
    where __commit_version >= {{ first }} and __commit_version <= {{ last }}
  ) as __tablestream_applied
  where __tablestream_rows.__commit_version > __tablestream_applied.__tablestream_present
) as __tablestream_window
on __tablestream_target.__commit_version = __tablestream_window.__commit_version
  and __tablestream_target.__commit_version >= {{ first }} and __tablestream_target.__commit_version <= {{ last }}
when not matched then insert *
  {%- endset -%}
  {{ return(append_sql) }}
{% endmacro %}


{#-- The step `settings_check`: refuses before any SQL runs the settings this protocol cannot keep
     exactly once whatever the stream (_settings_from_configs runs it with the other settings'
     refusals): a file bound, which only a session setting can give a MERGE; and a keyed
     table_stream's net changes, which a window applied again over a longer window would net
     differently. `protocol`: the run's, whose reason the messages say. --#}
{% macro _reapply_settings_check(settings, subject, protocol) %}
  {%- set subject = subject ~ " (commit protocol reapply: " ~ protocol.reason ~ ")" -%}
  {%- if 'max_rows_per_file' in settings.configured -%}
    {{ exceptions.raise_compiler_error(subject ~ ": max_rows_per_file needs the session setting "
        ~ "spark.sql.files.maxRecordsPerFile, which a SQL warehouse refuses. Remove it and size the target's files "
        ~ "with the table property delta.targetFileSize (tblproperties). Nothing was written.") }}
  {%- endif -%}
  {%- if settings.materialized == 'table_stream' and settings.unique_key and settings.net_changes -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a keyed table_stream appends each key's net change, and a window "
        ~ "applied again after a lost offsets row would net over a longer window than the rows already appended. Set "
        ~ "net_changes: false (every change row; net them downstream), use a stream_merge, or run on a cluster "
        ~ "(tablestream_commit_protocol: marked). Nothing was written.") }}
  {%- endif -%}
{% endmacro %}


{#-- The step `check`: refuses before any SQL runs a table_stream whose re-applied window could
     not be told from the rows already appended (several inputs, whose versions count different
     sources, or an output without __commit_version); the refusals that depend on the settings
     alone are settings_check's. `output_columns`: the model's, or none to read them from `sql`,
     the model's compiled code. --#}
{% macro _reapply_check(stream, settings, sql, output_columns=none) %}
  {%- set subject = "Model " ~ model.name ~ " (stream " ~ stream.stream ~ " on " ~ stream.source
      ~ ", commit protocol reapply: " ~ settings.protocol.reason ~ ")" -%}
  {%- if settings.materialized == 'table_stream' and stream.inputs | length > 1 -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a table_stream reading several streams cannot be re-applied "
        ~ "safely, as its rows do not say which source a version belongs to. Give each stream its own table_stream, "
        ~ "read them in a stream_merge, or run on a cluster (tablestream_commit_protocol: marked). "
        ~ "Nothing was written.") }}
  {%- endif -%}
  {%- set output_columns = output_columns if output_columns is not none
                           else get_column_schema_from_query(sql) | map(attribute='name') | list -%}
  {%- if settings.materialized == 'table_stream' and '__commit_version' not in output_columns | map('lower') | list -%}
    {{ exceptions.raise_compiler_error(subject ~ ": the output of the model lacks __commit_version, by which a "
        ~ "re-applied window's rows already in the target are recognised. Select __commit_version from the stream. "
        ~ "Nothing was written.") }}
  {%- endif -%}
{% endmacro %}


{#-- The step `table_properties`: Delta compacts a table's small files after its writes by a table
     property, where the session settings of spark__stream_compaction_sql cannot be made: once 50
     files are small, with the same limits. Set when the package creates a table_stream target or an
     offsets log, and added by _reapply_commit to a target built under the marked protocol. --#}
{% macro _reapply_table_properties() %}
  {%- set compacts = dbt_tablestream._stream_project_var('tablestream_compact_every') > 0 -%}
  {{ return({'delta.autoOptimize.autoCompact': 'true'} if compacts else {}) }}
{% endmacro %}


{#-- The step `offsets_compaction_sql`: none; the log's table property compacts it. --#}
{% macro _reapply_offsets_compaction_sql(on) %}
  {{ return([]) }}
{% endmacro %}


{#-- The step `unlogged_only`: the names of the stream's inputs. A concurrent run may have applied
     and logged the same window meanwhile, so only a window the log does not hold is appended
     (spark__offsets_log_append_sql). --#}
{% macro _reapply_unlogged_only(stream) %}
  {{ return(stream.inputs | map(attribute='stream') | list) }}
{% endmacro %}


{#-- The step `session_refusal`: a read that needs the session setting `setting` is refused, as a
     SQL warehouse lets a session neither read nor set it. --#}
{% macro _reapply_session_refusal(subject, setting, remedy) %}
  {%- set protocol = dbt_tablestream._stream_commit_protocol() -%}
  {{ return(subject ~ " needs the session setting " ~ setting ~ ", which a SQL warehouse does not let a session read "
            ~ "or set (commit protocol reapply: " ~ protocol.reason ~ "). Nothing was written. " ~ remedy) }}
{% endmacro %}


{#-- The step `reapplies_windows`: true; a window may be applied again on top of itself, so the SQL
     builders make a second application change nothing (net_changes_sql's touched_deletes,
     history_versions_sql's drop_applied). --#}
{% macro _reapply_reapplies_windows() %}
  {{ return(true) }}
{% endmacro %}


{#-- The step `caches_windows`: false; a Databricks SQL warehouse has no CACHE TABLE (it caches
     results itself), so a window read twice is read twice. --#}
{% macro _reapply_caches_windows() %}
  {{ return(false) }}
{% endmacro %}


{#-- Refuses the write when the offsets log moved an input past where this run read it from:
     another run of the stream logged a later window (or a reset) after this run compiled. --#}
{% macro _check_stream_position_unmoved(stream) %}
  {%- for input in stream.inputs if input.view is not none -%}
    {%- set logged = dbt_tablestream.read_stream_offset(input.stream) -%}
    {%- if logged is not none and ((logged.epoch | int) != input.epoch
                                   or (logged.to_version is not none and (logged.to_version | int) > input.after)) -%}
      {{ exceptions.raise_compiler_error(
          dbt_tablestream._stream_subject(input.stream)
          ~ " is being consumed by another run: the offsets log moved it to "
          ~ ("epoch " ~ logged.epoch if (logged.epoch | int) != input.epoch else "version " ~ logged.to_version)
          ~ " after this run read " ~ input.source ~ " from version " ~ input.after ~ ". Nothing was written; run "
          ~ "again to apply what is left.") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}


{#-- The step `replace_where_keys`: the most keys a replaceWhere may list, at most 10,000. Without
     session settings Delta checks each inserted row against the list, one literal after another,
     a cost that grows with keys times rows, where the unchecked write barely grows with the keys
     (bench/README.md, "A replaceWhere's key list"). --#}
{% macro _reapply_replace_where_keys(limit) %}
  {{ return([limit, 10000] | min) }}
{% endmacro %}

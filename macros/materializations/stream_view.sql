{#-- stream_view: a select over several Delta tables, joins included, kept up to date from their
     streams, exactly once (docs/stream-view.md). The model is a plain select that reads its inputs
     with source() and ref(); after every run the target equals that select over the inputs as of
     the versions the run pinned. The first run, a reset or --full-refresh builds it; a later run
     recomputes the rows of the keys its windows can change (stream_view_keys_sql) and applies them
     with stream_merge's net write, in one commit carrying every input's marker. The run is
     _stream_materialization's; this file names its parts. --#}
{% materialization stream_view, default %}
  {{ return(dbt_tablestream._stream_materialization({
      'stream': dbt_tablestream._stream_view_stream,
      'check': dbt_tablestream._stream_view_check,
      'prepare': dbt_tablestream._stream_view_prepare,
      'rebuild': dbt_tablestream._stream_view_rebuild,
      'window': dbt_tablestream._stream_merge_window,
      'finished': dbt_tablestream._stream_view_finished})) }}
{% endmaterialization %}


{#-- How a refusal names the view. --#}
{% macro _stream_view_subject() %}
  {{ return("stream_view " ~ model.name) }}
{% endmacro %}


{#-- The view's inputs, each pinned once (resolve_stream), as one group, and beside it what the
     other parts read: `view` (its template, _stream_view_template) and `reads` (each input's,
     _stream_view_reads), in the order of `relations`. --#}
{% macro _stream_view_stream() %}
  {%- set relations = dbt_tablestream._stream_view_relations() -%}
  {%- set view = dbt_tablestream._stream_view_template(compiled_code, relations,
                                                       dbt_tablestream._stream_view_subject()) -%}
  {%- set inputs, reads = [], [] -%}
  {%- for read in relations -%}
    {%- set resolved = dbt_tablestream.resolve_stream(read.relation, read.suffix) -%}
    {%- do inputs.append(resolved.stream) -%}
    {%- do reads.append(dbt_tablestream._stream_view_reads(resolved.stream, read.relation, resolved.columns,
                                                           loop.index0)) -%}
  {%- endfor -%}
  {{ return({'stream': dbt_tablestream._stream_group(inputs), 'view': view, 'reads': reads, 'relations': relations}) }}
{% endmacro %}


{#-- Before any write: the select's shape (_stream_view_shape_problem, from Spark's plan of it)
     and its columns, which hold the unique_key, each once. Then the rows the run writes: on a
     first build or a rebuild the select as of every input's window end; on a window its change
     rows (stream_view_changes_sql), which the net write applies as a stream_merge applies a
     stream's. --#}
{% macro _stream_view_check(run) %}
  {%- if run.kind == 'empty' -%}{{ return({}) }}{%- endif -%}
  {%- set settings, subject = run.settings, dbt_tablestream._stream_view_subject() -%}
  {%- set rebuild = run.rebuild or dbt_tablestream._stream_view_lost_run(settings) -%}
  {%- set keys = settings.unique_key -%}
  {%- set inputs = [] -%}
  {%- for read in run.relations -%}
    {%- do inputs.append(read.relation.schema ~ '.' ~ read.relation.identifier) -%}
  {%- endfor -%}
  {%- set explained = run_query('explain extended ' ~ compiled_code).rows[0][0] -%}
  {%- set problem = dbt_tablestream._stream_view_shape_problem(explained, keys, inputs) -%}
  {%- if problem is not none -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a run cannot keep this select up to date: " ~ problem
        ~ ". Nothing was written (docs/stream-view.md lists the selects a stream_view keeps).") }}
  {%- endif -%}
  {%- set schema = dbt_tablestream.described_columns(compiled_code) -%}
  {%- set names = schema | map(attribute='name') | list -%}
  {%- set lowered = names | map('lower') | list -%}
  {%- set twice = [] -%}
  {%- for name in lowered | unique if lowered.count(name) > 1 -%}{%- do twice.append(name) -%}{%- endfor -%}
  {%- set missing = keys | map('lower') | reject('in', lowered) | list -%}
  {%- if twice or missing -%}
    {{ exceptions.raise_compiler_error(subject ~ ": its select "
        ~ ("names the column(s) " ~ twice | join(', ') ~ " more than once" if twice
           else "has no column " ~ missing | join(', ') ~ " of its unique_key (" ~ keys | join(', ') ~ ")")
        ~ "; its columns are " ~ names | join(', ') ~ ". Give each output column one name, and keep the unique_key "
        ~ "among them. Nothing was written.") }}
  {%- endif -%}
  {%- if not rebuild -%}
    {%- set target_columns = adapter.get_columns_in_relation(run.target) | map(attribute='name') | list -%}
    {%- if target_columns | map('lower') | list != lowered -%}
      {{ exceptions.raise_compiler_error(subject ~ ": its select's columns (" ~ names | join(', ') ~ ") are not the "
          ~ "target's (" ~ target_columns | join(', ') ~ "), so the model changed since the target was built. Rebuild "
          ~ "it with `dbt run --full-refresh -s " ~ model.name ~ "`. Nothing was written.") }}
    {%- endif -%}
  {%- endif -%}
  {%- do dbt_tablestream._protocol_step('check', settings.protocol)(run.stream, settings, compiled_code, names) -%}
  {%- set rows_sql = dbt_tablestream._stream_view_rows_sql(run.view, run.reads) -%}
  {%- if rebuild -%}
    {{ return({'schema': schema, 'columns': names, 'data_columns': names, 'rebuild': true,
               'rows_sql': dbt_tablestream._stream_view_with(run.reads, rows_sql)}) }}
  {%- endif -%}
  {%- set stream_columns = [{'name': '__change_type', 'dtype': 'string'},
                            {'name': '__commit_version', 'dtype': 'bigint'},
                            {'name': '__commit_timestamp', 'dtype': 'timestamp'}] -%}
  {%- set keys_relation = dbt_tablestream._stream_view_scratch_relation('keys') -%}
  {#-- A run whose windows hold no change row (each input's window empty or a snapshot) lists no key. --#}
  {%- set keys_sql = dbt_tablestream.stream_view_keys_sql(run.view, run.reads, keys,
                                                          dbt_tablestream._stream_view_grows_with_inputs(explained))
      or 'select ' ~ dbt_tablestream._quoted_columns(keys) ~ ' from (\n' ~ rows_sql ~ '\n) where 1 = 0' -%}
  {%- set changes_sql = dbt_tablestream.stream_view_changes_sql(keys_relation, rows_sql, keys, schema,
                                                                run.stream.through) -%}
  {{ return({'schema': schema + stream_columns, 'columns': names + stream_columns | map(attribute='name') | list,
             'data_columns': names, 'keys_sql': dbt_tablestream._stream_view_with(run.reads, keys_sql),
             'rows_sql': dbt_tablestream._stream_view_with(run.reads, changes_sql)}) }}
{% endmacro %}


{#-- The rows written hold each key once, and no NULL key (stream_view_key_check_sql), checked
     before the write. A window's keys, then its change rows, are written to scratch Delta tables
     beside the target (_stream_view_scratch_relation): the keys first, as the change rows read
     them twice and Spark would inline a WITH clause's keys at each read; the change rows next, as
     the key check, the window's measures and the write each read them. Both stay until the run's
     offsets rows are logged (_stream_view_finished), or a refusal drops them before it raises. A
     cache would not serve: Spark does not match a cached view whose select has a WITH clause
     inside another WITH clause, as the net write's is. Then
     stream_merge's plan of the net write (_stream_merge_plan): the window's keys measured and the
     write chosen from them. --#}
{% macro _stream_view_prepare(run) %}
  {%- set keys = run.settings.unique_key -%}
  {%- if not run.rebuild -%}
    {%- set scratch = {'keys': dbt_tablestream._stream_view_scratch_relation('keys'),
                       'changes': dbt_tablestream._stream_view_scratch_relation('changes')} -%}
    {%- call statement('view_keys') -%}
      create or replace table {{ scratch['keys'] }} using delta as
      {{ run.keys_sql }}
    {%- endcall -%}
    {%- call statement('view_changes') -%}
      create or replace table {{ scratch.changes }} using delta as
      {{ run.rows_sql }}
    {%- endcall -%}
    {%- do run.update({'rows_sql': 'select * from ' ~ scratch.changes}) -%}
  {%- endif -%}
  {%- set checked = run_query(dbt_tablestream.stream_view_key_check_sql(run.rows_sql, keys, run.rebuild)).rows[0] -%}
  {%- if checked['duplicated'] > 0 or checked['null_keys'] > 0 -%}
    {%- if not run.rebuild -%}{%- do dbt_tablestream._stream_view_drop_scratch() -%}{%- endif -%}
    {{ exceptions.raise_compiler_error(dbt_tablestream._stream_view_subject() ~ " ("
        ~ dbt_tablestream._stream_window_text(run.stream) ~ "): "
        ~ (checked['duplicated'] ~ " keys have more than one row in its select, for example " ~ checked['examples']
           if checked['duplicated'] > 0
           else checked['null_keys'] ~ " rows of its select have a NULL unique_key (" ~ keys | join(', ') ~ ")")
        ~ ". The unique_key (" ~ keys | join(', ') ~ ") must identify each row of the select: fix the join or the key, "
        ~ "or coalesce a NULL key. Nothing was written.") }}
  {%- endif -%}
  {%- if run.rebuild -%}{{ return({'written_sql': run.rows_sql}) }}{%- endif -%}
  {#-- The select's columns were compared with the target's in the check, so the net write
       compares none (on_schema_change is not a stream_view's). --#}
  {%- set settings = dict(run.settings, **dbt_tablestream._stream_view_write_settings()) -%}
  {{ return(dict(dbt_tablestream._stream_merge_plan(dict(run, settings=settings)), rows_sql=run.rows_sql,
                 compared_sql=none)) }}
{% endmacro %}


{#-- A scratch table of a window run (`part`: keys or changes): the target's name with a suffix, in
     its schema, so it needs no other grant. --#}
{% macro _stream_view_scratch_relation(part) %}
  {{ return(this.incorporate(path={'identifier': this.identifier ~ '__tablestream_' ~ part}, type='table')) }}
{% endmacro %}


{#-- Whether a run of this view may have committed its target and not its offsets rows, under the
     reapply protocol: its scratch tables are still there, which a run drops only once its offsets
     rows are logged (_stream_view_finished). A window applied again over such a target would
     list the keys its own netted changes give, not those the lost run changed and a later
     change undid (docs/architecture.md, "Views"), so that run rebuilds the view instead. The
     marked protocol's recovery reads the target's marker and applies no window twice. --#}
{% macro _stream_view_lost_run(settings) %}
  {%- if not dbt_tablestream._protocol_step('reapplies_windows', settings.protocol)() -%}
    {{ return(false) }}
  {%- endif -%}
  {#-- Asked of the catalog, not dbt's relation cache: a crashed run's tables are not dbt's. --#}
  {%- set names = [] -%}
  {%- for part in ['keys', 'changes'] -%}
    {%- do names.append(dbt_tablestream._stream_view_scratch_relation(part).identifier | lower) -%}
  {%- endfor -%}
  {%- set listed = run_query('show tables in ' ~ this.include(identifier=false) ~ ' like '
                             ~ dbt_tablestream._sql_string(names | join('|'))) -%}
  {%- set left = listed.rows | length > 0 -%}
  {%- if left -%}
    {{ log(dbt_tablestream._stream_view_subject() ~ ": a scratch table (" ~ names | join(' or ')
           ~ ") is left from a run that did not log its offsets; this run rebuilds the view.", info=True) }}
  {%- endif -%}
  {{ return(left) }}
{% endmacro %}


{#-- After the offsets rows of a window run: its scratch tables dropped (a rebuild for a lost run
     drops those the lost run left). --#}
{% macro _stream_view_finished(run) %}
  {%- if run.kind == 'window' -%}{%- do dbt_tablestream._stream_view_drop_scratch() -%}{%- endif -%}
{% endmacro %}


{% macro _stream_view_drop_scratch() %}
  {%- for part in ['keys', 'changes'] -%}
    {%- do adapter.drop_relation(dbt_tablestream._stream_view_scratch_relation(part)) -%}
  {%- endfor -%}
{% endmacro %}


{% macro stream_view_key_check_sql(rows_sql, keys, whole=false) %}
  {{ return(adapter.dispatch('stream_view_key_check_sql', 'dbt_tablestream')(rows_sql, keys, whole)) }}
{% endmacro %}


{#-- How many keys have more than one row, how many rows have a NULL key, and up to five of the
     repeated keys, as JSON: over the view's rows (`whole`), or over a window's change rows, whose
     DELETE rows are not the view's. --#}
{% macro spark__stream_view_key_check_sql(rows_sql, keys, whole=false) %}
  {%- set quoted, nulls = [], [] -%}
  {%- for key in keys -%}
    {%- do quoted.append(dbt_tablestream._sql_identifier(key)) -%}
    {%- do nulls.append(dbt_tablestream._sql_identifier(key) ~ ' is null') -%}
  {%- endfor -%}
  {%- set sql -%}
select count_if(__tablestream_rows > 1) as duplicated,
  coalesce(sum(case when {{ nulls | join(' or ') }} then __tablestream_rows end), 0) as null_keys,
  to_json(slice(collect_list(case when __tablestream_rows > 1 then struct({{ quoted | join(', ') }}) end), 1, 5))
    as examples
from (
  select {{ quoted | join(', ') }}, count(*) as __tablestream_rows
  from (
{{ rows_sql }}
  ) as __tablestream_view
  {%- if not whole %}
  where __change_type <> 'DELETE' or ({{ nulls | join(' or ') }})
  {%- endif %}
  group by {{ quoted | join(', ') }}
)
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}


{#-- A first build or a rebuild: the target replaced by the select as of every input's window
     end, in key order. --#}
{% macro _stream_view_rebuild(run) %}
  {%- set kept_properties = dbt_tablestream.stream_kept_table_properties(run.existing) -%}
  {%- set ordered_sql = 'select * from (\n' ~ run.rows_sql ~ '\n) as __tablestream_view order by '
                        ~ dbt_tablestream._quoted_columns(run.settings.unique_key) -%}
  {%- set write_sql = dbt_tablestream.stream_write_sql(run.target, ordered_sql, 'overwrite', run.stream,
                                                       kept_properties) -%}
  {{ return(dbt_tablestream.stream_commit(run.target, write_sql, 'overwrite', run.stream,
                                          dbt_tablestream._stream_key_ordered_layout(run.settings))) }}
{% endmacro %}

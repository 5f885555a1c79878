{#-- The one run every stream materialization follows (docs/architecture.md, "The layers" and "One
     stream run, traced"). A materialization names only its parts; the kind of run, the no-op, the
     window cache, the schema-change relation, the fault point and the finish are written here once. --#}


{#-- A stream model's run, in order: its settings and stream; the kind of run (_stream_run_kind);
     the model's checks before any write (`check`); the pre-hooks; then, unless the window is empty
     (an explicit no-op), the window cached where the model asks (`caches_window`, `lazy_cache`),
     the reads that prepare its write (`prepare`), the enforced contract's check of the rows written
     (`written_sql`), the statements to run first (`statements`, e.g. CDC tombstones), the fault
     point `before_target_commit`, and the write: `rebuild` on a first build or a rebuild, else
     `window` after on_schema_change's comparison of `compared_sql` (_stream_compare_schema); then
     the offsets log and summary (_finish_stream_run) and the post-hooks.
     `parts`: the model's macros, each taking the run (a dict: settings, stream, target, existing,
     kind, rebuild, rows_sql, rows_read, compared and what `check` and `prepare` return):
     - stream(), optional: the group the model commits and what later parts read of its inputs
       ({stream, ...}); by default the streams its compiled code read (_stream_of_compiled_code);
     - check(run): before any write; raises, or returns what later parts read (rows_sql,
       rows_read, its columns);
     - prepare(run), optional: on a run that writes, after the cache; returns what the write reads
       (rows_read, written_sql, compared_sql, statements, its plan);
     - rebuild(run), window(run): the write and its commit; return stream_commit's response;
     - caches_window(stream, protocol, rebuild), optional: whether the window is cached, and
       lazy_cache: whether the cache fills on its first read (stream_window_cache_sql);
     - reads_compared: whether `window` reads the compared rows' view (run.compared), which is
       then dropped after the write rather than before it;
     - finished(run), optional: after the offsets log, every kind of run included (what a run
       keeps until it is logged, as a stream_view's scratch tables);
     - unit: what the target's rows are in the summary ('rows' unless given). --#}
{% macro _stream_materialization(parts) %}
  {%- set settings = dbt_tablestream._stream_settings() -%}
  {%- set opened = parts.stream() if parts.get('stream') is not none
                  else {'stream': dbt_tablestream._stream_of_compiled_code(compiled_code)} -%}
  {%- set stream = opened.stream -%}
  {%- do dbt_tablestream._check_stream_model_features(stream) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set kind = dbt_tablestream._stream_run_kind(existing_relation, stream) -%}
  {%- set run = {'settings': settings, 'stream': stream, 'target': this.incorporate(type='table'),
                 'existing': existing_relation, 'kind': kind, 'rebuild': kind in ['first build', 'rebuild'],
                 'rows_sql': compiled_code, 'rows_read': none, 'written_sql': none, 'compared_sql': none,
                 'statements': [], 'compared': none} -%}
  {%- do run.update(opened) -%}
  {%- do run.update(parts.check(run)) -%}

  {{ run_hooks(pre_hooks) }}

  {%- do run.update({'existing': dbt_tablestream.existing_table(existing_relation)}) -%}
  {%- set response = none -%}
  {%- if kind == 'empty' -%}
    {%- call noop_statement('main', 'NO-OP empty ' ~ dbt_tablestream._stream_window_text(stream), 'NO-OP', 0) -%}
    {%- endcall -%}
  {%- else -%}
    {%- set caches = parts.get('caches_window') is not none
                     and parts.caches_window(stream, settings.protocol, run.rebuild) -%}
    {%- set cached = '__tablestream_window_' ~ this.identifier if caches else none -%}
    {%- if cached is not none -%}
      {%- for statement_sql in dbt_tablestream.stream_window_cache_sql(cached, run.rows_sql,
                                                                       lazy=parts.get('lazy_cache', false)) -%}
        {%- call statement('cache_window') -%}{{ statement_sql }}{%- endcall -%}
      {%- endfor -%}
      {%- do run.update({'rows_sql': 'select * from ' ~ dbt_tablestream._sql_identifier(cached)}) -%}
    {%- endif -%}
    {%- if parts.get('prepare') is not none -%}{%- do run.update(parts.prepare(run)) -%}{%- endif -%}
    {%- do dbt_tablestream.check_stream_contract(stream, run.written_sql, run.rebuild) -%}
    {%- for step in run.statements -%}
      {%- call statement(step.name) -%}{{ step.sql }}{%- endcall -%}
    {%- endfor -%}
    {%- do dbt_tablestream.fault_point('before_target_commit') -%}
    {%- if run.rebuild -%}
      {%- set response = parts.rebuild(run) -%}
    {%- else -%}
      {%- set compared = dbt_tablestream._stream_compare_schema(stream, settings.get('on_schema_change'),
                                                                run.compared_sql, run.existing) -%}
      {%- set reads_compared = parts.get('reads_compared', false) -%}
      {%- if compared is not none and not reads_compared -%}{%- do adapter.drop_relation(compared) -%}{%- endif -%}
      {%- do run.update({'compared': compared if reads_compared else none}) -%}
      {%- set response = parts.window(run) -%}
      {%- if run.compared is not none -%}{%- do adapter.drop_relation(run.compared) -%}{%- endif -%}
    {%- endif -%}
    {%- if cached is not none -%}
      {%- for statement_sql in dbt_tablestream.stream_window_uncache_sql(cached) -%}
        {%- call statement('uncache_window') -%}{{ statement_sql }}{%- endcall -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endif -%}

  {%- set built = {'relation': run.target, 'existing': run.existing, 'rebuilt': run.rebuild} -%}
  {%- if parts.get('unit') is not none -%}{%- do built.update({'unit': parts.unit}) -%}{%- endif -%}
  {%- do dbt_tablestream._finish_stream_run(stream, response, run.rows_read, built) -%}
  {%- if parts.get('finished') is not none -%}{%- do parts.finished(run) -%}{%- endif -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [run.target]}) }}
{% endmacro %}


{#-- The kind of a stream run: 'first build' (no target yet, or a view in its place, which
     existing_table drops), 'rebuild' (the stream starts over: a reset, --full-refresh, on_stale
     resnapshot), 'empty' (a later run whose window holds no version: the target is not written)
     or 'window' (a later run that applies its window). --#}
{% macro _stream_run_kind(existing_relation, stream) %}
  {%- if existing_relation is none or existing_relation.is_view -%}{{ return('first build') }}{%- endif -%}
  {%- if stream.restart -%}{{ return('rebuild') }}{%- endif -%}
  {{ return('empty' if stream.view is none else 'window') }}
{% endmacro %}


{#-- on_schema_change's comparison of a window's rows with the target (_apply_stream_schema_changes),
     through a temporary view of `rows_sql` (the rows in the target's columns), which it returns;
     none when nothing is compared: a model without on_schema_change gives no rows, and 'ignore'
     compares nothing unless the window starts at a schema change, so it needs no view otherwise. --#}
{% macro _stream_compare_schema(stream, on_schema_change, rows_sql, existing_relation) %}
  {%- if rows_sql is none or (on_schema_change == 'ignore' and not dbt_tablestream._stream_schema_change(stream)) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
  {%- call statement('create_tmp_relation') -%}
    {{ create_temporary_view(tmp_relation, rows_sql) }}
  {%- endcall -%}
  {%- do dbt_tablestream._apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) -%}
  {{ return(tmp_relation) }}
{% endmacro %}


{#-- The layout of a target kept in key order (stream_merge's keys, stream_aggregate's group_by):
     files of bounded size, never compacted, as bin-packing would mix key ranges. --#}
{% macro _stream_key_ordered_layout(settings) %}
  {{ return({'max_rows_per_file': settings.max_rows_per_file}) }}
{% endmacro %}


{% macro stream_relation_exists(relation) %}
  {{ return(adapter.dispatch('stream_relation_exists', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{#-- Whether a relation exists (the strategies ask it of the tombstones table). --#}
{% macro spark__stream_relation_exists(relation) %}
  {{ return(adapter.get_relation(relation.database, relation.schema, relation.identifier) is not none) }}
{% endmacro %}


{% macro stream_relation_columns(relation) %}
  {{ return(adapter.dispatch('stream_relation_columns', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{#-- A relation's column names in its order (the net strategy asks it of a target it replaces
     keys in, and table_stream of the target it appends to: one DESCRIBE). --#}
{% macro spark__stream_relation_columns(relation) %}
  {{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | list) }}
{% endmacro %}

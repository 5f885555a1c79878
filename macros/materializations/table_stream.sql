{#-- table_stream: append the stream's change rows to the target, an append-only change log.
     Commit protocol (DESIGN.md section 6): the window was pinned when the model compiled; the
     target write is one Delta commit carrying the stream's marker; only then is the offsets log
     appended. An empty window writes nothing to the target and still moves the offset. --#}
{% materialization table_stream, default %}
  {%- do dbt_tablestream.validate_stream_config() -%}
  {%- set stream = dbt_tablestream.stream_of_compiled_code(compiled_code) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set on_schema_change = config.get('on_schema_change', 'ignore') -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ adapter.drop_relation(existing_relation) }}
    {%- set existing_relation = none -%}
  {%- endif -%}

  {%- if existing_relation is none or stream.restart -%}
    {%- call statement('main') -%}
      {{ dbt_tablestream.stream_write_sql(target_relation, compiled_code, 'overwrite', stream) }}
    {%- endcall -%}
    {%- set rows_written = load_result('main').response.rows_affected -%}
  {%- elif stream.view is none -%}
    {%- call noop_statement('main', 'NO-OP empty window (' ~ stream.after ~ ', ' ~ stream.through ~ ']', 'NO-OP', 0) -%}
    {%- endcall -%}
    {%- set rows_written = 0 -%}
  {%- else -%}
    {%- set tmp_relation = make_temp_relation(this).incorporate(type='view') -%}
    {%- call statement('create_tmp_relation') -%}
      {{ create_temporary_view(tmp_relation, compiled_code) }}
    {%- endcall -%}
    {%- do dbt_tablestream.apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) -%}
    {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
    {%- set select_sql = 'select ' ~ (dest_columns | map(attribute='quoted') | join(', ')) ~ ' from ' ~ tmp_relation -%}
    {%- call statement('main') -%}
      {{ dbt_tablestream.stream_write_sql(target_relation, select_sql, 'append', stream) }}
    {%- endcall -%}
    {%- set rows_written = load_result('main').response.rows_affected -%}
    {%- do adapter.drop_relation(tmp_relation) -%}
  {%- endif -%}

  {%- do dbt_tablestream.fault_point('after_target_commit') -%}
  {%- do dbt_tablestream.append_stream_offset(stream, rows_written) -%}
  {%- do dbt_tablestream.fault_point('after_offsets_append') -%}
  {{ log(dbt_tablestream.stream_summary(stream, rows_written), info=True) }}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{#-- The one stream window a compiled model read, from the marker source_stream() embedded. --#}
{% macro stream_of_compiled_code(compiled_code) %}
  {%- set found = modules.re.findall('/\\* tablestream:window (\\{.*?\\}) \\*/', compiled_code) -%}
  {%- set streams = [] -%}
  {%- for raw in found -%}
    {%- set stream = fromjson(raw) -%}
    {%- if stream not in streams -%}{%- do streams.append(stream) -%}{%- endif -%}
  {%- endfor -%}
  {%- if streams | length != 1 -%}
    {{ exceptions.raise_compiler_error(
        "Model " ~ model.name ~ " is materialized as a stream, so it must read exactly one stream with "
        ~ "dbt_tablestream.source_stream() or ref_stream(); it reads " ~ streams | length ~ ".") }}
  {%- endif -%}
  {{ return(streams[0]) }}
{% endmacro %}


{% macro stream_summary(stream, rows_written) %}
  {%- if stream.view is none -%}
    {{ return("stream " ~ stream.stream ~ ": window (" ~ stream.after ~ ", " ~ stream.through ~ "] of " ~ stream.source ~ " is empty; no-op, offset at " ~ stream.through) }}
  {%- endif -%}
  {{ return("stream " ~ stream.stream ~ ": window (" ~ stream.after ~ ", " ~ stream.through ~ "] of " ~ stream.source ~ (" (snapshot)" if stream.snapshot else "") ~ ", " ~ rows_written ~ " rows written, offset now " ~ stream.through) }}
{% endmacro %}


{#-- on_schema_change for stream targets: dbt's own handling, with a stream-aware refusal. --#}
{% macro apply_stream_schema_changes(stream, on_schema_change, tmp_relation, existing_relation) %}
  {%- if on_schema_change == 'fail' -%}
    {%- set changes = check_for_schema_changes(tmp_relation, existing_relation) -%}
    {%- if changes['schema_changed'] -%}
      {{ exceptions.raise_compiler_error(
          "Stream " ~ stream.stream ~ ": the columns of " ~ stream.source ~ " no longer match the target "
          ~ existing_relation ~ " (added: " ~ (changes['source_not_in_target'] | map(attribute='name') | join(', ') or 'none')
          ~ "; removed: " ~ (changes['target_not_in_source'] | map(attribute='name') | join(', ') or 'none')
          ~ "), and on_schema_change is 'fail'. Nothing was written and the stream did not move. "
          ~ "Set on_schema_change to 'append_new_columns' or 'sync_all_columns', or rebuild with --full-refresh.") }}
    {%- endif -%}
  {%- endif -%}
  {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
{% endmacro %}

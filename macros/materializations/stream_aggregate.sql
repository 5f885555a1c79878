{#-- stream_aggregate: a GROUP BY kept up to date from one stream, exactly once
     (docs/stream-aggregate.md). After every run the target equals the model's select over the
     source as of the window's end, grouped by `group_by`, with `aggregates`. The first run, a
     reset or --full-refresh builds it from that snapshot; a later run applies the window's change
     rows in one MERGE (stream_aggregate_merge_sql) committed by the run's protocol. The run is
     _stream_materialization's; this file names its parts. --#}
{% materialization stream_aggregate, default %}
  {{ return(dbt_tablestream._stream_materialization({
      'check': dbt_tablestream._stream_aggregate_check,
      'caches_window': dbt_tablestream._stream_aggregate_caches_window,
      'rebuild': dbt_tablestream._stream_aggregate_rebuild,
      'window': dbt_tablestream._stream_aggregate_window,
      'unit': 'groups'})) }}
{% endmaterialization %}


{#-- Before any write: the model (_check_stream_aggregate_model), then, unless the window is empty,
     its output's columns and the protocol's check. `current_sql`: the source's rows as of the
     window's end (the window's own rows on a start_at snapshot). --#}
{% macro _stream_aggregate_check(run) %}
  {%- do dbt_tablestream._check_stream_aggregate_model(run.stream) -%}
  {%- if run.kind == 'empty' -%}{{ return({}) }}{%- endif -%}
  {%- set columns = dbt_tablestream._stream_aggregate_columns(run.stream, compiled_code, run.settings) -%}
  {%- do dbt_tablestream._protocol_step('check', run.settings.protocol)(run.stream, run.settings, compiled_code,
                                                                        columns.types.keys() | list) -%}
  {%- set current_sql = compiled_code if run.stream.inputs[0].snapshot
                        else dbt_tablestream._stream_current_rows(compiled_code) -%}
  {{ return({'columns': columns, 'current_sql': current_sql}) }}
{% endmacro %}


{#-- The listing and the MERGE each read the window: read once, where the protocol can cache. --#}
{% macro _stream_aggregate_caches_window(stream, protocol, rebuild) %}
  {{ return(not rebuild and dbt_tablestream._protocol_step('caches_windows', protocol)()) }}
{% endmacro %}


{#-- A first build or a rebuild: the GROUP BY over the source as of the window's end, in group_by
     order (stream_aggregate_build_sql). --#}
{% macro _stream_aggregate_rebuild(run) %}
  {%- set build_sql = dbt_tablestream.stream_aggregate_build_sql(run.current_sql, run.settings.group_by,
                                                                 run.columns.target, ordered=true) -%}
  {%- set kept_properties = dbt_tablestream.stream_kept_table_properties(run.existing) -%}
  {%- set write_sql = dbt_tablestream.stream_write_sql(run.target, build_sql, 'overwrite', run.stream,
                                                       kept_properties) -%}
  {{ return(dbt_tablestream.stream_commit(run.target, write_sql, 'overwrite', run.stream,
                                          dbt_tablestream._stream_key_ordered_layout(run.settings))) }}
{% endmacro %}


{#-- A window: one MERGE of its signed change rows. The source is read again only for the groups
     that need it (under the reapply protocol, every group the window touched), by their keys as
     literals when there are at most _stream_aggregate_listed_groups, and not at all when there are
     none. --#}
{% macro _stream_aggregate_window(run) %}
  {%- set settings, columns = run.settings, run.columns -%}
  {%- set recompute_all = dbt_tablestream._protocol_step('reapplies_windows', settings.protocol)() -%}
  {%- set cap = dbt_tablestream._stream_aggregate_listed_groups() -%}
  {%- set listing_sql = dbt_tablestream.stream_aggregate_recomputes_sql(run.target, run.rows_sql, settings.group_by,
                                                                        columns.target, recompute_all, cap) -%}
  {%- set listed = fromjson(run_query(listing_sql).rows[0][0] or '[]') if listing_sql is not none else none -%}
  {%- set condition = dbt_tablestream._aggregate_listed_groups_condition(settings.group_by, columns.types, listed)
                      if listed is not none and listed | length <= cap else none -%}
  {%- set key_ranges = dbt_tablestream._stream_aggregate_key_ranges(run.rows_sql, settings, columns.types) -%}
  {%- set merge_sql = dbt_tablestream.stream_aggregate_merge_sql(
        run.target, run.rows_sql, none if listed == [] else run.current_sql,
        settings.group_by, columns.target, recompute_all, condition, key_ranges) -%}
  {{ return(dbt_tablestream.stream_commit(run.target, merge_sql, 'merge', run.stream,
                                          dbt_tablestream._stream_key_ordered_layout(settings))) }}
{% endmacro %}


{#-- The most groups a window's MERGE names by their keys as literals (stream_aggregate_recomputes_sql
     lists one more, to tell a longer list); more are read again through a semi join with the window's
     flagged groups instead. --#}
{% macro _stream_aggregate_listed_groups() %}
  {{ return(1000) }}
{% endmacro %}


{#-- Before any SQL: a stream_aggregate reads one stream (its groups are that source's), and an
     enforced contract cannot list the target's own columns. --#}
{% macro _check_stream_aggregate_model(stream) %}
  {%- set subject = dbt_tablestream._stream_subject(stream.stream) ~ " (model " ~ model.name ~ ")" -%}
  {%- if stream.inputs | length > 1 -%}
    {{ exceptions.raise_compiler_error(subject ~ " reads " ~ stream.inputs | length ~ " streams; a stream_aggregate "
        ~ "reads one, from source_stream() or ref_stream(). Aggregate each stream in its own model, or union the "
        ~ "sources into one stream_merge and aggregate its ref_stream(). Nothing was written.") }}
  {%- endif -%}
  {%- if dbt_tablestream._stream_contract_enforced() -%}
    {{ exceptions.raise_compiler_error(subject ~ ": a stream_aggregate's target keeps its own counts (columns "
        ~ "__tablestream_*) beside the aggregates, which an enforced contract would have to list. Remove "
        ~ "contract.enforced and test the target with data tests instead. Nothing was written.") }}
  {%- endif -%}
{% endmacro %}


{#-- The target's columns after group_by (`target`: _aggregate_target_columns) and the model's
     output column types by lower-cased name (`types`). The output must have the group_by columns,
     every aggregated column and __change_type; sum and avg take numbers. The types are Spark's own
     names, from DESCRIBE QUERY (described_columns): a Thrift cursor describes a column as INT_TYPE
     or DECIMAL_TYPE, without a decimal's precision and scale, which an average keeps. --#}
{% macro _stream_aggregate_columns(stream, compiled_code, settings) %}
  {%- set types = {} -%}
  {%- for column in dbt_tablestream.described_columns(compiled_code) -%}
    {%- do types.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {%- set subject = dbt_tablestream._stream_subject(stream.stream) ~ " on " ~ stream.source -%}
  {%- set missing = [] -%}
  {%- set read_columns = settings.aggregates | map(attribute='column') | reject('none') | list -%}
  {%- for column in settings.group_by + read_columns + ['__change_type']
        if column | lower not in types and column not in missing -%}
    {%- do missing.append(column) -%}
  {%- endfor -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(subject ~ ": the output of model " ~ model.name ~ " lacks "
        ~ missing | join(', ') ~ " (it has " ~ types.keys() | join(', ') ~ "). A stream_aggregate's select keeps its "
        ~ "group_by columns, the columns its aggregates read and __change_type, which signs each change row. "
        ~ "Nothing was written.") }}
  {%- endif -%}
  {%- for aggregate in settings.aggregates if aggregate.function in ['sum', 'avg'] -%}
    {%- set type = types[aggregate.column | lower] -%}
    {%- if not (type in ['tinyint', 'smallint', 'int', 'integer', 'bigint', 'float', 'double']
                or type.startswith('decimal')) -%}
      {{ exceptions.raise_compiler_error(subject ~ ": aggregates '" ~ aggregate.name ~ "' is " ~ aggregate.function
          ~ "(" ~ aggregate.column ~ "), and " ~ aggregate.column ~ " is " ~ type ~ " in the output of model "
          ~ model.name ~ "; sum and avg take a number (an integer, float, double or decimal). Cast it in the select. "
          ~ "Nothing was written.") }}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'target': dbt_tablestream._aggregate_target_columns(settings.aggregates, types), 'types': types}) }}
{% endmacro %}


{#-- The ranges of the window's values of the first group_by column, as literals, that the MERGE
     names so Delta skips the target's files outside them (merge_key_ranges of them at most); []
     when merge_key_ranges is 0 or the column's type has no ranges (_key_range_type). --#}
{% macro _stream_aggregate_key_ranges(rows_sql, settings, types) %}
  {%- set key = settings.group_by[0] -%}
  {%- set spec = dbt_tablestream._stream_key_ranges_spec([{'name': key, 'dtype': types[key | lower]}], key,
                                                         settings.merge_key_ranges) -%}
  {%- if spec is none -%}{{ return([]) }}{%- endif -%}
  {%- set ranges_sql = dbt_tablestream.stream_key_ranges_sql('(' ~ rows_sql ~ ') as __tablestream_rows', key, spec.type,
                                                              spec.cap) -%}
  {%- set found = run_query(ranges_sql).rows[0] -%}
  {{ return(dbt_tablestream._key_range_literals(found['key_ranges'], spec.type)) }}
{% endmacro %}

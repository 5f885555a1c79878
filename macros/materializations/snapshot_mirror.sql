{#-- snapshot_mirror: keep a Delta copy of a keyed query, with the change data feed on, so that
     any relation dbt can select from (a view, a JDBC table, a folder of nightly full exports)
     becomes a source streams read with ref_stream (docs/snapshot-mirror.md). The first run (and
     --full-refresh) builds the copy; every later run applies one MERGE of the snapshot's
     differences from the mirror that inserts new keys, updates the rows whose values changed and,
     by delete_mode, deletes, marks or keeps the keys the query no longer returns. The
     differences are written to a table of their own first, so the keys are checked on the rows
     the MERGE applies and the query is read once. The feed holds only real changes, and applying
     the same snapshot again changes nothing: a run that died after its commit is simply run
     again. --#}
{% materialization snapshot_mirror, default %}
  {%- set settings = dbt_tablestream._snapshot_mirror_settings() -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set columns = get_column_schema_from_query(compiled_code) | map(attribute='name') | list -%}
  {%- do dbt_tablestream._check_snapshot_mirror(settings, columns) -%}
  {%- set rebuild = existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
  {%- if not rebuild -%}
    {%- do dbt_tablestream.check_snapshot_mirror_columns(settings, columns, target_relation) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- if rebuild -%}
    {%- set bad_keys_sql = dbt_tablestream.snapshot_mirror_bad_keys_sql(compiled_code, settings.key_columns) -%}
    {%- do dbt_tablestream.check_snapshot_mirror_keys(settings, bad_keys_sql) -%}
    {%- set existing_relation = dbt_tablestream.existing_table(existing_relation) -%}
  {%- else -%}
    {%- set diff = dbt_tablestream._snapshot_mirror_diff_relation(target_relation) -%}
    {%- call statement('snapshot_mirror_diff') -%}
      {{ dbt_tablestream.snapshot_mirror_diff_table_sql(diff, target_relation, compiled_code, columns, settings) }}
    {%- endcall -%}
    {%- do dbt_tablestream.check_snapshot_mirror_keys(settings, dbt_tablestream.snapshot_mirror_bad_keys_sql(
          'select * from ' ~ diff, settings.key_columns, 'max(__tablestream_copies)'), diff) -%}
  {%- endif -%}
  {%- call statement('main', fetch_result=True) -%}
    {%- if rebuild -%}
      {{ dbt_tablestream.snapshot_mirror_build_sql(target_relation, compiled_code, settings) }}
    {%- else -%}
      {{ dbt_tablestream.snapshot_mirror_merge_sql(target_relation, diff, columns, settings) }}
    {%- endif -%}
  {%- endcall -%}
  {%- do dbt_tablestream.fault_point('after_target_commit') -%}
  {%- if not rebuild -%}{%- do adapter.drop_relation(diff) -%}{%- endif -%}
  {%- set counts = none if rebuild else dbt_tablestream._snapshot_mirror_merge_counts(load_result('main')) -%}
  {%- if counts is not none -%}
    {{ log("snapshot_mirror " ~ model.name ~ ": " ~ counts.inserted ~ " inserted, " ~ counts.updated ~ " updated, "
           ~ counts.deleted ~ " deleted; only the files holding them were rewritten", info=True) }}
  {%- endif -%}
  {%- do dbt_tablestream.apply_stream_model_features(target_relation, existing_relation, rebuild) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

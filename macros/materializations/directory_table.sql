{#-- directory_table: the files under `location` as a Delta table with change data feed
     (relative_path, url, size, last_modified_time, fingerprint). Each run applies the difference to
     the previous listing in one commit: a new file is inserted, a file whose size or modification
     time changed is updated, a vanished file is deleted. No difference, no commit. A stream on it
     (`ref_stream`) yields the file events. --#}
{% materialization directory_table, default %}
  {%- set settings = dbt_tablestream._validate_directory_table_config() -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set rebuild = existing_relation is none or existing_relation.is_view or should_full_refresh() -%}

  {{ run_hooks(pre_hooks) }}

  {%- do dbt_tablestream.existing_table(existing_relation) -%}
  {%- set synced = dbt_tablestream.sync_directory_table(target_relation, settings, rebuild) -%}
  {%- set changed = synced.inserted + synced.updated + synced.deleted -%}
  {%- set summary = "directory table " ~ target_relation.identifier ~ ": " ~ synced.files ~ " files under "
      ~ settings.location ~ ", " ~ synced.inserted ~ " new, " ~ synced.updated ~ " changed, " ~ synced.deleted
      ~ " removed" ~ ("; one commit" if synced.committed else "; nothing changed, no commit") -%}
  {%- set status = 'OK' if synced.committed else 'NO-OP' -%}
  {%- call noop_statement('main', status, status, changed) -%}{%- endcall -%}
  {{ log(summary, info=True) }}
  {%- do adapter.cache_added(target_relation) if existing_relation is none -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#-- A snapshot_mirror's configs and its snapshot's keys, checked before anything is written. --#}


{#-- The model's settings (_settings_from_configs, by the spec's entries for snapshot_mirror):
     {unique_key, delete_mode (as a stream_merge's), key_columns (unique_key as a list)}. --#}
{% macro _snapshot_mirror_settings() %}
  {%- do dbt_tablestream.stream_engine_check('the snapshot_mirror model ' ~ model.name) -%}
  {%- set subject = "Model " ~ model.name -%}
  {%- set configs = dbt_tablestream._raw_stream_configs(subject) -%}
  {{ return(dbt_tablestream._settings_from_configs(configs, subject, 'snapshot_mirror')) }}
{% endmacro %}


{#-- Refuses a snapshot whose rows the MERGE could not match one for one: a key column it lacks,
     and the columns the mirror adds under delete_mode soft. Its keys are checked by
     check_snapshot_mirror_keys. --#}
{% macro _check_snapshot_mirror(settings, columns) %}
  {%- set subject = "Model " ~ model.name ~ " (snapshot_mirror)" -%}
  {%- set lowered = columns | map('lower') | list -%}
  {%- set missing = settings.key_columns | map('lower') | reject('in', lowered) | list -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(subject ~ ": unique_key " ~ missing | join(', ') ~ " is not a column of the "
        ~ "snapshot (its columns: " ~ columns | join(', ') ~ "). Nothing was written.") }}
  {%- endif -%}
  {%- set reserved = ['_deleted', '_deleted_at'] | select('in', lowered) | list if settings.delete_mode == 'soft'
                     else [] -%}
  {%- if reserved -%}
    {{ exceptions.raise_compiler_error(subject ~ ": with delete_mode soft the mirror adds " ~ reserved | join(', ')
        ~ ", which the snapshot already has. Rename them in the query. Nothing was written.") }}
  {%- endif -%}
{% endmacro %}


{% macro check_snapshot_mirror_keys(settings, bad_keys_sql, diff=none) %}
  {{ return(adapter.dispatch('check_snapshot_mirror_keys', 'dbt_tablestream')(settings, bad_keys_sql, diff)) }}
{% endmacro %}


{#-- Refuses NULL or repeated keys, naming up to ten of them: `bad_keys_sql` lists them
     (snapshot_mirror_bad_keys_sql), over the query before the mirror is built, over the
     snapshot's differences (`diff`, dropped first) before a MERGE. --#}
{% macro spark__check_snapshot_mirror_keys(settings, bad_keys_sql, diff=none) %}
  {%- set rows = run_query(bad_keys_sql).rows -%}
  {%- if rows -%}
    {%- if diff is not none -%}{%- do adapter.drop_relation(diff) -%}{%- endif -%}
    {%- set listed = [] -%}
    {%- for row in rows -%}
      {%- set values = [] -%}
      {%- for key in settings.key_columns -%}
        {%- do values.append(key ~ '=' ~ (row[loop.index0] if row[loop.index0] is not none else 'NULL')) -%}
      {%- endfor -%}
      {%- do listed.append(values | join(', ') ~ ' (' ~ row['copies'] ~ ' rows)') -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ " (snapshot_mirror): the snapshot has keys that are "
        ~ "NULL or not unique, so its rows cannot be matched one for one with the mirror's (unique_key "
        ~ settings.key_columns | join(', ') ~ "): " ~ listed | join('; ')
        ~ (' (the first ten)' if rows | length >= 10 else '') ~ ". Nothing was written. Filter or deduplicate "
        ~ "them in the query.") }}
  {%- endif -%}
{% endmacro %}


{% macro snapshot_mirror_bad_keys_sql(sql, keys, copies='count(*)') %}
  {{ return(adapter.dispatch('snapshot_mirror_bad_keys_sql', 'dbt_tablestream')(sql, keys, copies)) }}
{% endmacro %}


{#-- The keys of `sql` that are NULL or appear more than once, with their row counts (`copies`),
     at most ten. `copies`: how a key's rows are counted, `count(*)` over the query, or
     `max(__tablestream_copies)` over its differences (snapshot_mirror_diff_sql). --#}
{% macro spark__snapshot_mirror_bad_keys_sql(sql, keys, copies='count(*)') %}
  {%- set quoted = [] -%}
  {%- set nulls = [] -%}
  {%- for key in keys -%}
    {%- do quoted.append(dbt_tablestream._sql_identifier(key)) -%}
    {%- do nulls.append(dbt_tablestream._sql_identifier(key) ~ ' is null') -%}
  {%- endfor -%}
  {{ return('select ' ~ quoted | join(', ') ~ ', ' ~ copies ~ ' as copies from (\n' ~ sql
      ~ '\n) as __tablestream_snapshot group by ' ~ quoted | join(', ') ~ ' having ' ~ copies ~ ' > 1 or '
      ~ nulls | join(' or ') ~ ' order by copies desc limit 10') }}
{% endmacro %}


{% macro check_snapshot_mirror_columns(settings, columns, target) %}
  {{ return(adapter.dispatch('check_snapshot_mirror_columns', 'dbt_tablestream')(settings, columns, target)) }}
{% endmacro %}


{#-- A column added to or removed from the snapshot after the mirror was built is refused: the
     mirror's feed would record a change of every row for it. --#}
{% macro spark__check_snapshot_mirror_columns(settings, columns, target) %}
  {%- set present = adapter.get_columns_in_relation(target) | map(attribute='name') | map('lower') | reject('in',
      ['_deleted', '_deleted_at']) | list -%}
  {%- set wanted = columns | map('lower') | list -%}
  {%- if present | sort != wanted | sort -%}
    {{ exceptions.raise_compiler_error("Model " ~ model.name ~ " (snapshot_mirror): the snapshot's columns ("
        ~ wanted | join(', ') ~ ") are not the mirror's (" ~ present | join(', ') ~ "). Nothing was written. Rebuild "
        ~ "the mirror with `dbt run --full-refresh -s " ~ model.name ~ "`.") }}
  {%- endif -%}
{% endmacro %}

{#-- The window (after, through] of a stream: checked against the source's log, then read. --#}


{#-- Checks the window and returns the relation its raw change rows are read from. --#}
{% macro register_stream_window(relation, stream, table_id) %}
  {{ return(adapter.dispatch('register_stream_window', 'dbt_tablestream')(relation, stream, table_id)) }}
{% endmacro %}


{#-- Refuses a window that cannot be read completely and exactly (DESIGN.md section 7), then
     returns the relation its changes are read from. --#}
{% macro spark__register_stream_window(relation, stream, table_id) %}
  {%- if not stream.snapshot -%}
    {%- set problem = dbt_tablestream.spark__window_problem(relation, stream, table_id, dbt_tablestream.stream_reset_remedy()) -%}
    {%- if problem is not none -%}{{ exceptions.raise_compiler_error(problem) }}{%- endif -%}
  {%- endif -%}
  {{ return(dbt_tablestream.spark__window_relation_sql(relation, stream)) }}
{% endmacro %}


{% macro default__register_stream_window(relation, stream, table_id) %}
  {{ dbt_tablestream.engine_not_supported('register_stream_window') }}
{% endmacro %}


{#-- The relation the window's raw changes are read from. `table_changes` bounds are inclusive and
     the end is explicit, so a commit landing while the model runs is left for the next window. --#}
{% macro spark__window_relation_sql(relation, stream) %}
  {%- if stream.snapshot -%}
    {%- set relation_sql -%}
(select *, 'insert' as _change_type, cast({{ stream.through }} as bigint) as _commit_version,
    cast('{{ stream.timestamp }}' as timestamp) as _commit_timestamp
  from {{ relation }} version as of {{ stream.through }}) as __tablestream_snapshot
    {%- endset -%}
    {{ return(relation_sql) }}
  {%- endif -%}
  {{ return("table_changes('" ~ (relation | string | replace("'", "\\'")) ~ "', " ~ (stream.after + 1) ~ ", " ~ stream.through ~ ")") }}
{% endmacro %}


{#-- Why the window (after, through] of the source cannot be read, or none. --#}
{% macro spark__window_problem(relation, stream, table_id, remedy, window_rows=none) %}
  {%- if table_id is not none and table_id != stream.source_table_id -%}
    {{ return("Stream " ~ stream.stream ~ ": the source " ~ stream.source ~ " was dropped and recreated, or replaced (Delta table id "
        ~ table_id ~ " is now " ~ stream.source_table_id ~ "), so its versions no longer continue the stream. " ~ remedy) }}
  {%- endif -%}
  {%- if stream.after > stream.through -%}
    {{ return("Stream " ~ stream.stream ~ ": its offset is version " ~ stream.after ~ " but the source " ~ stream.source
        ~ " is only at version " ~ stream.through ~ "; the source was recreated or restored. " ~ remedy) }}
  {%- endif -%}
  {%- if stream.after == stream.through -%}{{ return(none) }}{%- endif -%}
  {%- set window = window_rows if window_rows is not none else run_query(dbt_tablestream.spark__describe_history_sql(relation, stream.through - stream.after + 1)).rows -%}
  {%- set listed = [] -%}
  {%- for row in window -%}{%- do listed.append(row['version'] | int) -%}{%- endfor -%}
  {%- if (stream.after + 1) not in listed -%}
    {{ return("Stream " ~ stream.stream ~ " is stale: version " ~ (stream.after + 1) ~ " of " ~ stream.source
        ~ " is no longer in its Delta log (log retention, delta.logRetentionDuration), so the changes after the stream's offset "
        ~ stream.after ~ " cannot be read. " ~ remedy) }}
  {%- endif -%}
  {{ return(dbt_tablestream.spark__window_commits_problem(stream, window, remedy)) }}
{% endmacro %}


{#-- The window's commits, oldest first: every data commit had the change feed on (a setting
     changed inside the window is tracked from there), and none is older than what a later
     VACUUM in the window kept. Delta itself refuses such reads too, but later and less clearly. --#}
{% macro spark__window_commits_problem(stream, window_rows, remedy) %}
  {%- set data_operations = ['WRITE', 'MERGE', 'DELETE', 'UPDATE', 'STREAMING UPDATE', 'TRUNCATE', 'COPY INTO',
                             'CREATE TABLE AS SELECT', 'REPLACE TABLE AS SELECT', 'CREATE OR REPLACE TABLE AS SELECT', 'RESTORE'] -%}
  {%- set commits = [] -%}
  {%- for row in window_rows if (row['version'] | int) > stream.after and (row['version'] | int) <= stream.through -%}
    {%- set parameters = row['operationParameters'] | string -%}
    {%- set setting = modules.re.search('enableChangeDataFeed\\W+(true|false)', parameters, modules.re.IGNORECASE) -%}
    {%- do commits.append({
        'version': row['version'] | int, 'timestamp': row['timestamp'], 'operation': row['operation'] | upper,
        'feed': (setting.group(1) | lower == 'true') if setting else none,
        'retention': modules.re.search('specifiedRetentionMillis\\W+(\\d+)', parameters)
                     or modules.re.search('defaultRetentionMillis\\W+(\\d+)', parameters)}) -%}
  {%- endfor -%}
  {%- set commits = commits | sort(attribute='version') -%}
  {%- set toggles = commits | selectattr('feed', 'ne', none) | list -%}
  {%- set state = {'feed': not (toggles and toggles[0].feed)} -%}
  {%- for commit in commits -%}
    {%- if commit.feed is not none -%}
      {%- do state.update({'feed': commit.feed}) -%}
    {%- elif commit.operation in data_operations and not state.feed -%}
      {{ return("Stream " ~ stream.stream ~ ": the change data feed of " ~ stream.source ~ " was not enabled at version " ~ commit.version
          ~ ", inside the stream's window (" ~ stream.after ~ ", " ~ stream.through ~ "], so its changes were not recorded. "
          ~ "Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking --args '{relation: " ~ stream.source
          ~ "}'` and " ~ remedy[0] | lower ~ remedy[1:]) }}
    {%- endif -%}
    {%- if commit.operation == 'VACUUM START' and commit.retention -%}
      {%- set kept_from = commit.timestamp - modules.datetime.timedelta(milliseconds=commit.retention.group(1) | int) -%}
      {%- for older in commits if older.version < commit.version and older.operation in data_operations and older.timestamp < kept_from -%}
        {{ return("Stream " ~ stream.stream ~ " is stale: files of version " ~ older.version ~ " of " ~ stream.source
            ~ " were removed (VACUUM) or may have been: the VACUUM at version " ~ commit.version ~ " kept only files younger than "
            ~ ((commit.retention.group(1) | int) / 3600000) | round(2) ~ " hours, so the changes after the stream's offset "
            ~ stream.after ~ " cannot be read. Reading past them would silently drop changes. " ~ remedy) }}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- The remedy for a stream that can no longer continue from its offset. --#}
{% macro stream_reset_remedy() %}
  {{ return("Reset the stream with `dbt run --full-refresh -s " ~ model.name ~ "`: it rebuilds the target and starts the stream again from its start_at.") }}
{% endmacro %}

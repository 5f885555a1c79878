{#-- Test-only hooks at the steps of a stream run (window_pinned, before_target_commit,
     after_target_commit, after_offsets_append), armed only in a project that sets the var
     `tablestream_test_hooks` (the test suite's projects), never by the environment alone:
     DBT_TABLESTREAM_FAULT=<point> kills the process there, and <point>@<model> only in that
     model's run, so one process can leave the models run before it committed.
     <point>@<model>+<model>... kills it once every named model (running in parallel threads) has
     reached the point, so one kill leaves them all at that step.
     DBT_TABLESTREAM_PAUSE=<point>:<seconds> holds a run there, to line up concurrent runs; with
     DBT_TABLESTREAM_RELEASE=<directory>, only until a file in that directory holds a line with the
     model's name, so a test releases each model's pause when it is ready. --#}
{% macro fault_point(point) %}
  {%- if not dbt_tablestream._test_hooks_armed() -%}{{ return(none) }}{%- endif -%}
  {%- set pause = env_var('DBT_TABLESTREAM_PAUSE', '') -%}
  {%- if pause and pause.split(':')[0] == point -%}
    {{ log("tablestream test pause at " ~ point ~ " in " ~ model.name, info=True) }}
    {%- do adapter.dispatch('pause_point', 'dbt_tablestream')(point, pause.split(':')[1] | float) -%}
  {%- endif -%}
  {%- set fault = env_var('DBT_TABLESTREAM_FAULT', '').split('@') -%}
  {%- set models = fault[1].split('+') if fault | length > 1 else [] -%}
  {%- if fault[0] == point and (not models or model.name in models) -%}
    {{ return(adapter.dispatch('fault_point', 'dbt_tablestream')(point, models)) }}
  {%- endif -%}
{% endmacro %}


{#-- Whether this project arms the test hooks: the var `tablestream_test_hooks`, which only the test
     suite's projects set. --#}
{% macro _test_hooks_armed() %}
  {{ return(dbt_tablestream._stream_project_var('tablestream_test_hooks')) }}
{% endmacro %}


{% macro spark__pause_point(point, seconds) %}
  {%- set release = env_var('DBT_TABLESTREAM_RELEASE', '') -%}
  {%- if not release -%}
    {%- do run_query(dbt_tablestream.pause_sql(seconds)) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- for _ in range((seconds * 4) | int) -%}
    {%- set released = run_query('select count(*) from text.' ~ dbt_tablestream._sql_identifier(release)
        ~ ' where value = ' ~ dbt_tablestream._sql_string(model.name)) -%}
    {%- if released.rows[0][0] > 0 -%}{{ return(none) }}{%- endif -%}
    {%- do run_query(dbt_tablestream.pause_sql(0.25)) -%}
  {%- endfor -%}
{% endmacro %}


{% macro pause_sql(seconds) %}
  {{ return(adapter.dispatch('pause_sql', 'dbt_tablestream')(seconds)) }}
{% endmacro %}


{% macro spark__pause_sql(seconds) %}
  {{ return("select java_method('java.lang.Thread', 'sleep', cast(" ~ ((seconds * 1000) | int)
      ~ " as bigint)) as paused") }}
{% endmacro %}


{#-- Where the process cannot be killed from here (a cluster's client), the run stops with an
     error at the point: nothing after it runs. --#}
{% macro default__fault_point(point, models=[]) %}
  {{ exceptions.raise_compiler_error("tablestream test fault at " ~ point) }}
{% endmacro %}


{#-- The local adapter's dbt process dies at the point (SIGKILL), as a crash would kill it. --#}
{% macro tablestream__fault_point(point, models=[]) %}
  {%- do adapter.kill_for_test_fault(point, models, model.name) -%}
{% endmacro %}

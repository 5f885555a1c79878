{#-- Spark 4.2's CHANGES clause over Delta's changelog (docs/architecture.md, "Three ways to read
     changes"): what the session needs, and the read. --#}


{#-- Makes the session able to read `<table> CHANGES FROM ...`, or refuses before anything is
     written: Spark parses the clause from 4.2 on, Delta implements it from 4.4 on, behind a
     session setting that is off by default. --#}
{% macro prepare_changelog_session(stream_name) %}
  {{ return(adapter.dispatch('prepare_changelog_session', 'dbt_tablestream')(stream_name)) }}
{% endmacro %}


{% macro spark__prepare_changelog_session(stream_name) %}
  {%- set setting = 'spark.databricks.delta.changelogV2.enabled' -%}
  {%- set refusal = dbt_tablestream._protocol_step('session_refusal')(
      dbt_tablestream._stream_subject(stream_name) ~ ": stream_read: changelog", setting,
      "Use stream_read: table_changes (Delta's change data feed), or run on a cluster.") -%}
  {%- if refusal is not none -%}{{ exceptions.raise_compiler_error(refusal) }}{%- endif -%}
  {%- set spark_version = run_query('select version()').rows[0][0] | string -%}
  {%- set delta_value = run_query('set ' ~ setting).rows[0][1] | string | lower -%}
  {%- set problem = dbt_tablestream._changelog_session_problem(stream_name, spark_version, delta_value) -%}
  {%- if problem is not none -%}{{ exceptions.raise_compiler_error(problem) }}{%- endif -%}
  {%- if delta_value != 'true' -%}
    {%- call statement('enable_changelog') -%}set {{ setting }} = true{%- endcall -%}
  {%- endif -%}
{% endmacro %}


{#-- Why this session cannot read Delta's changelog, or none. `spark_version`: `select version()`
     ("4.2.0 <commit>"); `delta_value`: the session's value of the changelog setting, which Spark
     reports as <undefined> when no Delta on the cluster defines it (Delta before 4.4). --#}
{% macro _changelog_session_problem(stream_name, spark_version, delta_value) %}
  {%- set release = spark_version.split(' ')[0] -%}
  {%- set parts = (release ~ '.0.0').split('.') -%}
  {%- set too_old = [] -%}
  {%- if not (parts[0].isdigit() and parts[1].isdigit()) or (parts[0] | int, parts[1] | int) < (4, 2) -%}
    {%- do too_old.append('Spark is ' ~ release) -%}
  {%- endif -%}
  {%- if delta_value not in ['true', 'false'] -%}
    {%- do too_old.append('its Delta has no changelog reader'
        ~ ' (no spark.databricks.delta.changelogV2.enabled setting)') -%}
  {%- endif -%}
  {%- if not too_old -%}{{ return(none) }}{%- endif -%}
  {{ return(dbt_tablestream._stream_subject(stream_name) ~ ": stream_read: changelog needs Spark >= 4.2 and Delta >= "
      ~ "4.4 (Spark's CHANGES clause over Delta's changelog), but on this cluster " ~ too_old | join(' and ')
      ~ ". Nothing was written. Upgrade the cluster, or use stream_read: table_changes (Delta's change data feed).") }}
{% endmacro %}


{% macro changelog_relation_sql(relation, first, through, spark_net_changes) %}
  {{ return(adapter.dispatch('changelog_relation_sql', 'dbt_tablestream')(
      relation, first, through, spark_net_changes)) }}
{% endmacro %}


{#-- The window's changes through Delta's changelog: both bounds inclusive, like table_changes.
     Spark drops copy-on-write carry-overs and, with computeUpdates, pairs an update's delete and
     insert into the change data feed's update_preimage / update_postimage. With
     `spark_net_changes`, Spark also nets each row's changes over the window (by Delta's row id). --#}
{% macro spark__changelog_relation_sql(relation, first, through, spark_net_changes) %}
  {%- set options = ["computeUpdates = 'true'"] -%}
  {%- if spark_net_changes -%}{%- do options.insert(0, "deduplicationMode = 'netChanges'") -%}{%- endif -%}
  {{ return(relation ~ ' changes from version ' ~ first ~ ' to version ' ~ through ~ ' with (' ~ options | join(', ')
      ~ ')') }}
{% endmacro %}

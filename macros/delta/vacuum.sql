{#-- Delta's VACUUM, as SQL builders that run nothing. --#}


{% macro vacuum_sql(relation, retain_hours, dry_run=false) %}
  {{ return(adapter.dispatch('vacuum_sql', 'dbt_tablestream')(relation, retain_hours, dry_run)) }}
{% endmacro %}


{#-- Delta's grammar: VACUUM table [RETAIN n HOURS] [DRY RUN]. Delta rounds the hours to a whole
     number; a DRY RUN returns the paths it would delete. --#}
{% macro spark__vacuum_sql(relation, retain_hours, dry_run=false) %}
  {{ return('vacuum ' ~ dbt_tablestream._delta_table_name(relation) ~ ' retain ' ~ retain_hours ~ ' hours'
      ~ (' dry run' if dry_run else '')) }}
{% endmacro %}


{#-- Delta refuses a VACUUM whose retention is shorter than the table's
     delta.deletedFileRetentionDuration while this check is on. --#}
{% macro _vacuum_retention_check_setting() %}
  {{ return('spark.databricks.delta.retentionDurationCheck.enabled') }}
{% endmacro %}

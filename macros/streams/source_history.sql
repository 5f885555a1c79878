{#-- The source's history and file retention as the window checks read them: its commits
     (DESCRIBE HISTORY, read only as far back as a window needs) and the moment before which a
     VACUUM may have removed its files. --#}


{% macro _stream_window_commits(relation, stream, known=none) %}
  {%- if stream.snapshot or stream.after >= stream.through -%}{{ return(none) }}{%- endif -%}
  {%- set first = stream.after + 1 -%}
  {%- if known is not none and known.rows
      and (known.limit is none or dbt_tablestream._history_limit_to_reach(known.rows, first, known.limit) is none) -%}
    {#-- The rows history_since would read: from the newest down to the version before the window. --#}
    {%- set rows = [] -%}
    {%- for row in known.rows if (row['version'] | int) >= first - 1 -%}{%- do rows.append(row) -%}{%- endfor -%}
    {{ return(rows) }}
  {%- endif -%}
  {{ return(dbt_tablestream.history_since(relation, first, stream.through)) }}
{% endmacro %}


{% macro history_since(relation, first, through) %}
  {{ return(adapter.dispatch('history_since', 'dbt_tablestream')(relation, first, through)) }}
{% endmacro %}


{#-- The source's commits from version `first` on, newest first. DESCRIBE HISTORY counts from the
     newest commit, and commits landing after the window was pinned at `through` would push its
     first versions out of a LIMIT of the window's size (a false "stale"): the read grows until it
     reaches `first` or the start of the log. --#}
{% macro spark__history_since(relation, first, through) %}
  {%- set read = namespace(limit=through - first + 2, rows=[]) -%}
  {%- for attempt in range(10) if read.limit is not none -%}
    {%- set read.rows = run_query(dbt_tablestream.describe_history_sql(relation, read.limit)).rows -%}
    {%- set read.limit = dbt_tablestream._history_limit_to_reach(read.rows, first, read.limit) -%}
  {%- endfor -%}
  {{ return(read.rows) }}
{% endmacro %}


{#-- The LIMIT of the next DESCRIBE HISTORY read needed to reach version `first`, or none when
     `rows` (read with `limit`) already reach it or the start of the log. Every reader of a window's
     history uses it, the PySpark API included. --#}
{% macro _history_limit_to_reach(rows, first, limit) %}
  {%- set versions = [] -%}
  {%- for row in rows -%}{%- do versions.append(row['version'] | int) -%}{%- endfor -%}
  {%- if (versions | length) < limit or (versions | min) <= first -%}{{ return(none) }}{%- endif -%}
  {{ return((versions | max) - first + 1) }}
{% endmacro %}


{#-- How long the source keeps removed files before a VACUUM may delete them: its
     delta.deletedFileRetentionDuration, Delta's default when unset. --#}
{% macro _file_retention(table_properties) %}
  {{ return(table_properties.get('delta.deletedFileRetentionDuration', 'interval 1 week')) }}
{% endmacro %}


{% macro retained_from_sql(file_retention) %}
  {{ return(adapter.dispatch('retained_from_sql', 'dbt_tablestream')(file_retention)) }}
{% endmacro %}


{#-- The moment before which a VACUUM honouring `file_retention` may have removed files
     (retained_from: NULL if Delta could not parse the interval either), and the moment of asking
     (checked_at), on the session's clock like DESCRIBE HISTORY's timestamps. --#}
{% macro spark__retained_from_sql(file_retention) %}
  {{ return("select current_timestamp() - try_cast(" ~ dbt_tablestream._sql_string(file_retention) ~ " as interval) as "
      ~ "retained_from, current_timestamp() as checked_at") }}
{% endmacro %}

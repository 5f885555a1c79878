{#-- The offsets log's compaction: when a run compacts it, and the statement that does. --#}


{#-- Whether this run compacts (spark__stream_compaction_sql): every `tablestream_compact_every`-th
     run of any of the inputs, counting each input's rows in the offsets log. --#}
{% macro _stream_compaction_due(inputs) %}
  {%- set every = dbt_tablestream._stream_project_var('tablestream_compact_every') -%}
  {%- for input in inputs if every > 0 and input.runs is not none and (input.runs + 1) % every == 0 -%}
    {{ return(true) }}
  {%- endfor -%}
  {{ return(false) }}
{% endmacro %}


{% macro stream_compaction_sql(on) %}
  {{ return(adapter.dispatch('stream_compaction_sql', 'dbt_tablestream')(on)) }}
{% endmacro %}


{#-- A year of runs appends tens of thousands of small files to the offsets log and to a
     table_stream target, and every read of them would open each one. Every
     `tablestream_compact_every`-th run of a stream (counted in the offsets log;
     _stream_compaction_due) turns on Delta's auto-compaction for its write: after the commit,
     Delta bin-packs the table's files under 16 MB into files of up to 128 MB, in a commit of its
     own with dataChange = false, which the change feed and row tracking do not show as changes,
     so streams reading the table see nothing. Delta logs and ignores a compaction that fails (a
     concurrent one won), so the run's outcome never depends on it. minNumFiles 1: Delta counts
     small files in the driver's memory, blind to files other processes wrote, and the package
     has already decided that it is time. --#}
{% macro spark__stream_compaction_sql(on) %}
  {%- set statements = [] -%}
  {%- for key, value in dbt_tablestream._stream_compaction_settings().items() -%}
    {%- do statements.append(('set ' ~ key ~ ' = ' ~ value) if on else ('reset ' ~ key)) -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}


{#-- The session settings of Delta's auto-compaction, as spark__stream_compaction_sql makes them. --#}
{% macro _stream_compaction_settings() %}
  {{ return({'spark.databricks.delta.autoCompact.enabled': 'true',
      'spark.databricks.delta.autoCompact.minNumFiles': '1',
      'spark.databricks.delta.autoCompact.minFileSize': '16777216',
      'spark.databricks.delta.autoCompact.maxFileSize': '134217728'}) }}
{% endmacro %}


{% macro stream_compaction_properties() %}
  {{ return(adapter.dispatch('stream_compaction_properties', 'dbt_tablestream')()) }}
{% endmacro %}


{#-- The table properties the package sets on a table_stream target or an offsets log it creates
     (the protocol's _table_properties); a model's own tblproperties win. --#}
{% macro spark__stream_compaction_properties() %}
  {{ return(dbt_tablestream._protocol_step('table_properties')()) }}
{% endmacro %}

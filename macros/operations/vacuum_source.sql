{#-- VACUUM a stream source without stranding a stream: the retention becomes the larger of
     `retain_hours` (default: the table's delta.deletedFileRetentionDuration) and the age of the
     oldest commit a live stream on it has not consumed, so every file a stream's next window reads
     stays. `force: true` ignores the streams. `dry_run: true` lists and deletes nothing. A retention
     below the table's needs Delta's retention check off for the VACUUM, which a SQL warehouse
     refuses to set: there it is refused before any setting or VACUUM is sent. `format: json`
     prints the report (with its `messages`) as one JSON document instead of the lines.
     `dbt run-operation dbt_tablestream.vacuum_source --args '{relation: app.orders, retain_hours: 0}'` --#}
{% macro vacuum_source(relation, retain_hours=none, dry_run=false, force=false, schemas=none, format='text') %}
  {%- do dbt_tablestream.stream_engine_check('vacuum_source') -%}
  {{ return(adapter.dispatch('vacuum_source', 'dbt_tablestream')(
      relation, retain_hours, dry_run, force, schemas, format)) }}
{% endmacro %}


{% macro spark__vacuum_source(relation, retain_hours=none, dry_run=false, force=false, schemas=none, format='text') %}
  {%- set messages = [] -%}
  {%- if retain_hours is not none and (retain_hours is not number or retain_hours < 0 or retain_hours is boolean) -%}
    {{ exceptions.raise_compiler_error("vacuum_source on " ~ relation ~ ": retain_hours must be a number of hours, "
        ~ "0 or more, got '" ~ retain_hours ~ "'. Nothing was vacuumed.") }}
  {%- endif -%}
  {%- for flag in [('dry_run', dry_run), ('force', force)] if flag[1] is not boolean -%}
    {{ exceptions.raise_compiler_error("vacuum_source on " ~ relation ~ ": " ~ flag[0] ~ " must be true or false, got '"
        ~ flag[1] ~ "'. Nothing was vacuumed.") }}
  {%- endfor -%}
  {%- set source = dbt_tablestream._parse_relation(relation) -%}
  {%- if adapter.get_relation(source.database, source.schema, source.identifier) is none -%}
    {{ exceptions.raise_compiler_error("vacuum_source: no table " ~ relation ~ ". Pass the source as `schema.table`. "
        ~ "Nothing was vacuumed.") }}
  {%- endif -%}
  {%- set detail = run_query(dbt_tablestream.describe_detail_sql(source)).rows[0] -%}
  {%- if (detail['format'] | lower) != 'delta' -%}
    {{ exceptions.raise_compiler_error("vacuum_source: " ~ relation ~ " is a " ~ detail['format'] ~ " table; VACUUM "
        ~ "needs a Delta table. Nothing was vacuumed.") }}
  {%- endif -%}
  {%- set properties = {} -%}
  {%- for property in run_query(dbt_tablestream.table_properties_sql(source)).rows -%}
    {%- do properties.update({property[0]: property[1]}) -%}
  {%- endfor -%}
  {%- set clock = run_query(dbt_tablestream.retained_from_sql(dbt_tablestream._file_retention(properties))).rows[0] -%}
  {%- set table_hours = ((clock['checked_at'] - clock['retained_from']).total_seconds() / 3600)
                        if clock['retained_from'] is not none else 168 -%}
  {%- set requested = retain_hours if retain_hours is not none else table_hours -%}
  {%- set requested_text = (requested | int) if requested == (requested | int) else requested | round(1) -%}
  {%- set plan = dbt_tablestream.vacuum_retention_plan(source, detail['id'], requested, clock['checked_at'], force,
                                                       schemas) -%}
  {%- set retention = plan.retain_hours -%}
  {%- for line in plan.notes -%}{%- do dbt_tablestream._operation_message(messages, line, format) -%}{%- endfor -%}
  {%- set check = dbt_tablestream._vacuum_retention_check_setting() -%}
  {%- set check_was = none -%}
  {%- if retention < table_hours -%}
    {%- if dbt_tablestream._session_settings_refused() -%}
      {#-- Delta checks a DRY RUN's retention too. Lowering the table's retention instead would not
           be a remedy: Delta refuses a change feed read of versions older than it, VACUUM or not,
           so every stream lagging longer would be stale. --#}
      {%- set table_whole_hours = table_hours | round(0, 'ceil') | int -%}
      {{ exceptions.raise_compiler_error("vacuum_source on " ~ relation ~ ": retention " ~ retention
          ~ " hours is below " ~ relation ~ "'s delta.deletedFileRetentionDuration (" ~ table_hours | round(1)
          ~ " hours). Delta refuses such a VACUUM unless the session sets " ~ check ~ " to false, and this connection "
          ~ "(a Databricks SQL warehouse) may not set it. Nothing was vacuumed. Pass retain_hours " ~ table_whole_hours
          ~ " or more, or run it from a cluster, whose session may set it.") }}
    {%- endif -%}
    {#-- The check guards readers Delta cannot see; the streams here are accounted for, and the
         retention below the table's was asked for explicitly. --#}
    {%- set check_was = run_query('set ' ~ check).rows[0][1] -%}
    {%- do run_query('set ' ~ check ~ ' = false') -%}
    {%- set message = "retention " ~ retention ~ " hours is below " ~ relation
        ~ "'s delta.deletedFileRetentionDuration (" ~ table_hours | round(1) ~ " hours): Delta's retention check is "
        ~ "off for this VACUUM, as asked." -%}
    {%- do dbt_tablestream._operation_message(messages, message, format) -%}
  {%- endif -%}
  {%- set report = {'relation': relation | string, 'retain_hours': retention, 'requested_hours': requested,
                    'dry_run': dry_run, 'kept_files': none, 'files_to_delete': none, 'streams': plan.streams} -%}
  {%- set to_delete = [] -%}
  {%- if plan.protecting or dry_run -%}
    {%- for row in run_query(dbt_tablestream.vacuum_sql(source, retention, dry_run=true)).rows -%}
      {%- do to_delete.append(row[0]) -%}
    {%- endfor -%}
    {%- do report.update({'files_to_delete': to_delete | length}) -%}
  {%- endif -%}
  {%- if plan.protecting -%}
    {#-- A dry run lists directories too, and only where it deletes something under them: what the
         asked-for retention would delete that this one keeps are files. --#}
    {%- set kept = [] -%}
    {%- set requested_sql = dbt_tablestream.vacuum_sql(source, (requested | round(0, 'ceil') | int), dry_run=true) -%}
    {%- for row in run_query(requested_sql).rows if row[0] not in to_delete -%}
      {%- do kept.append(row[0]) -%}
    {%- endfor -%}
    {%- do report.update({'kept_files': kept | length}) -%}
    {%- set oldest = plan.protecting[0] -%}
    {%- set message = "kept " ~ report.kept_files ~ " files for stream " ~ oldest.stream ~ ", offset "
        ~ oldest.offset_version ~ ", " ~ dbt_tablestream._format_duration(oldest.behind_seconds) ~ " behind (retention "
        ~ retention ~ " hours instead of " ~ requested_text ~ ")" -%}
    {%- do dbt_tablestream._operation_message(messages, message, format) -%}
    {%- for other in plan.protecting[1:] -%}
      {%- set message = "  also kept for stream " ~ other.stream ~ ", offset " ~ other.offset_version ~ ", "
          ~ dbt_tablestream._format_duration(other.behind_seconds) ~ " behind" -%}
      {%- do dbt_tablestream._operation_message(messages, message, format) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if dry_run -%}
    {%- set message = "dry run: VACUUM " ~ relation ~ " RETAIN " ~ retention ~ " HOURS would delete "
        ~ report.files_to_delete ~ " files and directories; nothing was deleted." -%}
    {%- do dbt_tablestream._operation_message(messages, message, format) -%}
  {%- else -%}
    {%- do run_query(dbt_tablestream.vacuum_sql(source, retention)) -%}
    {%- set deleted = (": deleted " ~ report.files_to_delete ~ " files and directories")
                      if report.files_to_delete is not none else "" -%}
    {%- set message = "vacuumed " ~ relation ~ " with RETAIN " ~ retention ~ " HOURS" ~ deleted ~ "." -%}
    {%- do dbt_tablestream._operation_message(messages, message, format) -%}
  {%- endif -%}
  {%- if check_was is not none -%}{%- do run_query('set ' ~ check ~ ' = ' ~ check_was) -%}{%- endif -%}
  {%- do report.update({'messages': messages}) -%}
  {%- if format == 'json' -%}{{ print(tojson(report)) }}{%- endif -%}
  {{ return(report) }}
{% endmacro %}


{% macro vacuum_retention_plan(source, table_id, requested, now, force, schemas) %}
  {{ return(adapter.dispatch('vacuum_retention_plan', 'dbt_tablestream')(
      source, table_id, requested, now, force, schemas)) }}
{% endmacro %}


{#-- The retention that keeps every live stream's next window readable: for each stream on the
     source (same table id, an offset, behind the latest version), the age of its oldest
     unconsumed commit, rounded up to the hour, plus an hour for files written before their commit
     landed. Returns retain_hours, the streams (oldest first), those the retention protects beyond
     `requested`, and notes for streams that cannot be protected. --#}
{% macro spark__vacuum_retention_plan(source, table_id, requested, now, force, schemas) %}
  {%- set streams = [] -%}
  {%- for position in dbt_tablestream._streams_reading(source, table_id, schemas) -%}
    {%- do streams.append({'stream': position.stream_name, 'offset_version': position.to_version,
                           'target': position.target}) -%}
  {%- endfor -%}
  {%- set plan = {'retain_hours': requested | round(0, 'ceil') | int, 'streams': [], 'protecting': [], 'notes': []} -%}
  {%- if not streams -%}
    {%- do plan.notes.append("no live stream reads " ~ source ~ ": nothing to keep for streams.") -%}
    {{ return(plan) }}
  {%- endif -%}
  {%- set latest = run_query(dbt_tablestream.describe_history_sql(source, 1)).rows[0]['version'] | int -%}
  {%- set behind = streams | selectattr('offset_version', 'lt', latest) | list -%}
  {%- set times = {} -%}
  {%- if behind -%}
    {%- set oldest_offset = behind | map(attribute='offset_version') | min -%}
    {%- for commit in dbt_tablestream.history_since(source, oldest_offset + 1, latest) -%}
      {%- do times.update({commit['version'] | int: commit['timestamp']}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- for reader in streams -%}
    {%- set first = times.get(reader.offset_version + 1) if reader.offset_version < latest else none -%}
    {%- set seconds = (now - first).total_seconds() if first is not none else 0 -%}
    {%- if reader.offset_version < latest and first is none -%}
      {%- do plan.notes.append("stream " ~ reader.stream ~ " (offset " ~ reader.offset_version ~ "): the log of "
          ~ source ~ " no longer holds version " ~ (reader.offset_version + 1)
          ~ ", so it is stale already; nothing is kept for it.") -%}
    {%- endif -%}
    {%- do plan.streams.append(dict(reader, behind_seconds=[seconds, 0] | max,
                                    needs_hours=(([seconds, 0] | max) / 3600) | round(0, 'ceil') | int + 1
                                                if first is not none else 0)) -%}
  {%- endfor -%}
  {%- set ordered = plan.streams | sort(attribute='needs_hours', reverse=true) | list -%}
  {%- do plan.update({'streams': ordered}) -%}
  {%- if force -%}
    {%- for stream in ordered if stream.needs_hours > plan.retain_hours -%}
      {%- do plan.notes.append("--force: stream " ~ stream.stream ~ " (offset " ~ stream.offset_version ~ ", "
          ~ dbt_tablestream._format_duration(stream.behind_seconds) ~ " behind) may go stale; its next run will "
          ~ "say so.") -%}
    {%- endfor -%}
    {{ return(plan) }}
  {%- endif -%}
  {%- do plan.update({'protecting': ordered | selectattr('needs_hours', 'gt', plan.retain_hours) | list}) -%}
  {%- if plan.protecting -%}
    {%- do plan.update({'retain_hours': plan.protecting[0].needs_hours}) -%}
  {%- endif -%}
  {{ return(plan) }}
{% endmacro %}


{#-- The latest offsets-log rows, in the schemas given or every schema with an offsets log, of the
     live streams reading `source` (the same table: its Delta table id). --#}
{% macro _streams_reading(source, table_id, schemas=none) %}
  {%- set listed = ([schemas] if schemas is string else schemas) if schemas is not none
                   else dbt_tablestream.schemas_with_offsets_log() -%}
  {%- set readers = [] -%}
  {%- for schema in listed -%}
    {%- for position in dbt_tablestream.stream_positions(schema) if position.to_version is not none
          and position.source_table_id == table_id -%}
      {%- set read = dbt_tablestream._parse_relation(position.source) -%}
      {%- if (read.schema | lower) == (source.schema | lower)
          and (read.identifier | lower) == (source.identifier | lower) -%}
        {%- do readers.append(position) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(readers) }}
{% endmacro %}


{% macro schemas_with_offsets_log() %}
  {{ return(adapter.dispatch('schemas_with_offsets_log', 'dbt_tablestream')()) }}
{% endmacro %}


{#-- Every schema of the catalog that holds an offsets log. --#}
{% macro spark__schemas_with_offsets_log() %}
  {%- set found = [] -%}
  {%- set name = dbt_tablestream._offsets_relation(target.schema).identifier -%}
  {%- for row in run_query('show schemas').rows -%}
    {%- set tables_sql = 'show tables in ' ~ dbt_tablestream._sql_identifier(row[0])
                         ~ ' like ' ~ dbt_tablestream._sql_string(name) -%}
    {%- if run_query(tables_sql).rows -%}
      {%- do found.append(row[0]) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{#-- Records an operation's message, and prints it unless the operation prints JSON instead. --#}
{% macro _operation_message(messages, message, format) %}
  {%- do messages.append(message) -%}
  {%- if format != 'json' -%}{{ print(message) }}{%- endif -%}
{% endmacro %}

{#-- What the stream generic tests share: the streams writing into a model, as failing rows. --#}

{% macro _stream_test_failures(model, check, max_versions=none, max_seconds=none, warn_within=none) %}
  {%- set warn_seconds = dbt_tablestream._seconds_of(warn_within, 'warn_within') -%}
  {%- set no_rows = "select cast(null as string) as stream_name, cast(null as string) as problem,"
                    ~ " cast(null as string) as severity where 1 = 0" -%}
  {%- if not execute -%}{{ return(no_rows) }}{%- endif -%}
  {%- set failures = [] -%}
  {%- set target = model.schema ~ '.' ~ model.identifier -%}
  {%- set positions = dbt_tablestream.stream_positions(model.schema) | selectattr('target', 'equalto', target)
                      | list -%}
  {%- if not positions -%}
    {%- do failures.append(['(none)', 'no stream writes into ' ~ target ~ ' yet: run its model first']) -%}
  {%- endif -%}
  {%- for position in positions -%}
    {%- set status = dbt_tablestream._stream_status(position, lag_only=(check == 'lag')) -%}
    {%- if check == 'stale' and status.stale -%}
      {%- do failures.append([status.stream_name, status.problem]) -%}
    {%- elif check == 'stale' and warn_seconds is not none and status.at_risk_in_seconds is not none
             and status.at_risk_in_seconds < warn_seconds -%}
      {%- do failures.append([status.stream_name, 'goes stale from ' ~ status.at_risk_from ~ ' (in '
          ~ dbt_tablestream._format_duration([status.at_risk_in_seconds, 0] | max) ~ ', within warn_within '
          ~ dbt_tablestream._format_duration(warn_seconds) ~ ') if it is not run: its oldest unconsumed change of '
          ~ status.source ~ ' then passes the source''s file retention. Run ' ~ (status.target.split('.') | last)
          ~ ' before then, or raise the source''s delta.deletedFileRetentionDuration.', 'warn']) -%}
    {%- elif check == 'lag' -%}
      {%- if max_versions is not none and (status.lag_versions is none or status.lag_versions > max_versions) -%}
        {%- do failures.append([status.stream_name, status.lag_versions ~ ' versions behind ' ~ status.source
                                ~ ' (at most ' ~ max_versions ~ ')']) -%}
      {%- endif -%}
      {%- if max_seconds is not none and (status.lag_seconds is none or status.lag_seconds > max_seconds) -%}
        {%- do failures.append([status.stream_name, dbt_tablestream._format_duration(status.lag_seconds) ~ ' behind '
                                ~ status.source ~ ' (at most ' ~ dbt_tablestream._format_duration(max_seconds)
                                ~ ')']) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not failures -%}{{ return(no_rows) }}{%- endif -%}
  {%- set selects = [] -%}
  {%- for failure in failures -%}
    {%- do selects.append('select ' ~ dbt_tablestream._sql_string(failure[0]) ~ ' as stream_name, '
        ~ dbt_tablestream._sql_string(failure[1]) ~ ' as problem, '
        ~ dbt_tablestream._sql_string(failure[2] if failure | length > 2 else 'error') ~ ' as severity') -%}
  {%- endfor -%}
  {{ return(selects | join('\nunion all\n')) }}
{% endmacro %}


{#-- A duration as seconds: a number, or '<n> second(s)|minute(s)|hour(s)|day(s)'; `name` is the
     setting's, for the error. --#}
{% macro _seconds_of(age, name='max_age') %}
  {%- if age is none or age is number -%}{{ return(age) }}{%- endif -%}
  {%- set match = modules.re.fullmatch('\\s*(\\d+)\\s*(second|minute|hour|day)s?\\s*', age | string) -%}
  {%- if not match -%}
    {{ exceptions.raise_compiler_error(name ~ " must be seconds or '<n> seconds|minutes|hours|days', got '"
        ~ age ~ "'.") }}
  {%- endif -%}
  {{ return((match.group(1) | int) * {'second': 1, 'minute': 60, 'hour': 3600, 'day': 86400}[match.group(2)]) }}
{% endmacro %}


{% macro mirrors_source_sql(model) %}
  {{ return(adapter.dispatch('mirrors_source_sql', 'dbt_tablestream')(model)) }}
{% endmacro %}


{#-- The mirrors_source check: source at the offset version EXCEPT ALL target, both ways. --#}
{% macro spark__mirrors_source_sql(model) %}
  {%- set target = model.schema ~ '.' ~ model.identifier -%}
  {%- set positions = dbt_tablestream.stream_positions(model.schema) | selectattr('target', 'equalto', target)
                      | list -%}
  {%- if positions | length != 1 or positions[0].to_version is none -%}
    {{ exceptions.raise_compiler_error(
        "mirrors_source on " ~ target ~ ": it needs exactly one stream with an offset writing into the model, found "
        ~ positions | length ~ ". Run the stream_merge model first.") }}
  {%- endif -%}
  {%- set position = positions[0] -%}
  {%- set source = dbt_tablestream._parse_relation(position.source) -%}
  {%- set source_columns = adapter.get_columns_in_relation(source) | map(attribute='name') | map('lower') | list -%}
  {%- set target_columns = adapter.get_columns_in_relation(model) | map(attribute='name') | list -%}
  {%- set shared = [] -%}
  {%- for column in target_columns if column | lower in source_columns -%}
    {%- do shared.append(dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- set settings = dbt_tablestream._settings_from_configs({}, 'mirrors_source on ' ~ target, none) -%}
  {%- set snapshot = dbt_tablestream._stream_input(settings, {
      'stream': position.stream_name, 'epoch': position.epoch, 'source': position.source,
      'source_table_id': position.source_table_id, 'after': position.to_version - 1, 'through': position.to_version,
      'snapshot': true, 'timestamp': position.committed_at,
      'view': '__tablestream_mirror__' ~ position.stream_name ~ '__' ~ position.to_version}) -%}
  {%- set at_offset = dbt_tablestream._register_stream_window(source, snapshot, none) -%}
  {%- set soft = '_deleted' in target_columns -%}
  with source_rows as (
    select {{ shared | join(', ') }} from {{ at_offset }}
  ), target_rows as (
    select {{ shared | join(', ') }} from {{ model }}{% if soft %} where not _deleted{% endif %}
  )
  select 'missing from target' as difference, *
  from (select * from source_rows except all select * from target_rows) as __missing
  union all
  select 'not in source' as difference, *
  from (select * from target_rows except all select * from source_rows) as __extra
{% endmacro %}

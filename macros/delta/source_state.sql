{#-- What a stream needs of its source before it reads: latest version, table id, and whether
     the source records what `read` reads (docs/architecture.md, "Three ways to read changes"). --#}


{#-- `recent`: how many of the newest commits to read with the latest one (a continuing stream's
     window is usually among them, _stream_window_commits); the whole history is read instead when
     start_at earliest or a timestamp needs it. The rows read are returned as `history`
     ({rows, limit}: limit none when they are the whole history). --#}
{% macro stream_source_state(relation, stream_name, at_timestamp, want_earliest, read='table_changes', recent=1) %}
  {{ return(adapter.dispatch('stream_source_state', 'dbt_tablestream')(
      relation, stream_name, at_timestamp, want_earliest, read, recent)) }}
{% endmacro %}


{#-- The table property that makes a source readable by `read`: the change data feed for
     table_changes, row tracking (the row identity of Delta's changelog) for changelog; none for
     delta_log, which reads the files every commit lists. --#}
{% macro _stream_tracking_property(read) %}
  {%- if read == 'delta_log' -%}{{ return(none) }}{%- endif -%}
  {{ return('delta.enableRowTracking' if read == 'changelog' else 'delta.enableChangeDataFeed') }}
{% endmacro %}


{#-- Two statements: DESCRIBE DETAIL (the table id, format, location, partitioning and, in its
     `properties`, every table property) and one DESCRIBE HISTORY (the latest version, and the
     commits a window check needs). --#}
{% macro spark__stream_source_state(relation, stream_name, at_timestamp, want_earliest, read='table_changes',
                                    recent=1) %}
  {%- set source = dbt_tablestream._stream_source_name(relation) -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream_name) ~ ": the source " ~ source ~ " does not exist. Create it, or "
        ~ "point the model at the right source.") }}
  {%- endif -%}
  {%- set detail = run_query(dbt_tablestream.describe_detail_sql(relation)).rows[0] -%}
  {%- set whole = want_earliest or at_timestamp is not none -%}
  {%- set limit = none if whole else [recent | int, 1] | max -%}
  {%- set history = run_query(dbt_tablestream.describe_history_sql(relation, limit)).rows -%}
  {#-- A connection whose map text is not JSON gets the properties from SHOW TBLPROPERTIES. --#}
  {%- set properties = dbt_tablestream._described_map(detail['properties']) -%}
  {%- if properties is none -%}
    {%- set properties = {} -%}
    {%- for row in run_query(dbt_tablestream.table_properties_sql(relation)).rows -%}
      {%- do properties.update({row[0]: row[1]}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set state = dbt_tablestream._stream_source_state_of(stream_name, source, detail, history[0], properties,
      history if whole else [], read) -%}
  {%- do state.update({'history': {'rows': history, 'limit': limit}}) -%}
  {%- set version_at_timestamp = none -%}
  {%- if at_timestamp is not none -%}
    {%- set moment = run_query(dbt_tablestream.timestamp_sql(at_timestamp)).rows[0][0] -%}
    {%- if moment is none -%}
      {{ exceptions.raise_compiler_error(
          dbt_tablestream._stream_subject(stream_name) ~ ": start_at timestamp '" ~ at_timestamp ~ "' is not ISO-8601 "
          ~ "(e.g. '2024-01-15T10:00:00Z').") }}
    {%- endif -%}
    {%- set candidates = [] -%}
    {%- for row in history if row['timestamp'] <= moment -%}
      {%- do candidates.append(row['version'] | int) -%}
    {%- endfor -%}
    {%- if not candidates -%}
      {{ exceptions.raise_compiler_error(
          dbt_tablestream._stream_subject(stream_name) ~ ": the source " ~ source ~ " has no version "
          ~ "committed at or before " ~ at_timestamp ~ ". Use a later start_at timestamp, or start_at: earliest.") }}
    {%- endif -%}
    {%- set version_at_timestamp = candidates | max -%}
  {%- endif -%}
  {%- do state.update({'version_at_timestamp': version_at_timestamp}) -%}
  {{ return(state) }}
{% endmacro %}


{#-- The source's state from what was read of it: its `describe detail` row, its latest history
     row, its table properties and (for start_at earliest) its history, newest first. Refuses a
     source that is not Delta. Pure: the PySpark API renders it with its own reads.
     `earliest_change_version`: tracking (_stream_tracking_property) is on now, and has been since
     the newest commit that set it, or since the oldest commit still in the log; none when
     tracking is off or no history was read. --#}
{% macro _stream_source_state_of(stream_name, source, detail, latest, properties, history, read='table_changes') %}
  {%- if (detail['format'] | lower) != 'delta' -%}
    {{ exceptions.raise_compiler_error(
        dbt_tablestream._stream_subject(stream_name) ~ ": the source " ~ source ~ " is a " ~ detail['format']
        ~ " table, not Delta, so it has no change feed. Convert it with `CONVERT TO DELTA " ~ source
        ~ "` or stream a Delta table.") }}
  {%- endif -%}
  {%- set tracking = dbt_tablestream._stream_tracking_property(read) -%}
  {%- set tracked = tracking is none or (properties.get(tracking, 'false') | string | lower) == 'true' -%}
  {%- set earliest = none -%}
  {%- if tracked and history -%}
    {%- set found = {'version': history[-1]['version'] | int} -%}
    {%- for row in history if tracking is not none and tracking in (row['operationParameters'] | string) -%}
      {%- if loop.first -%}{%- do found.update({'version': row['version'] | int}) -%}{%- endif -%}
    {%- endfor -%}
    {%- set earliest = found.version -%}
  {%- endif -%}
  {{ return({
      'latest_version': latest['version'] | int,
      'table_id': detail['id'],
      'latest_timestamp': latest['timestamp'] | string,
      'tracked': tracked,
      'file_retention': dbt_tablestream._file_retention(properties),
      'files': {'location': detail.get('location'),
                'partition_columns': dbt_tablestream._listed_names(detail.get('partitionColumns')),
                'column_mapping': properties.get('delta.columnMapping.mode', 'none'),
                'feed_on': (properties.get('delta.enableChangeDataFeed', 'false') | string | lower) == 'true',
                'type_widening': (properties.get('delta.enableTypeWidening', 'false') | string | lower) == 'true'
                  or 'typewidening' in dbt_tablestream._listed_names(detail.get('tableFeatures')) | join(' ') | lower},
      'earliest_change_version': earliest,
      'version_at_timestamp': none,
  }) }}
{% endmacro %}


{#-- A map as a connection returns a map column: a mapping, a list of [key, value] pairs, or
     their JSON text (dbt renders a row's containers as JSON); none for anything else. --#}
{% macro _described_map(value) %}
  {%- set parsed = fromjson(value) if value is string else value -%}
  {%- if parsed is mapping -%}{{ return(dict(parsed)) }}{%- endif -%}
  {%- if parsed is none or parsed is string or parsed is not iterable -%}{{ return(none) }}{%- endif -%}
  {%- set pairs = {} -%}
  {%- for pair in parsed if pair is sequence and pair is not string and pair | length == 2 -%}
    {%- do pairs.update({pair[0]: pair[1]}) -%}
  {%- endfor -%}
  {{ return(pairs if pairs | length == parsed | length else none) }}
{% endmacro %}


{#-- A list of names as a connection returns an array column: a list, or its text
     (`["a", "b"]`, `['a']`, `[a, b]`, `[]`). --#}
{% macro _listed_names(value) %}
  {%- if value is none -%}{{ return([]) }}{%- endif -%}
  {%- if value is string -%}{{ return(modules.re.findall('[^\\[\\]\'",\\s]+', value)) }}{%- endif -%}
  {{ return(value | list) }}
{% endmacro %}

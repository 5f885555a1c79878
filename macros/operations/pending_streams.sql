{#-- Which stream models have work to do: their source committed data changes past their offset.
     `dbt run-operation dbt_tablestream.pending_streams [--args '{schema: analytics, format: json}']`
     prints one dbt selector a line (`<model>+`: the model and everything downstream), for
     `dbt build --select`; `tablestream pending` does the same from the Delta logs on the local profile. --#}
{% macro pending_streams(schema=none, format='lines') %}
  {%- do dbt_tablestream.stream_engine_check('pending_streams') -%}
  {%- if format not in ['lines', 'json'] -%}
    {{ exceptions.raise_compiler_error("pending_streams: format must be one of lines, json; got '" ~ format ~ "'.") }}
  {%- endif -%}
  {%- set models = dbt_tablestream._stream_models_by_target() -%}
  {%- set schemas = dbt_tablestream._stream_offsets_schemas(schema) -%}
  {%- set pending = [] -%}
  {%- set seen = [] -%}
  {%- for each_schema in schemas -%}
    {%- for position in dbt_tablestream.stream_positions(each_schema) -%}
      {%- do seen.append(position.target | lower) -%}
      {%- set reason = dbt_tablestream._stream_pending_reason(position,
                                                              dbt_tablestream.pending_source_state(position)) -%}
      {%- if reason is not none -%}
        {%- set model = models.get(position.target | lower) -%}
        {%- set model_name = model.name if model else position.target.split('.') | last -%}
        {%- do pending.append(dbt_tablestream._pending_entry(position, model_name, reason)) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for key, model in models.items() if key not in seen and (not schema or model.schema == schema) -%}
    {%- do pending.append(dbt_tablestream._pending_entry(none, model.name)) -%}
  {%- endfor -%}
  {%- if format == 'json' -%}
    {{ print(tojson(pending)) }}
  {%- else -%}
    {%- set selectors = [] -%}
    {%- for entry in pending if entry.selector not in selectors -%}
      {%- do selectors.append(entry.selector) -%}
    {%- endfor -%}
    {%- if selectors -%}{{ print(selectors | join('\n')) }}{%- endif -%}
  {%- endif -%}
  {{ return(pending) }}
{% endmacro %}


{#-- The project's stream models by their target (`schema.identifier`, lower case). --#}
{% macro _stream_models_by_target() %}
  {%- set models = {} -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model'
        and node.config.materialized in dbt_tablestream._stream_materializations() -%}
    {%- set target_name = (node.schema ~ '.' ~ (node.alias or node.name)) | lower -%}
    {%- do models.update({target_name: {'name': node.name, 'schema': node.schema}}) -%}
  {%- endfor -%}
  {{ return(models) }}
{% endmacro %}


{#-- What `pending_streams` and `tablestream pending --json` report for one pending stream model;
     with no position (and no reason), a stream model that never ran. --#}
{% macro _pending_entry(position, model_name, reason=none) %}
  {%- if position is none -%}
    {{ return({'model': model_name, 'selector': model_name ~ '+', 'stream': none, 'source': none,
               'offset_version': none, 'source_version': none,
               'reason': 'never run: its first run starts the stream'}) }}
  {%- endif -%}
  {{ return({'model': model_name, 'selector': model_name ~ '+', 'stream': position.stream_name,
             'source': position.source, 'offset_version': position.to_version,
             'source_version': reason.source_version, 'reason': reason.reason}) }}
{% endmacro %}


{#-- Why a stream's model has work to do, or none when its next run would read an empty window.
     `source`: what the source's log says (pending_source_state): exists, table_id, version, and
     `commits`, the versions after the offset with their operation (all of them, or the log's
     oldest retained onward). A stream whose next run would refuse (source gone, recreated, history
     cleaned) is pending too: its run says what is wrong and what to do. --#}
{% macro _stream_pending_reason(position, source) %}
  {%- set offset = position.to_version -%}
  {%- if not source.exists -%}
    {{ return({'source_version': none,
               'reason': 'the source ' ~ position.source ~ ' does not exist: the run refuses and says what to do'}) }}
  {%- endif -%}
  {%- set latest = source.version -%}
  {%- if offset is none -%}
    {{ return({'source_version': latest, 'reason': 'reset: its next run starts again from start_at'}) }}
  {%- endif -%}
  {%- if source.table_id != position.source_table_id or latest < offset -%}
    {{ return({'source_version': latest,
               'reason': 'the source ' ~ position.source
                         ~ ' was recreated or restored: the run refuses and says what to do'}) }}
  {%- endif -%}
  {%- if latest == offset -%}{{ return(none) }}{%- endif -%}
  {%- set versions = [] -%}
  {%- set data_commits = [] -%}
  {%- for commit in source.commits if (commit.version | int) > offset and (commit.version | int) <= latest -%}
    {%- do versions.append(commit.version | int) -%}
    {%- if (commit.operation | upper) in dbt_tablestream._delta_data_operations() -%}
      {%- do data_commits.append(commit.version | int) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not versions or (versions | min) > offset + 1 -%}
    {{ return({'source_version': latest,
               'reason': 'the log before version ' ~ ((versions | min) if versions else latest)
                         ~ ' is gone: the run checks the window'}) }}
  {%- endif -%}
  {%- if not data_commits -%}{{ return(none) }}{%- endif -%}
  {{ return({'source_version': latest,
             'reason': (data_commits | length) ~ ' data commit' ~ ('s' if (data_commits | length) > 1 else '')
                       ~ ' in (' ~ offset ~ ', ' ~ latest ~ ']'}) }}
{% endmacro %}


{#-- The source's log as _stream_pending_reason reads it: exists, table_id, version, commits. --#}
{% macro pending_source_state(position) %}
  {{ return(adapter.dispatch('pending_source_state', 'dbt_tablestream')(position)) }}
{% endmacro %}


{#-- A DESCRIBE HISTORY of the latest commit, a DESCRIBE DETAIL for the table id, and the history
     since the offset when the source moved past it. --#}
{% macro spark__pending_source_state(position) %}
  {%- set relation = dbt_tablestream._parse_relation(position.source) -%}
  {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {{ return({'exists': false}) }}
  {%- endif -%}
  {%- set offset = position.to_version -%}
  {%- set latest = run_query(dbt_tablestream.describe_history_sql(relation, 1)).rows[0]['version'] | int -%}
  {%- set table_id = run_query(dbt_tablestream.describe_detail_sql(relation)).rows[0]['id'] -%}
  {%- set state = {'exists': true, 'version': latest, 'table_id': table_id, 'commits': []} -%}
  {%- if offset is none or offset >= latest -%}{{ return(state) }}{%- endif -%}
  {%- for row in dbt_tablestream.history_since(relation, offset + 1, latest) -%}
    {%- do state.commits.append({'version': row['version'] | int, 'operation': row['operation']}) -%}
  {%- endfor -%}
  {{ return(state) }}
{% endmacro %}

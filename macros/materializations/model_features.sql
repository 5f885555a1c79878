{#-- dbt's own model features on a stream target (docs/architecture.md, "dbt's model features"):
     `grants`, `persist_docs` and an enforced `contract`, as dbt-spark's incremental applies them,
     except where a stream target needs otherwise:
     - a column comment is set only when it differs from the target's: each ALTER is a schema
       change (CHANGE COLUMN) that a stream reading the target must split its window at;
     - a contract's constraints are checked on the rows a run writes before its commit, so a
       violation refuses the run with the stream's window and nothing written, not with Delta's
       error after a rebuild's commit. --#}


{#-- Before any SQL: what the engine cannot do is refused. The local profile's Spark session has
     no table access control (no Unity Catalog), so it cannot apply `grants`; dbt-spark fails there
     too, at SHOW GRANTS, after the model has written. --#}
{% macro _check_stream_model_features(stream) %}
  {%- set grants = config.get('grants') -%}
  {%- if grants and target.type == 'tablestream' -%}
    {{ exceptions.raise_compiler_error(dbt_tablestream._stream_subject(stream.stream) ~ " (model " ~ model.name
        ~ ", source " ~ stream.source ~ "): `grants` " ~ tojson(grants) ~ " cannot be applied on the local profile "
        ~ "(type: tablestream): its Spark session has no table access control. Nothing was written and the stream did "
        ~ "not move. Set `grants` only for targets that have it (Databricks with Unity Catalog or table ACLs), for "
        ~ "example in a profile-specific dbt_project.yml block, or remove it from this model.") }}
  {%- endif -%}
{% endmacro %}


{#-- Whether the model's contract is enforced (dbt's ContractConfig). --#}
{% macro _stream_contract_enforced() %}
  {%- set contract = config.get('contract') -%}
  {{ return(contract is not none and contract.enforced) }}
{% endmacro %}


{#-- The constraints of an enforced contract that a write can break, as Delta CHECK constraints:
     the model's CHECK constraints and its NOT NULL columns (model-level and column-level) as
     `<column> is not null` (Spark 4 refuses to make an existing column NOT NULL, so dbt-spark's
     ALTER COLUMN cannot set one on a target built by CREATE TABLE AS SELECT). Each is
     {name, expression}; other constraint types are not enforced, as on dbt-spark. --#}
{% macro _stream_contract_constraints(model) %}
  {%- set found = [] -%}
  {%- if not dbt_tablestream._stream_contract_enforced() -%}{{ return(found) }}{%- endif -%}
  {%- set not_null = [] -%}
  {%- for constraint in model.constraints or [] -%}
    {%- if constraint.type == 'check' -%}
      {%- do found.append({'name': constraint.name or (model.name ~ '_check_' ~ loop.index),
                           'expression': constraint.expression}) -%}
    {%- elif constraint.type == 'not_null' -%}
      {%- do not_null.extend(constraint.columns or []) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name, column in (model.columns or {}).items() -%}
    {%- for constraint in column.constraints or [] if constraint.type == 'not_null' -%}
      {%- do not_null.append(name) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for column in not_null | unique -%}
    {%- do found.append({'name': column ~ '_not_null',
                         'expression': dbt_tablestream._sql_identifier(column) ~ ' is not null'}) -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{% macro stream_contract_violations_sql(rows_sql, constraints) %}
  {{ return(adapter.dispatch('stream_contract_violations_sql', 'dbt_tablestream')(rows_sql, constraints)) }}
{% endmacro %}


{#-- SQL counting, per constraint, the rows of `rows_sql` that break it (Delta rejects a row whose
     CHECK is false or NULL); none without constraints. --#}
{% macro spark__stream_contract_violations_sql(rows_sql, constraints) %}
  {%- if not constraints -%}{{ return(none) }}{%- endif -%}
  {%- set counts = [] -%}
  {%- for constraint in constraints -%}
    {%- do counts.append('count_if(not coalesce((' ~ constraint.expression ~ '), false)) as '
                         ~ dbt_tablestream._sql_identifier(loop.index0)) -%}
  {%- endfor -%}
  {{ return('select ' ~ counts | join(', ') ~ ' from (' ~ rows_sql ~ ') as __tablestream_contract') }}
{% endmacro %}


{% macro check_stream_contract(stream, rows_sql, build) %}
  {{ return(adapter.dispatch('check_stream_contract', 'dbt_tablestream')(stream, rows_sql, build)) }}
{% endmacro %}


{#-- Before the target's commit: an enforced contract's columns match what a build writes (dbt's
     own check), and no row the run writes breaks a constraint. `rows_sql`: the rows written in
     the target's columns; `build`: whether it creates the target. --#}
{% macro spark__check_stream_contract(stream, rows_sql, build) %}
  {%- if not dbt_tablestream._stream_contract_enforced() or rows_sql is none -%}{{ return(none) }}{%- endif -%}
  {%- if build -%}{%- do get_assert_columns_equivalent(rows_sql) -%}{%- endif -%}
  {%- set constraints = dbt_tablestream._stream_contract_constraints(model) -%}
  {%- set violations_sql = dbt_tablestream.stream_contract_violations_sql(rows_sql, constraints) -%}
  {%- if violations_sql is none -%}{{ return(none) }}{%- endif -%}
  {%- set counts = run_query(violations_sql).rows[0] -%}
  {%- set broken = [] -%}
  {%- for constraint in constraints -%}
    {%- set count = counts[loop.index0] or 0 -%}
    {%- if count > 0 -%}
      {%- do broken.append(count ~ ' break ' ~ constraint.name ~ ' (check ' ~ constraint.expression ~ ')') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if broken -%}
    {{ exceptions.raise_compiler_error(dbt_tablestream._stream_subject(stream.stream) ~ ": rows of "
        ~ dbt_tablestream._stream_window_text(stream) ~ " of " ~ stream.source ~ " break the enforced "
        ~ "contract of model " ~ model.name ~ ": " ~ broken | join('; ') ~ ". Nothing was written and the stream did "
        ~ "not move. Correct the rows in the source (the next run reads the correction with them), change the "
        ~ "constraint, or move the stream past them with `dbt run-operation dbt_tablestream.reset_stream`.") }}
  {%- endif -%}
{% endmacro %}


{% macro apply_stream_model_features(target_relation, existing_relation, rebuilt) %}
  {{ return(adapter.dispatch('apply_stream_model_features', 'dbt_tablestream')(
      target_relation, existing_relation, rebuilt)) }}
{% endmacro %}


{#-- After the run's commits: grants, the contract's constraints on a built target, and its column
     comments, on every run as dbt-spark's incremental does (a rebuild replaces the table, and with
     it what these set). --#}
{% macro spark__apply_stream_model_features(target_relation, existing_relation, rebuilt) %}
  {%- if rebuilt -%}
    {%- for constraint in dbt_tablestream._stream_contract_constraints(model) -%}
      {%- call statement('persist_constraint') -%}
        alter table {{ target_relation }}
        add constraint {{ dbt_tablestream._sql_identifier(constraint.name) }} check ({{ constraint.expression }})
      {%- endcall -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do apply_grants(target_relation, config.get('grants'),
                      should_revoke(existing_relation, full_refresh_mode=rebuilt)) -%}
  {%- do dbt_tablestream.persist_stream_column_docs(target_relation) -%}
{% endmacro %}


{% macro persist_stream_column_docs(relation) %}
  {{ return(adapter.dispatch('persist_stream_column_docs', 'dbt_tablestream')(relation)) }}
{% endmacro %}


{#-- persist_docs columns: the documented columns whose comment on the target differs. The table's
     comment is set when it is built (comment_clause), as dbt-spark sets it. --#}
{% macro spark__persist_stream_column_docs(relation) %}
  {%- if not config.persist_column_docs() or not model.columns -%}{{ return(none) }}{%- endif -%}
  {%- set current = {} -%}
  {%- for row in run_query('describe table ' ~ relation).rows -%}
    {%- if row[0] and not row[0].startswith('#') -%}
      {%- do current.update({row[0] | lower: row[2] or ''}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name, column in model.columns.items() if column.description and (name | lower) in current
        and current[name | lower] != column.description -%}
    {%- call statement('persist_column_docs') -%}
      alter table {{ relation }} alter column {{ dbt_tablestream._sql_identifier(name) }}
      comment {{ dbt_tablestream._sql_string(column.description) }}
    {%- endcall -%}
  {%- endfor -%}
{% endmacro %}

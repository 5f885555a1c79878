{#-- The suite's sources and their changes, in plain Delta SQL (no Python, nothing engine
     specific), so the same steps run on the local session, a Thrift cluster and Databricks.
     `dbt run-operation integration_step --args '{step: N}'` applies step N; step 0 creates the
     sources. Every statement is one Delta commit. --#}

{#-- `schema`, on Databricks qualified with the profile's catalog, which the session's current
     catalog need not be (the models' relations are qualified the same way). --#}
{% macro integration_qualified_schema(schema) %}
  {%- if target.type == 'databricks' and target.get('catalog') -%}
    {{ return(target.catalog ~ '.' ~ schema) }}
  {%- endif -%}
  {{ return(schema) }}
{% endmacro %}


{% macro integration_source_schema() %}
  {{ return(integration_qualified_schema(var('integration_prefix', 'tablestream_it') ~ '_src')) }}
{% endmacro %}


{% macro integration_run_statements(statements, label) %}
  {%- for statement in statements -%}
    {%- do run_query(statement) -%}
  {%- endfor -%}
  {{ log("integration " ~ label ~ ": " ~ statements | length ~ " statements", info=True) }}
{% endmacro %}


{% macro integration_steps() %}
  {%- set src = integration_source_schema() -%}
  {%- set cdf = "tblproperties (delta.enableChangeDataFeed = true)" -%}
  {{ return({
    0: [
      "create schema if not exists " ~ src,
      "drop table if exists " ~ src ~ ".orders",
      "drop table if exists " ~ src ~ ".accounts",
      "drop table if exists " ~ src ~ ".order_events",
      "drop table if exists " ~ src ~ ".feed_off",
      "drop table if exists " ~ src ~ ".recreated",
      "drop table if exists " ~ src ~ ".feed_gap",
      "create table " ~ src ~ ".orders (order_id int, customer string, amount int, status string) using delta " ~ cdf,
      "insert into " ~ src ~ ".orders values (1, 'ann', 10, 'new'), (2, 'bob', 20, 'new'), (3, 'cy', 30, 'new')",
      "create table " ~ src ~ ".accounts (region string, account_id int, name string, balance int) using delta " ~ cdf,
      "insert into " ~ src ~ ".accounts values ('eu', 1, 'alpha', 100), ('us', 1, 'beta', 200), ('us', 2, 'gamma', 300)",
      "create table " ~ src ~ ".order_events (order_id int, op string, lsn int, amount int, status string) using delta " ~ cdf,
      "insert into " ~ src ~ ".order_events values (1, 'c', 1, 10, 'new'), (2, 'u', 4, 21, 'new'), (2, 'c', 2, 20, 'new'), (3, 'c', 3, 30, 'new')",
      "create table " ~ src ~ ".feed_off (id int, name string) using delta " ~ cdf,
      "insert into " ~ src ~ ".feed_off values (1, 'a')",
      "create table " ~ src ~ ".recreated (id int, name string) using delta " ~ cdf,
      "insert into " ~ src ~ ".recreated values (1, 'a')",
      "create table " ~ src ~ ".feed_gap (id int, name string) using delta " ~ cdf,
      "insert into " ~ src ~ ".feed_gap values (1, 'a')",
    ],
    1: [
      "insert into " ~ src ~ ".orders values (4, 'dee', 40, 'new'), (5, 'eve', 50, 'new')",
      "update " ~ src ~ ".orders set status = 'paid' where order_id = 1",
      "delete from " ~ src ~ ".orders where order_id = 2",
      "update " ~ src ~ ".accounts set balance = 150 where region = 'eu' and account_id = 1",
      "insert into " ~ src ~ ".order_events values (1, 'u', 6, 10, 'paid'), (2, 'u', 3, 99, 'late'), (3, 'u', 5, 31, 'new')",
      "insert into " ~ src ~ ".order_events values (2, 'd', 7, 21, 'new')",
    ],
    2: [
      "update " ~ src ~ ".orders set amount = amount + 1 where order_id = 4",
      "update " ~ src ~ ".orders set amount = amount + 1 where order_id = 4",
      "delete from " ~ src ~ ".orders where order_id = 3",
      "insert into " ~ src ~ ".orders values (3, 'cy', 33, 'again'), (9, 'zed', 90, 'new')",
      "delete from " ~ src ~ ".orders where order_id = 9",
      "delete from " ~ src ~ ".accounts where region = 'us' and account_id = 2",
      "insert into " ~ src ~ ".accounts values ('us', 3, 'delta', 400)",
      "insert into " ~ src ~ ".order_events values (2, 'u', 5, 55, 'zombie'), (1, 'u', 6, 10, 'paid'), (4, 'c', 9, 40, 'new'), (4, 'u', 8, 39, 'older')",
    ],
    3: [
      "merge into " ~ src ~ ".orders as t using (select 5 as order_id, 'eva' as customer, 55 as amount, 'paid' as status"
        ~ " union all select 6, 'fay', 60, 'new') as s on t.order_id = s.order_id"
        ~ " when matched then update set * when not matched then insert *",
      "update " ~ src ~ ".accounts set name = upper(name), balance = balance + 1 where region = 'us'",
      "insert into " ~ src ~ ".order_events values (2, 'c', 10, 200, 'back'), (3, 'd', 11, 31, 'new')",
    ],
    4: [
      "delete from " ~ src ~ ".orders where order_id = 1",
      "insert into " ~ src ~ ".orders values (1, 'ann', 11, 'reopened')",
      "update " ~ src ~ ".orders set status = 'paid' where order_id = 6",
      "insert into " ~ src ~ ".order_events values (3, 'u', 10, 0, 'late'), (1, 'u', 12, 12, 'done')",
    ],
  }) }}
{% endmacro %}


{#-- What the refusal phase does to the sources after the last step: the change feed of
     `feed_off` turned off with a change made while it was off; the same for `feed_gap`, whose
     feed is then turned on again (the change stays unrecorded); `recreated` dropped and created
     again. The runs of their stream models must then be refused. --#}
{% macro integration_refusal_changes() %}
  {%- set src = integration_source_schema() -%}
  {{ return([
    "alter table " ~ src ~ ".feed_off set tblproperties (delta.enableChangeDataFeed = false)",
    "insert into " ~ src ~ ".feed_off values (2, 'b')",
    "alter table " ~ src ~ ".feed_gap set tblproperties (delta.enableChangeDataFeed = false)",
    "insert into " ~ src ~ ".feed_gap values (2, 'b')",
    "alter table " ~ src ~ ".feed_gap set tblproperties (delta.enableChangeDataFeed = true)",
    "insert into " ~ src ~ ".feed_gap values (3, 'c')",
    "drop table " ~ src ~ ".recreated",
    "create table " ~ src ~ ".recreated (id int, name string) using delta tblproperties (delta.enableChangeDataFeed = true)",
    "insert into " ~ src ~ ".recreated values (1, 'a'), (2, 'b')",
  ]) }}
{% endmacro %}


{% macro integration_refusal_step() %}
  {%- do integration_run_statements(integration_refusal_changes(), "refusal changes") -%}
{% endmacro %}


{#-- The landing folder's files, written with Spark SQL, when var integration_directory names a
     folder the cluster can write (otherwise the directory models are left out). Each write is a
     folder of one JSON file; rewriting a folder gives its file a new name. --#}
{% macro integration_directory_steps() %}
  {%- set folder = var('integration_directory', none) -%}
  {%- if folder is none -%}{{ return({}) }}{%- endif -%}
  {%- set write = "insert overwrite directory '" ~ folder ~ "/{batch}' using json select /*+ coalesce(1) */ * from values {rows} as t(id, name)" -%}
  {{ return({
    0: [write | replace('{batch}', 'batch_0') | replace('{rows}', "(1, 'a'), (2, 'b')")],
    1: [write | replace('{batch}', 'batch_1') | replace('{rows}', "(3, 'c')")],
    3: [write | replace('{batch}', 'batch_0') | replace('{rows}', "(1, 'a'), (2, 'bb')")],
    4: [write | replace('{batch}', 'batch_2') | replace('{rows}', "(4, 'd')")],
  }) }}
{% endmacro %}


{% macro integration_step(step) %}
  {%- set statements = integration_steps()[step | int] + integration_directory_steps().get(step | int, []) -%}
  {%- do integration_run_statements(statements, "step " ~ step) -%}
{% endmacro %}


{% macro integration_drop_schemas(schemas) %}
  {%- for schema in schemas -%}
    {%- do run_query("drop schema if exists " ~ integration_qualified_schema(schema) ~ " cascade") -%}
  {%- endfor -%}
{% endmacro %}


{#-- Fails unless `model` has no table: a refused first run wrote nothing. --#}
{% macro integration_expect_absent(model) %}
  {%- set schema = generate_schema_name(none, none) | trim -%}
  {%- if adapter.get_relation(database=target.database, schema=schema, identifier=model) is not none -%}
    {{ exceptions.raise_compiler_error("integration_tests: " ~ schema ~ "." ~ model ~ " exists; its refused run must not have created it.") }}
  {%- endif -%}
{% endmacro %}


{#-- What a run of `model` could have written, logged as one JSON line for run.py: the Delta
     version and a fingerprint of the rows (count and an order-free sum of row hashes, as decimals:
     a bigint sum overflows, an error under ANSI mode) of its
     target and of the offsets log. A refused run must leave all four as they were: a same-size
     rewrite or an empty commit moves the version, a changed row the fingerprint. --#}
{% macro integration_written(model) %}
  {%- set schema = generate_schema_name(none, none) | trim -%}
  {%- set state = {} -%}
  {%- for name in [model, 'tablestream_offsets'] -%}
    {%- set relation = adapter.get_relation(database=target.database, schema=schema, identifier=name) -%}
    {%- set version = run_query("describe history " ~ relation ~ " limit 1").columns[0].values()[0] -%}
    {%- set fingerprint = run_query("select count(*) as row_count, coalesce(sum(cast(xxhash64(*) as decimal(38, 0))), 0) as row_hash from " ~ relation).rows[0] -%}
    {%- do state.update({name: {'version': version | int, 'rows': fingerprint[0] | int, 'hash': fingerprint[1] | string}}) -%}
  {%- endfor -%}
  {{ log("integration_written " ~ tojson(state), info=True) }}
{% endmacro %}

{% macro enable_change_tracking(relation, mode='change_data_feed') %}
  {{ return(adapter.dispatch('enable_change_tracking', 'dbt_tablestream')(relation, mode)) }}
{% endmacro %}


{#-- Turn on what a stream reads on a table: the Delta equivalent of
     ALTER TABLE ... SET PROPERTIES ('change_tracking' = 'true'). `mode`:
       change_data_feed (default): Delta's change data feed, read by stream_read: table_changes;
       changelog: row tracking, the row identity Delta's changelog (stream_read: changelog) needs.
     Changes are tracked from the version this commits on; earlier versions cannot be read. --#}
{% macro spark__enable_change_tracking(relation, mode='change_data_feed') %}
  {%- do dbt_tablestream.stream_engine_check('enable_change_tracking') -%}
  {%- if mode not in ['change_data_feed', 'changelog'] -%}
    {{ exceptions.raise_compiler_error("enable_change_tracking: invalid mode '" ~ mode ~ "'. Accepted values: "
        ~ "change_data_feed (for stream_read: table_changes, the default), changelog (row tracking, for "
        ~ "stream_read: changelog).") }}
  {%- endif -%}
  {%- set target = dbt_tablestream._parse_relation(relation) -%}
  {%- set property = dbt_tablestream._stream_tracking_property('changelog' if mode == 'changelog'
                                                               else 'table_changes') -%}
  {%- set what = 'Row tracking' if mode == 'changelog' else 'Change data feed' -%}
  {%- set properties = {} -%}
  {%- for row in run_query(dbt_tablestream.table_properties_sql(target)).rows -%}
    {%- do properties.update({row[0]: row[1] | string | lower}) -%}
  {%- endfor -%}
  {#-- Setting it again would still add a commit to the table. --#}
  {%- if properties.get(property) == 'true' -%}
    {{ log(what ~ " already enabled on " ~ target ~ "; nothing to do.", info=True) }}
    {{ return(none) }}
  {%- endif -%}
  {#-- On a table with rows, Delta first upgrades the protocol and backfills row ids (commits that
       change no data), then sets the property: streams read from that last commit on. --#}
  {%- do dbt_tablestream.set_table_properties(target, {property: 'true'}) -%}
  {{ log(what ~ " enabled on " ~ target ~ "; streams see changes committed from now on.", info=True) }}
{% endmacro %}


{#-- `schema.table` or `catalog.schema.table` (a string), or a Relation, to a Relation. --#}
{% macro _parse_relation(relation) %}
  {%- if relation is string -%}
    {%- set parts = relation.split('.') -%}
    {%- if parts | length == 3 -%}
      {{ return(api.Relation.create(database=parts[0], schema=parts[1], identifier=parts[2], type='table')) }}
    {%- endif -%}
    {%- if parts | length != 2 -%}
      {{ exceptions.raise_compiler_error("Expected a relation as `schema.table` (or `catalog.schema.table`), got '"
          ~ relation ~ "'.") }}
    {%- endif -%}
    {{ return(api.Relation.create(schema=parts[0], identifier=parts[1], type='table')) }}
  {%- endif -%}
  {{ return(relation) }}
{% endmacro %}

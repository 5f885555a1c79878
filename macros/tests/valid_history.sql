{#-- Fails for each problem in an SCD type 2 history (a stream_merge with scd_type: 2, or a dbt
     snapshot): a key with more than one current version, a version that overlaps the next one of
     its key, or one whose dbt_valid_to is not after its dbt_valid_from. Each failing row names the
     key, the problem and the version's times. --#}
{% test valid_history(model, unique_key, valid_from='dbt_valid_from', valid_to='dbt_valid_to') %}
  {%- set keys = [unique_key] if unique_key is string else unique_key -%}
  {%- if keys is not sequence or not keys or keys | reject('string') | list -%}
    {{ exceptions.raise_compiler_error("valid_history on " ~ model ~ ": unique_key must be a column name or a list of "
        ~ "column names, got " ~ unique_key) }}
  {%- endif -%}
  {%- set key_list = dbt_tablestream._quoted_columns(keys) -%}
  {%- set from_column = dbt_tablestream._sql_identifier(valid_from) -%}
  {%- set to_column = dbt_tablestream._sql_identifier(valid_to) -%}
with __tablestream_versions as (
  select {{ key_list }}, {{ from_column }} as valid_from, {{ to_column }} as valid_to,
    lead({{ from_column }}) over (partition by {{ key_list }} order by {{ from_column }}, {{ to_column }} nulls last)
      as next_valid_from
  from {{ model }}
)
select {{ key_list }}, 'more than one current version' as problem,
  min(valid_from) as valid_from, max(case when false then valid_to end) as valid_to
from __tablestream_versions
group by {{ key_list }}
having count_if(valid_to is null) > 1
union all
select {{ key_list }}, 'overlaps the next version' as problem, valid_from, valid_to
from __tablestream_versions
where next_valid_from is not null and (valid_to is null or valid_to > next_valid_from)
union all
select {{ key_list }}, 'dbt_valid_to is not after dbt_valid_from' as problem, valid_from, valid_to
from __tablestream_versions
where valid_to is not null and valid_to <= valid_from
{% endtest %}

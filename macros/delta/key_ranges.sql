{#-- Key ranges of a window, for file skipping in the MERGE (docs/architecture.md, "Cost"). Delta
     skips target files only by the ON clause's conjuncts on target columns alone whose bounds are
     literals; an OR of ranges is tested per range, an IN list only as one [min, max]. So the
     window's keys (of the first unique_key column) are cut into at most `cap` ranges at their
     widest gaps, and the MERGE's ON clause says the target key lies in one of them. --#}


{#-- The key type's name as _key_range_literal knows it, or none when ranges are not used for it:
     integers, dates and timestamps (cut at gaps), strings (one range: a gap has no size). Thrift
     reports types as BIGINT_TYPE and the like, dbt's Column STRING as TEXT. --#}
{% macro _key_range_type(data_type) %}
  {%- set name = (data_type | string | lower | trim) -%}
  {%- set name = name[:-5] if name.endswith('_type') else name -%}
  {%- set aliases = {'byte': 'tinyint', 'short': 'smallint', 'integer': 'int', 'long': 'bigint', 'text': 'string'} -%}
  {%- set name = aliases.get(name, name) -%}
  {%- if name in ['tinyint', 'smallint', 'int', 'bigint', 'date', 'timestamp', 'timestamp_ntz', 'string'] -%}
    {{ return(name) }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}


{% macro stream_key_ranges_sql(relation, column, key_type, cap, counts=[], listed=0, file_keys=none, target=none) %}
  {{ return(adapter.dispatch('stream_key_ranges_sql', 'dbt_tablestream')(
      relation, column, key_type, cap, counts, listed, file_keys, target)) }}
{% endmacro %}


{#-- SQL returning one row: the sums of `counts` ([[name, aggregate], ...], each aggregate computed
     per key value and summed) and `key_ranges`, a JSON list of [lo, hi] pairs (as strings) that
     covers every non-NULL value of `column` in `relation`, cut at the widest gaps between
     neighbouring values into at most `cap` ranges. Neighbouring integers (or dates) leave no value
     between them, so they are never cut apart. The counts ride along the key values' grouping so
     that the window is read once: a common table read twice is computed twice. With `listed` > 0
     also `distinct_keys`, how many values there are, and `listed_keys`, a JSON list of the first
     `listed` of them (as strings): all of them when distinct_keys <= listed (a replaceWhere's key
     list, stream_replace_where_sql). With `file_keys` (integer keys), also `key_files`: into how
     many runs of `file_keys` neighbouring values (0 to file_keys - 1, file_keys to ...) the values
     fall, the files they would touch in a key-ordered target of files of file_keys rows. With
     `target` (a relation), also `target_rows`, its row count: Delta answers a bare count(*) from
     its log's statistics, without reading a data file
     (tests/functional/test_delta_semantics.py). --#}
{% macro spark__stream_key_ranges_sql(relation, column, key_type, cap, counts=[], listed=0, file_keys=none,
                                      target=none) %}
  {%- set key = dbt_tablestream._sql_identifier(column) -%}
  {%- set step = {'tinyint': '1', 'smallint': '1', 'int': '1', 'bigint': '1',
      'date': "interval '1' day"}.get(key_type) -%}
  {%- set difference = 'try_subtract(__tablestream_key, lag(__tablestream_key) over (order by __tablestream_key))' -%}
  {%- if key_type == 'string' -%}
    {%- set gap = 'cast(null as int)' -%}
  {%- elif step is not none -%}
    {%- set gap = 'case when ' ~ difference ~ ' > ' ~ step ~ ' then ' ~ difference ~ ' end' -%}
  {%- else -%}
    {%- set gap = difference -%}
  {%- endif -%}
  {%- set ranges_sql -%}
select {% for name, aggregate in counts %}coalesce(sum({{ name }}), 0) as {{ name }}, {% endfor -%}
  {%- if listed > 0 %}coalesce(sum(__tablestream_keys), 0) as distinct_keys, {% endif -%}
  {%- if listed > 0 %}to_json(flatten(collect_list(__tablestream_listed))) as listed_keys, {% endif -%}
  {%- if file_keys is not none %}size(array_distinct(flatten(collect_list(__tablestream_files)))) as key_files,
  {% endif -%}
  {%- if target is not none %}(select count(*) from {{ target }}) as target_rows, {% endif -%}
  to_json(collect_list(case when lo is not null then array(cast(lo as string), cast(hi as string)) end)) as key_ranges
from (
  select min(__tablestream_key) as lo, max(__tablestream_key) as hi
    {%- for name, aggregate in counts %}, sum({{ name }}) as {{ name }}{% endfor %}
    {%- if listed > 0 %}, count(__tablestream_key) as __tablestream_keys{% endif %}
    {%- if listed > 0 %}, collect_list(cast(__tablestream_listed as string)) as __tablestream_listed{% endif %}
    {%- if file_keys is not none %}, collect_set(floor(__tablestream_key / {{ file_keys }}))
      as __tablestream_files{% endif %}
  from (
    select *,
      sum(case when __tablestream_cut < {{ cap }} then 1 else 0 end)
        over (order by __tablestream_key rows between unbounded preceding and current row) as __tablestream_range
      {%- if listed > 0 %},
      {#-- Bounded, so that a window of millions of keys collects no more than a key list may hold. --#}
      case when row_number() over (order by __tablestream_key) <= {{ listed }} then __tablestream_key end
        as __tablestream_listed
      {%- endif %}
    from (
      select *,
        case when __tablestream_gap is not null then row_number() over (order by __tablestream_gap desc nulls last) end
          as __tablestream_cut
      from (
        select *, {{ gap }} as __tablestream_gap
        from (
          select {{ key }} as __tablestream_key
            {%- for name, aggregate in counts %}, {{ aggregate }} as {{ name }}{% endfor %}
          from {{ relation }}
          group by {{ key }}
        ) as __tablestream_keys
      ) as __tablestream_gaps
    ) as __tablestream_cuts
  ) as __tablestream_ranged
  group by __tablestream_range
) as __tablestream_key_ranges
  {%- endset -%}
  {{ return(ranges_sql) }}
{% endmacro %}


{#-- A SQL literal of `value` (a string as cast(... as string) gives it) of type `key_type`
     (_key_range_type): typed, so Delta compares the column with a literal of its own type. --#}
{% macro _key_range_literal(value, key_type) %}
  {%- set suffixes = dbt_tablestream._integer_key_suffixes() -%}
  {%- if key_type in suffixes -%}
    {{ return((value | int | string) ~ suffixes[key_type]) }}
  {%- endif -%}
  {%- if key_type in ['date', 'timestamp', 'timestamp_ntz'] -%}
    {{ return(key_type | upper ~ ' ' ~ dbt_tablestream._sql_string(value)) }}
  {%- endif -%}
  {{ return(dbt_tablestream._sql_string(value)) }}
{% endmacro %}


{#-- stream_key_ranges_sql's `key_ranges` (a JSON list of [lo, hi] strings, or NULL) as
     [[lo, hi], ...] SQL literals of type `key_type`. --#}
{% macro _key_range_literals(key_ranges_json, key_type) %}
  {%- set ranges = [] -%}
  {%- for lo, hi in fromjson(key_ranges_json or '[]') -%}
    {%- do ranges.append([dbt_tablestream._key_range_literal(lo, key_type),
        dbt_tablestream._key_range_literal(hi, key_type)]) -%}
  {%- endfor -%}
  {{ return(ranges) }}
{% endmacro %}


{#-- `(col >= lo and col <= hi or ...)` for the ranges ([[lo, hi], ...] as literals), or nothing
     for no ranges. `>=`/`<=`, not BETWEEN: Delta's skipping matches comparisons with a literal. --#}
{% macro _key_ranges_condition(column_sql, ranges) %}
  {%- if not ranges -%}{{ return('') }}{%- endif -%}
  {%- set tests = [] -%}
  {%- for lo, hi in ranges -%}
    {%- do tests.append(column_sql ~ ' >= ' ~ lo ~ ' and ' ~ column_sql ~ ' <= ' ~ hi) -%}
  {%- endfor -%}
  {{ return('(' ~ tests | join('\n    or ') ~ ')') }}
{% endmacro %}


{#-- The ranges inspect_stream_window computes for the write's file skipping: of the first key
     column, when its type has ranges (_key_range_type) and merge_key_ranges is not 0; else none.
     `listed`: the most keys it lists too (a replaceWhere's key list), 0 for none; `file_rows`: the
     target's rows per file (max_rows_per_file), by which integer keys are placed in files, and
     `target` the target relation, whose rows are counted beside them (the write's choice,
     _stream_net_write_choice). --#}
{% macro _stream_key_ranges_spec(schema, key, cap, listed=0, file_rows=none, target=none) %}
  {%- set found = [] -%}
  {%- for column in schema if column.name | lower == key | lower -%}{%- do found.append(column.dtype) -%}{%- endfor -%}
  {%- set key_type = dbt_tablestream._key_range_type(found[0]) if found else none -%}
  {%- set file_keys = file_rows if listed > 0 and key_type in dbt_tablestream._integer_key_suffixes() else none -%}
  {{ return({'column': key, 'type': key_type, 'cap': cap, 'listed': listed, 'file_keys': file_keys,
             'target': target if file_keys is not none else none} if key_type is not none and cap > 0 else none) }}
{% endmacro %}


{#-- `values` (strings, as cast(... as string) gives them) of type `key_type` as SQL literals
     joined by commas, each as _key_range_literal writes it; integers joined at once, as a key list
     may hold 100,000 of them. --#}
{% macro _key_list_sql(values, key_type) %}
  {%- set suffixes = dbt_tablestream._integer_key_suffixes() -%}
  {%- if key_type in suffixes -%}
    {{ return(values | map('int') | join(suffixes[key_type] ~ ', ') ~ suffixes[key_type]) }}
  {%- endif -%}
  {%- set literals = [] -%}
  {%- for value in values -%}
    {%- do literals.append(dbt_tablestream._key_range_literal(value, key_type)) -%}
  {%- endfor -%}
  {{ return(literals | join(', ')) }}
{% endmacro %}


{#-- The integer key types (_key_range_type's names), each with the suffix of its SQL literal. --#}
{% macro _integer_key_suffixes() %}
  {{ return({'tinyint': 'Y', 'smallint': 'S', 'int': '', 'bigint': 'L'}) }}
{% endmacro %}

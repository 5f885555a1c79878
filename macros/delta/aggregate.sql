{#-- The SQL of a stream_aggregate (docs/stream-aggregate.md): the target's columns, its build and
     the one MERGE of a later run. Builders return SQL and run nothing.

     The target holds the group_by columns, the model's aggregates, and the counts the package
     needs to keep them (columns named __tablestream_*): `__tablestream_rows`, the group's rows;
     `__tablestream_count_<col>`, the non-NULL values of a column summed or averaged (a sum over
     none is NULL); `__tablestream_sum_<col>`, the sum an average divides. count, sum and avg are
     kept by adding the window's signed changes; min and max by taking the window's new values,
     and by reading the group again from the source as of the window's end when the window
     removed a value at the current extreme. --#}


{#-- The target's columns after group_by, in order: each {name, function, column, aggregate (the
     GROUP BY expression over rows), type (for avg: the input's type, whose result it mirrors)}.
     `types`: the model's output column types by lower-cased name. --#}
{% macro _aggregate_target_columns(aggregates, types) %}
  {%- set columns = [] -%}
  {%- for aggregate in aggregates -%}
    {%- set argument = '*' if aggregate.column is none else dbt_tablestream._sql_identifier(aggregate.column) -%}
    {%- do columns.append(dict(aggregate, aggregate=aggregate.function ~ '(' ~ argument ~ ')',
                               type=types.get((aggregate.column or '') | lower))) -%}
  {%- endfor -%}
  {%- do columns.append({'name': '__tablestream_rows', 'function': 'count', 'column': none, 'aggregate': 'count(*)',
      'type': none}) -%}
  {%- for column in dbt_tablestream._aggregated_columns(aggregates, ['sum', 'avg']) -%}
    {%- do columns.append({'name': dbt_tablestream._aggregate_hidden_name('count', column), 'function': 'count',
        'column': column, 'aggregate': 'count(' ~ dbt_tablestream._sql_identifier(column) ~ ')', 'type': none}) -%}
  {%- endfor -%}
  {%- for column in dbt_tablestream._aggregated_columns(aggregates, ['avg']) -%}
    {%- do columns.append({'name': dbt_tablestream._aggregate_hidden_name('sum', column), 'function': 'sum',
        'column': column, 'aggregate': 'sum(' ~ dbt_tablestream._sql_identifier(column) ~ ')', 'type': none}) -%}
  {%- endfor -%}
  {{ return(columns) }}
{% endmacro %}


{#-- The distinct columns the aggregates of `functions` read, in order. --#}
{% macro _aggregated_columns(aggregates, functions) %}
  {%- set found = [] -%}
  {%- for aggregate in aggregates
      if aggregate.function in functions and aggregate.column is not none and aggregate.column not in found -%}
    {%- do found.append(aggregate.column) -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{#-- A package column's name for `column`: Delta takes letters, digits and underscores in a name. --#}
{% macro _aggregate_hidden_name(kind, column) %}
  {{ return('__tablestream_' ~ kind ~ '_' ~ modules.re.sub('[^A-Za-z0-9_]', '_', column)) }}
{% endmacro %}


{% macro stream_window_cache_sql(name, rows_sql, lazy=false) %}
  {{ return(adapter.dispatch('stream_window_cache_sql', 'dbt_tablestream')(name, rows_sql, lazy)) }}
{% endmacro %}


{#-- A window's rows read once into Spark's cache as the session's temporary view `name`, for a run
     that reads them more than once (the protocol step caches_windows); its statements, in order.
     The view is replaced, not created: a run that failed before stream_window_uncache_sql left
     its view in the session. `lazy`: the cache fills on the first read of the view rather than
     at once, so a run whose first read is its own (stream_merge's key check) reads the window once. --#}
{% macro spark__stream_window_cache_sql(name, rows_sql, lazy=false) %}
  {{ return(['create or replace temporary view ' ~ dbt_tablestream._sql_identifier(name)
                ~ ' as select * from (' ~ rows_sql ~ ') as __tablestream_cached',
             'cache ' ~ ('lazy ' if lazy else '') ~ 'table ' ~ dbt_tablestream._sql_identifier(name)]) }}
{% endmacro %}


{% macro stream_window_uncache_sql(name) %}
  {{ return(adapter.dispatch('stream_window_uncache_sql', 'dbt_tablestream')(name)) }}
{% endmacro %}


{#-- The statements that free what stream_window_cache_sql cached. --#}
{% macro spark__stream_window_uncache_sql(name) %}
  {%- set quoted = dbt_tablestream._sql_identifier(name) -%}
  {{ return(['uncache table if exists ' ~ quoted, 'drop view if exists ' ~ quoted]) }}
{% endmacro %}


{% macro stream_aggregate_build_sql(rows_sql, group_by, columns, ordered=false) %}
  {{ return(adapter.dispatch('stream_aggregate_build_sql', 'dbt_tablestream')(rows_sql, group_by, columns, ordered)) }}
{% endmacro %}


{#-- The target's rows from `rows_sql`, rows that all exist (a snapshot): the GROUP BY itself;
     `ordered` (a build of the target), in group_by order, so that with bounded files each file
     holds a narrow range of groups and a later MERGE rewrites only the files of the groups a
     window touched (its ON clause names their ranges, stream_aggregate_merge_sql). --#}
{% macro spark__stream_aggregate_build_sql(rows_sql, group_by, columns, ordered=false) %}
  {%- set groups = dbt_tablestream._quoted_columns(group_by) -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}
    {%- do selected.append(column.aggregate ~ ' as ' ~ dbt_tablestream._sql_identifier(column.name)) -%}
  {%- endfor -%}
  {{ return('select ' ~ groups ~ ', ' ~ selected | join(', ') ~ '\nfrom (' ~ rows_sql
            ~ ') as __tablestream_rows_read\ngroup by ' ~ groups ~ ('\norder by ' ~ groups if ordered else '')) }}
{% endmacro %}


{% macro stream_aggregate_recomputes_sql(target, rows_sql, group_by, columns, recompute_all, cap) %}
  {{ return(adapter.dispatch('stream_aggregate_recomputes_sql', 'dbt_tablestream')(
      target, rows_sql, group_by, columns, recompute_all, cap)) }}
{% endmacro %}


{#-- The groups a window of change rows makes stream_aggregate_merge_sql read again from the
     source, at most `cap` + 1 of them, as a JSON list of their group_by values as strings (or
     null); none when no window can make it read any (no min or max, and not `recompute_all`).
     A run whose window removes no extreme reads only the window and the target, and one that
     names a few groups lets Delta skip the source's files that hold none of them. --#}
{% macro spark__stream_aggregate_recomputes_sql(target, rows_sql, group_by, columns, recompute_all, cap) %}
  {%- if not recompute_all and not columns | selectattr('function', 'in', ['min', 'max']) | list -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set values = [] -%}
  {%- for column in group_by -%}
    {%- do values.append('cast(' ~ dbt_tablestream._sql_identifier(column) ~ ' as string)') -%}
  {%- endfor -%}
  {#-- One JSON value: dbt would read '007' in a column of strings as the number 7. --#}
  {{ return('with ' ~ dbt_tablestream._aggregate_window_groups_sql(target, rows_sql, group_by, columns, recompute_all)
            ~ '\nselect to_json(collect_list(array(' ~ values | join(', ') ~ '))) from (select * from '
            ~ '__tablestream_flagged where __tablestream_recompute limit ' ~ (cap + 1) ~ ') as __tablestream_listed') }}
{% endmacro %}


{% macro stream_aggregate_merge_sql(target, rows_sql, current_sql, group_by, columns, recompute_all, listed_groups=none,
                                    key_ranges=[]) %}
  {{ return(adapter.dispatch('stream_aggregate_merge_sql', 'dbt_tablestream')(
      target, rows_sql, current_sql, group_by, columns, recompute_all, listed_groups, key_ranges)) }}
{% endmacro %}


{#-- One MERGE applying a window of change rows (`rows_sql`, with __change_type) to the target:
     - the window's groups and their sums (_aggregate_window_groups_sql);
     - a group is read again from `current_sql` (the model's rows over the source as of the
       window's end) when the window removed a value at or beyond its current extreme, or, with
       `recompute_all` (the reapply protocol: a window applied twice must leave what one
       application leaves), whenever the window touched it; only those groups are read: with
       `listed_groups` (a condition true for exactly them, from stream_aggregate_recomputes_sql's
       rows) by that filter of literals alone, which lets Delta skip files, otherwise by a semi
       join with the window's flagged groups. With `current_sql` none
       (stream_aggregate_recomputes_sql found none), no group is;
     - a group read again takes what it read, or is deleted when it read nothing; any other group
       adds the window's sums, and is deleted when its rows reach 0 or inserted when it is new.
     Group keys match NULL-safely: a NULL key is a group of its own. `key_ranges` ([[lo, hi], ...]
     as literals, stream_key_ranges_sql's): ranges covering the window's values of the first
     group_by column; the ON clause then says the target's value lies in one of them (or is
     NULL), so Delta reads and rewrites only the target files that may hold a touched group. --#}
{% macro spark__stream_aggregate_merge_sql(target, rows_sql, current_sql, group_by, columns, recompute_all,
                                           listed_groups=none, key_ranges=[]) %}
  {%- set same_group = dbt_tablestream._aggregate_same_group(group_by, '__tablestream_target',
      '__tablestream_window') -%}
  {%- if key_ranges -%}
    {%- set first = '__tablestream_target.' ~ dbt_tablestream._sql_identifier(group_by[0]) -%}
    {%- set same_group = same_group ~ '\n  and (' ~ dbt_tablestream._key_ranges_condition(first, key_ranges)
        ~ '\n    or ' ~ first ~ ' is null)' -%}
  {%- endif -%}
  {%- set groups = dbt_tablestream._quoted_columns(group_by) -%}
  {%- set window_groups = [] -%}
  {%- for column in group_by -%}
    {%- do window_groups.append('__tablestream_window.' ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- set recomputed = [] -%}
  {%- for column in columns -%}
    {%- do recomputed.append('__tablestream_current.' ~ dbt_tablestream._sql_identifier(column.name) ~ ' as '
        ~ dbt_tablestream._sql_identifier('__tablestream_r_' ~ column.name)) -%}
  {%- endfor -%}
  {#-- Without groups to read again the read is of no rows, which Spark plans as none. --#}
  {%- set current_rows = 'select * from (' ~ rows_sql ~ ') as __tablestream_none where false' if current_sql is none
        else 'select * from (' ~ current_sql ~ ') as __tablestream_now where ' ~ listed_groups
          if listed_groups is string
        else 'select __tablestream_current_rows.* from (' ~ current_sql ~ ') as __tablestream_current_rows'
             ~ ' left semi join (select ' ~ groups
             ~ ' from __tablestream_flagged where __tablestream_recompute) as __tablestream_window on '
             ~ dbt_tablestream._aggregate_same_group(group_by, '__tablestream_current_rows', '__tablestream_window') -%}
  {%- set recompute = none if current_sql is none else listed_groups if listed_groups is string else recompute_all -%}
  {%- set merge_sql -%}
merge into {{ target }} as __tablestream_target
using (
  with {{ dbt_tablestream._aggregate_window_groups_sql(target, rows_sql, group_by, columns, recompute) | indent(2) }},
  __tablestream_current as (
    {{ dbt_tablestream.stream_aggregate_build_sql(current_rows, group_by, columns) | indent(4) }}
  )
  select __tablestream_window.*, __tablestream_current.__tablestream_rows is not null as __tablestream_found,
    {{ recomputed | join(',\n    ') }}
  from __tablestream_flagged as __tablestream_window
  left join __tablestream_current
    on {{ dbt_tablestream._aggregate_same_group(group_by, '__tablestream_current', '__tablestream_window') }}
) as __tablestream_window
on {{ same_group }}
when matched and __tablestream_window.__tablestream_recompute and not __tablestream_window.__tablestream_found
  then delete
when matched and __tablestream_window.__tablestream_recompute then update set
  {{ dbt_tablestream._aggregate_assignments(columns, 'recomputed') | join(',\n  ') }}
when matched and __tablestream_target.__tablestream_rows + __tablestream_window.__tablestream_d_rows <= 0 then delete
when matched then update set
  {{ dbt_tablestream._aggregate_assignments(columns, 'added') | join(',\n  ') }}
when not matched and __tablestream_window.__tablestream_recompute and __tablestream_window.__tablestream_found
  then insert ({{ groups }}, {{ dbt_tablestream._quoted_columns(columns | map(attribute='name')) }})
  values ({{ window_groups | join(', ') }}, {{ dbt_tablestream._aggregate_values(columns, 'recomputed') | join(', ') }})
when not matched and not __tablestream_window.__tablestream_recompute and __tablestream_window.__tablestream_d_rows > 0
  then insert ({{ groups }}, {{ dbt_tablestream._quoted_columns(columns | map(attribute='name')) }})
  values ({{ window_groups | join(', ') }}, {{ dbt_tablestream._aggregate_values(columns, 'new') | join(', ') }})
  {%- endset -%}
  {{ return(merge_sql) }}
{% endmacro %}


{#-- The CTEs of a window's groups (for a WITH):
     - `__tablestream_signed`: the change rows of `rows_sql` signed +1 (INSERT, UPDATE_AFTER) or -1
       (DELETE, UPDATE_BEFORE);
     - `__tablestream_deltas`: per group their signed sums: rows (__tablestream_d_rows), and the
       non-NULL values and sums of each counted, summed or averaged column;
     - `__tablestream_values_<n>`, one per column under min or max: per group the least and
       greatest value the window added and removed on balance (an update that keeps a value adds
       and removes it, which nets to nothing);
     - `__tablestream_flagged`: the deltas with those, and `__tablestream_recompute`, whether the
       group must be read again. `recompute`: true for every group, none for no group, a
       condition on the group_by columns for the groups it names (the groups already listed by
       stream_aggregate_recomputes_sql, which spares the MERGE the target's read), false for the
       groups that keep rows and whose window removed a value at or beyond the least (or greatest)
       of the target's and the window's added ones, the only extremes it cannot know. --#}
{% macro _aggregate_window_groups_sql(target, rows_sql, group_by, columns, recompute) %}
  {%- set same_group = dbt_tablestream._aggregate_same_group(group_by, '__tablestream_target',
      '__tablestream_window') -%}
  {%- set groups = dbt_tablestream._quoted_columns(group_by) -%}
  {%- set sums = {'__tablestream_d_rows': 'sum(__tablestream_sign)'} -%}
  {%- for column in columns if column.column is not none -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column.column) -%}
    {%- if column.function in ['count', 'sum', 'avg'] -%}
      {%- do sums.update({dbt_tablestream._aggregate_hidden_name('d_count', column.column):
          'sum(case when ' ~ quoted ~ ' is not null then __tablestream_sign else 0 end)'}) -%}
    {%- endif -%}
    {%- if column.function in ['sum', 'avg'] -%}
      {%- do sums.update({dbt_tablestream._aggregate_hidden_name('d_sum', column.column):
          'sum(case when __tablestream_sign > 0 then ' ~ quoted ~ ' else -' ~ quoted ~ ' end)'}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if recompute is string -%}
    {#-- coalesce: `g = 1` is NULL for a NULL key g, and NOT NULL would skip that group's clauses. --#}
    {%- do sums.update({'__tablestream_listed_group': 'coalesce(' ~ recompute ~ ', false)'}) -%}
  {%- endif -%}
  {%- set selected = [] -%}
  {%- for name, aggregate in sums.items() -%}
    {%- do selected.append(aggregate ~ ' as ' ~ dbt_tablestream._sql_identifier(name)) -%}
  {%- endfor -%}
  {%- set extreme_columns = dbt_tablestream._aggregated_columns(columns, ['min', 'max']) -%}
  {%- set extremes = [] -%}
  {%- for column in columns if column.function in ['min', 'max'] -%}
    {%- set values = '__tablestream_values_' ~ extreme_columns.index(column.column) ~ '.' -%}
    {%- set added_name = dbt_tablestream._aggregate_hidden_name('added_' ~ column.function, column.column) -%}
    {%- set removed_name = dbt_tablestream._aggregate_hidden_name('removed_' ~ column.function, column.column) -%}
    {%- set kept = ('least' if column.function == 'min' else 'greatest') ~ '(__tablestream_target.'
                   ~ dbt_tablestream._sql_identifier(column.name) ~ ', '
                   ~ values ~ dbt_tablestream._sql_identifier(added_name) ~ ')' -%}
    {%- set removed = values ~ dbt_tablestream._sql_identifier(removed_name) -%}
    {%- do extremes.append('(' ~ removed ~ ' is not null and (' ~ kept ~ ' is null or ' ~ removed
        ~ (' <= ' if column.function == 'min' else ' >= ') ~ kept ~ '))') -%}
  {%- endfor -%}
  {%- set reads_target = recompute is sameas false and extremes | length > 0 -%}
  {%- set recompute = '__tablestream_window.__tablestream_listed_group' if recompute is string else 'true' if recompute
      else 'false' if not reads_target
      else 'coalesce(__tablestream_target.__tablestream_rows, 0) + __tablestream_window.__tablestream_d_rows > 0 and ('
          ~ extremes | join(' or ') ~ ')' -%}
  {%- set ctes -%}
__tablestream_signed as (
  select *, case when __change_type in ('DELETE', 'UPDATE_BEFORE') then -1 else 1 end as __tablestream_sign
  from ({{ rows_sql }}) as __tablestream_rows_read
),
__tablestream_deltas as (
  select {{ groups }}, {{ selected | join(',\n    ') }}
  from __tablestream_signed
  group by {{ groups }}
),
{%- for column in extreme_columns %}
{%- set value = dbt_tablestream._sql_identifier(column) %}
__tablestream_values_{{ loop.index0 }} as (
  select {{ groups }},
    {%- for function in ['min', 'max'] %}
    {%- set added = dbt_tablestream._sql_identifier(
        dbt_tablestream._aggregate_hidden_name('added_' ~ function, column)) %}
    {%- set removed = dbt_tablestream._sql_identifier(
        dbt_tablestream._aggregate_hidden_name('removed_' ~ function, column)) %}
    {{ function }}(case when __tablestream_net > 0 then __tablestream_value end) as {{ added }},
    {{ function }}(case when __tablestream_net < 0 then __tablestream_value end) as {{ removed }}{{ ',' if loop.first }}
    {%- endfor %}
  from (
    select {{ groups }}, {{ value }} as __tablestream_value, sum(__tablestream_sign) as __tablestream_net
    from __tablestream_signed
    where {{ value }} is not null
    group by {{ groups }}, {{ value }}
  ) as __tablestream_net_values
  group by {{ groups }}
),
{%- endfor %}
__tablestream_flagged as (
  select __tablestream_window.*,
    {%- for column in extreme_columns %}
    {%- set index = loop.index0 %}
    {%- for function in ['min', 'max'] %}
    {%- for side in ['added_', 'removed_'] %}
    {%- set hidden = dbt_tablestream._aggregate_hidden_name(side ~ function, column) %}
    __tablestream_values_{{ index }}.{{ dbt_tablestream._sql_identifier(hidden) }},
    {%- endfor %}
    {%- endfor %}
    {%- endfor %}
    {{ recompute }} as __tablestream_recompute
  from __tablestream_deltas as __tablestream_window
  {%- for column in extreme_columns %}
  {%- set cte_name = '__tablestream_values_' ~ loop.index0 %}
  left join {{ cte_name }} on {{ dbt_tablestream._aggregate_same_group(group_by, cte_name, '__tablestream_window') }}
  {%- endfor %}
  {%- if reads_target %}
  left join {{ target }} as __tablestream_target on {{ same_group }}
  {%- endif %}
)
  {%- endset -%}
  {{ return(ctes) }}
{% endmacro %}


{#-- A condition on the group_by columns true for the listed groups (each a list of group_by values
     as strings, none for NULL), as literals Delta can skip files by; none when a group_by type has
     no literal a string casts back to exactly. `types`: the columns' types by lower-cased name. --#}
{% macro _aggregate_listed_groups_condition(group_by, types, listed) %}
  {%- for column in group_by -%}
    {%- set type = types[column | lower] -%}
    {%- if not (type in ['tinyint', 'smallint', 'int', 'integer', 'bigint', 'float', 'double', 'string', 'date',
            'timestamp', 'timestamp_ntz', 'boolean'] or type.startswith('decimal')) -%}
      {{ return(none) }}
    {%- endif -%}
  {%- endfor -%}
  {%- set conditions = [] -%}
  {%- for values in listed -%}
    {%- set parts = [] -%}
    {%- for column in group_by -%}
      {%- set value = values[loop.index0] -%}
      {%- do parts.append(dbt_tablestream._sql_identifier(column)
          ~ (' is null' if value is none
              else ' = cast(' ~ dbt_tablestream._sql_string(value) ~ ' as ' ~ types[column | lower] ~ ')')) -%}
    {%- endfor -%}
    {%- do conditions.append('(' ~ parts | join(' and ') ~ ')') -%}
  {%- endfor -%}
  {{ return(conditions | join(' or ') if conditions else 'false') }}
{% endmacro %}


{#-- `<left>.g <=> <right>.g and ...` over the group_by columns. --#}
{% macro _aggregate_same_group(group_by, left, right) %}
  {%- set conditions = [] -%}
  {%- for column in group_by -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column) -%}
    {%- do conditions.append(left ~ '.' ~ quoted ~ ' <=> ' ~ right ~ '.' ~ quoted) -%}
  {%- endfor -%}
  {{ return(conditions | join(' and ')) }}
{% endmacro %}


{#-- `col = <value>` for every target column after group_by (_aggregate_values). --#}
{% macro _aggregate_assignments(columns, source) %}
  {%- set values = dbt_tablestream._aggregate_values(columns, source) -%}
  {%- set assignments = [] -%}
  {%- for column in columns -%}
    {%- do assignments.append(dbt_tablestream._sql_identifier(column.name) ~ ' = ' ~ values[loop.index0]) -%}
  {%- endfor -%}
  {{ return(assignments) }}
{% endmacro %}


{#-- Each target column's value after the window, in the MERGE of
     spark__stream_aggregate_merge_sql: `recomputed`, as its group was read again; `added`, the
     target's value plus the window's; `new`, a group the target lacks, from the window alone. --#}
{% macro _aggregate_values(columns, source) %}
  {%- set window = '__tablestream_window.' -%}
  {%- if source == 'recomputed' -%}
    {%- set values = [] -%}
    {%- for column in columns -%}
      {%- do values.append(window ~ dbt_tablestream._sql_identifier('__tablestream_r_' ~ column.name)) -%}
    {%- endfor -%}
    {{ return(values) }}
  {%- endif -%}
  {%- set old = '__tablestream_target.' if source == 'added' else none -%}
  {%- set values = [] -%}
  {%- for column in columns -%}
    {%- set kept = old ~ dbt_tablestream._sql_identifier(column.name) if old else none -%}
    {%- if column.function == 'count' -%}
      {%- set delta = window ~ ('__tablestream_d_rows' if column.column is none
          else dbt_tablestream._sql_identifier(dbt_tablestream._aggregate_hidden_name('d_count', column.column))) -%}
      {%- do values.append(kept ~ ' + ' ~ delta if kept else delta) -%}
    {%- elif column.function == 'sum' -%}
      {%- do values.append(dbt_tablestream._aggregate_sum_value(kept, column.column, old)) -%}
    {%- elif column.function == 'avg' -%}
      {%- set count = dbt_tablestream._aggregate_count_value(column.column, old) -%}
      {%- set old_sum = dbt_tablestream._sql_identifier(
          dbt_tablestream._aggregate_hidden_name('sum', column.column)) -%}
      {%- set total = dbt_tablestream._aggregate_sum_value(old ~ old_sum if old else none, column.column, old) -%}
      {%- do values.append(dbt_tablestream._aggregate_average_sql(total, count, column.type)) -%}
    {%- else -%}
      {%- set added_name = dbt_tablestream._aggregate_hidden_name('added_' ~ column.function, column.column) -%}
      {%- set added = window ~ dbt_tablestream._sql_identifier(added_name) -%}
      {%- do values.append(('least' if column.function == 'min' else 'greatest') ~ '(' ~ kept ~ ', ' ~ added ~ ')'
          if kept else added) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(values) }}
{% endmacro %}


{#-- A column's non-NULL values after the window. --#}
{% macro _aggregate_count_value(column, old) %}
  {%- set delta = '__tablestream_window.'
                 ~ dbt_tablestream._sql_identifier(dbt_tablestream._aggregate_hidden_name('d_count', column)) -%}
  {{ return('(' ~ old ~ dbt_tablestream._sql_identifier(dbt_tablestream._aggregate_hidden_name('count', column)) ~ ' + '
      ~ delta ~ ')' if old else delta) }}
{% endmacro %}


{#-- A sum after the window: NULL when no value is left, as SQL's sum over only NULLs. `kept`: the
     target's sum, none for a new group. --#}
{% macro _aggregate_sum_value(kept, column, old) %}
  {%- set delta = '__tablestream_window.'
                 ~ dbt_tablestream._sql_identifier(dbt_tablestream._aggregate_hidden_name('d_sum', column)) -%}
  {{ return('case when ' ~ dbt_tablestream._aggregate_count_value(column, old) ~ ' = 0 then null else '
            ~ ('coalesce(' ~ kept ~ ', 0) + coalesce(' ~ delta ~ ', 0)' if kept else delta) ~ ' end') }}
{% endmacro %}


{#-- An average from its sum and count, with avg's own type and arithmetic: over a decimal(p, s),
     the sum in decimal(p + 10, s) divided by the count as decimal(20, 0), in decimal(p + 4, s + 4);
     over other numbers, in double. `input_type`: the averaged column's. --#}
{% macro _aggregate_average_sql(total, count, input_type) %}
  {%- set decimal = modules.re.fullmatch('\\s*decimal\\s*\\(\\s*(\\d+)\\s*,\\s*(\\d+)\\s*\\)\\s*',
      (input_type or '') | lower) -%}
  {%- if decimal -%}
    {%- set precision, scale = decimal.group(1) | int, decimal.group(2) | int -%}
    {{ return('case when ' ~ count ~ ' = 0 then null else cast(cast(' ~ total ~ ' as decimal('
              ~ [precision + 10, 38] | min ~ ', ' ~ scale ~ ')) / cast(' ~ count ~ ' as decimal(20, 0)) as decimal('
              ~ [precision + 4, 38] | min ~ ', ' ~ [scale + 4, 38] | min ~ ')) end') }}
  {%- endif -%}
  {{ return('case when ' ~ count ~ ' = 0 then null else cast(' ~ total ~ ' as double) / ' ~ count ~ ' end') }}
{% endmacro %}

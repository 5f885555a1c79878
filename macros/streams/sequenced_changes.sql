{% macro sequenced_changes_sql(sql, keys, columns, events, applied=[]) %}
  {{ return(adapter.dispatch('sequenced_changes_sql', 'dbt_tablestream')(sql, keys, columns, events, applied)) }}
{% endmacro %}


{#-- The newest event per key of a CDC event source (docs/architecture.md, "Event sources"): the
     stream_merge counterpart of net_changes_sql when the model sets `sequence_by`.

     Every change row but a pre-image is an event. It is a delete when its __change_type is DELETE
     or `apply_as_deletes` is true for it; otherwise an upsert. Per key the event with the greatest
     order wins: the sequence_by columns in turn, then the later commit (__commit_version, when the
     model keeps it), then a delete before an upsert, then a hash of the row, so that ties, such as
     a redelivered event, resolve the same way on every run.

     The winner comes out with __change_type DELETE or UPDATE_AFTER, so a first run builds from it
     as from net changes. Whether it changes the target is decided by the MERGE, which compares its
     sequence with the one the target (or a tombstone) already holds (stream_events_merge_sql).

     With delete_mode ignore, deletes are dropped before the ranking: they are not applied, so
     they must not hide the upserts before them.

     With `ignore_null_updates`, a NULL in an upsert keeps the value before it. Events the target
     already holds a newer or equal sequence for (`applied`: the target and the tombstones) are
     dropped first, so a late event cannot lend a value. A column then takes the newest non-NULL
     value among the window's upserts after the key's last delete in the window;
     __tablestream_after_delete says there was such a delete, so the stored value is not kept. --#}
{% macro spark__sequenced_changes_sql(sql, keys, columns, events, applied=[]) %}
  {%- set sequence = events['sequence'] -%}
  {%- set ignore_null = events['ignore_null'] -%}
  {%- set kept = columns | reject('equalto', '__change_type') | list -%}
  {%- set data = kept | reject('in', ['__commit_version', '__commit_timestamp']) | list -%}
  {%- set carried = (data | reject('in', keys + sequence) | list) if ignore_null is sameas true
                    else (ignore_null or []) -%}
  {%- set partition = 'partition by ' ~ dbt_tablestream._quoted_columns(keys) -%}
  {#-- The event's columns are qualified: the applied relations joined to it share its names. --#}
  {%- set order_fields = [] -%}
  {%- for column in sequence -%}
    {%- do order_fields.append(dbt_tablestream._sql_string('s' ~ loop.index0) ~ ', __tablestream_event.'
                               ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- if '__commit_version' in columns -%}
    {%- do order_fields.append("'v', __tablestream_event.__commit_version") -%}
  {%- endif -%}
  {%- do order_fields.append("'d', __tablestream_event.__tablestream_delete") -%}
  {%- do order_fields.append("'h', xxhash64(" ~ dbt_tablestream._prefixed_columns(data, '__tablestream_event')
                             ~ ")") -%}
  {%- set sql_out -%}
with __tablestream_events as (
  select {{ dbt_tablestream._quoted_columns(kept) }},
    __change_type = 'DELETE'
    {%- if events['deletes'] %} or coalesce(({{ events['deletes'] }}), false){% endif %} as __tablestream_delete
  from ({{ sql }}) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_ordered as (
  select __tablestream_event.*, named_struct({{ order_fields | join(', ') }}) as __tablestream_order
  from __tablestream_events as __tablestream_event
  {%- set prefilter = carried and applied %}
  {%- if prefilter %}
    {%- for relation in applied %}
  left join {{ relation }} as __tablestream_applied{{ loop.index0 }}
    on {{ dbt_tablestream._keys_match(keys, '__tablestream_applied' ~ loop.index0, '__tablestream_event') }}
    {%- endfor %}
  {%- endif %}
  {%- set conditions = ['not __tablestream_event.__tablestream_delete'] if events['ignore_deletes'] else [] %}
  {%- if prefilter %}
    {%- set newer_than_applied %}case
    {%- for relation in applied %}
    {%- set applied_sequence = dbt_tablestream._sequence_value(sequence, '__tablestream_applied' ~ loop.index0) %}
    when __tablestream_applied{{ loop.index0 }}.{{ dbt_tablestream._sql_identifier(keys[0]) }} is not null
      then {{ dbt_tablestream._sequence_value(sequence, '__tablestream_event') }} > {{ applied_sequence }}
    {%- endfor %}
    else true end
    {%- endset %}
    {%- do conditions.append(newer_than_applied) %}
  {%- endif %}
  {%- if conditions %}
  where {{ conditions | join(' and ') }}
  {%- endif %}
), __tablestream_ranked as (
  select *,
    row_number() over ({{ partition }} order by __tablestream_order desc) as __tablestream_newest
    {%- if carried %},
    max(case when __tablestream_delete then __tablestream_order end) over ({{ partition }}) as __tablestream_last_delete
    {%- endif %}
  from __tablestream_ordered
), __tablestream_carried as (
  select
  {%- for column in kept %}
    {%- set quoted = dbt_tablestream._sql_identifier(column) %}
    {% if column in carried -%}
    last_value(case when not __tablestream_delete
                         and (__tablestream_last_delete is null or __tablestream_order > __tablestream_last_delete)
      then {{ quoted }} end, true) over ({{ partition }} order by __tablestream_order
        rows between unbounded preceding and unbounded following) as {{ quoted }},
    {%- else -%}
    {{ quoted }},
    {%- endif %}
  {%- endfor %}
    {%- if carried %}
    __tablestream_last_delete is not null as __tablestream_after_delete,
    {%- endif %}
    __tablestream_delete, __tablestream_newest
  from __tablestream_ranked
)
select {{ dbt_tablestream._quoted_columns(kept) }},
  case when __tablestream_delete then 'DELETE' else 'UPDATE_AFTER' end as __change_type
  {%- if carried %}, __tablestream_after_delete{% endif %}
from __tablestream_carried
where __tablestream_newest = 1
  {%- endset -%}
  {{ return(sql_out) }}
{% endmacro %}


{#-- The sequence of a row as one comparable value: the column, or a struct of the columns in
     order (Spark compares structs field by field). `alias`: the row's table alias. --#}
{% macro _sequence_value(sequence, alias) %}
  {%- set fields = [] -%}
  {%- for column in sequence -%}
    {%- do fields.append(alias ~ '.' ~ dbt_tablestream._sql_identifier(column)) -%}
  {%- endfor -%}
  {%- if fields | length == 1 -%}{{ return(fields[0]) }}{%- endif -%}
  {%- set named = [] -%}
  {%- for field in fields -%}
    {%- do named.append(dbt_tablestream._sql_string('s' ~ loop.index0) ~ ', ' ~ field) -%}
  {%- endfor -%}
  {{ return('named_struct(' ~ named | join(', ') ~ ')') }}
{% endmacro %}


{#-- `left.k = right.k and ...` over the key columns. --#}
{% macro _keys_match(keys, left, right) %}
  {%- set conditions = [] -%}
  {%- for key in keys -%}
    {%- set quoted = dbt_tablestream._sql_identifier(key) -%}
    {%- do conditions.append(left ~ '.' ~ quoted ~ ' = ' ~ right ~ '.' ~ quoted) -%}
  {%- endfor -%}
  {{ return(conditions | join(' and ')) }}
{% endmacro %}


{#-- The column names an `apply_as_deletes` expression refers to: its identifiers outside string
     literals, other than SQL words and function names (a word before '('), and other than a
     struct field after '.'. So a misspelt column is named before any SQL runs. --#}
{% macro _expression_columns(expression) %}
  {%- set words = ['and', 'or', 'not', 'is', 'null', 'true', 'false', 'in', 'like', 'ilike', 'rlike', 'regexp',
                   'between', 'case', 'when', 'then', 'else', 'end', 'distinct', 'from', 'as', 'interval', 'escape',
                   'exists', 'any', 'some', 'all', 'div', 'current_date', 'current_timestamp', 'current_user', 'date',
                   'timestamp', 'timestamp_ntz', 'timestamp_ltz', 'x', 'day', 'days', 'hour', 'hours', 'minute',
                   'minutes', 'second', 'seconds', 'month', 'months', 'year', 'years', 'week', 'weeks', 'to',
                   'unknown'] -%}
  {%- set text = modules.re.sub("'(?:[^'\\\\]|\\\\.)*'|\"(?:[^\"\\\\]|\\\\.)*\"", ' ', expression) -%}
  {%- set found = [] -%}
  {%- for quoted in modules.re.findall('`((?:[^`]|``)+)`', text) -%}
    {%- do found.append(quoted | replace('``', '`')) -%}
  {%- endfor -%}
  {%- set text = modules.re.sub('`(?:[^`]|``)+`', ' ', text) -%}
  {%- for word in modules.re.findall('(?<![\\w.])([A-Za-z_][A-Za-z0-9_]*)\\b(?!\\s*\\()', text)
        if word | lower not in words -%}
    {%- do found.append(word) -%}
  {%- endfor -%}
  {{ return(found | unique | list) }}
{% endmacro %}

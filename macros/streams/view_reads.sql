{#-- A stream_view's reads (docs/architecture.md, "Views"): the model's compiled select with each
     read of an input (a source() or ref() relation in a FROM clause) made a token, so one compile
     serves every variant a run reads: each input as of a version, or its window's net changes. --#}


{#-- The relations the model reads, as dbt resolved its source() and ref() calls: [{relation,
     suffix}], `suffix` naming the input's stream (<model>__<suffix>), as source_stream() and
     ref_stream() name theirs. --#}
{% macro _stream_view_relations() %}
  {%- set relations = [] -%}
  {%- set seen = [] -%}
  {%- for name in model.sources -%}
    {%- do relations.append({'relation': source(name[0], name[1]), 'suffix': name[0] ~ '_' ~ name[1]}) -%}
  {%- endfor -%}
  {%- for named in model.refs -%}
    {%- set args = [named.package, named.name] if named.package else [named.name] -%}
    {%- set relation = ref(*args, v=named.version) if named.version is not none else ref(*args) -%}
    {%- do relations.append({'relation': relation, 'suffix': named.name}) -%}
  {%- endfor -%}
  {%- set distinct = [] -%}
  {%- for read in relations if read.relation | string not in seen -%}
    {%- do seen.append(read.relation | string) -%}
    {%- do distinct.append(read) -%}
  {%- endfor -%}
  {{ return(distinct) }}
{% endmacro %}


{#-- The words that may follow a relation in a FROM clause when it has no alias. --#}
{% macro _stream_view_clause_words() %}
  {{ return(['where', 'join', 'inner', 'left', 'right', 'full', 'cross', 'natural', 'on', 'using', 'group', 'order',
             'having', 'limit', 'union', 'except', 'intersect', 'minus', 'window', 'qualify', 'lateral', 'semi', 'anti',
             'tablesample', 'pivot', 'unpivot', 'cluster', 'distribute', 'sort', 'offset']) }}
{% endmacro %}


{#-- The model's compiled select with each read of an input made a token (_stream_view_token):
     {template, occurrences: [{input, token}]}, `input` the index of the relation read. A read
     without an alias gets the table's name as one, so `orders.id` still resolves when the read is
     a subquery. Refuses a relation read outside a FROM clause or with its own time travel, since
     the run chooses the version of every read. `subject` names the view in a refusal. --#}
{% macro _stream_view_template(compiled_code, relations, subject) %}
  {%- set re = modules.re -%}
  {%- set names = relations | map(attribute='relation') | map('string') | list -%}
  {%- set by_length = [] -%}
  {%- for name in names -%}{%- do by_length.append([-(name | length), name]) -%}{%- endfor -%}
  {%- set alternatives = [] -%}
  {%- for pair in by_length | sort -%}{%- do alternatives.append(re.escape(pair[1])) -%}{%- endfor -%}
  {%- set pieces = re.split('(?<![\\w.`])(' ~ alternatives | join('|') ~ ')(?![\\w`])', compiled_code) -%}
  {%- set template = [pieces[0]] -%}
  {%- set occurrences = [] -%}
  {%- for index in range(1, pieces | length, 2) -%}
    {%- set name, before, after = pieces[index], pieces[index - 1], pieces[index + 1] -%}
    {%- set token = dbt_tablestream._stream_view_token(occurrences | length) -%}
    {%- if not re.search('(?is)(\\bfrom|\\bjoin|,)\\s*$', before) -%}
      {{ exceptions.raise_compiler_error(subject ~ " reads " ~ name ~ " outside a FROM clause (after: '"
          ~ before[-40:] | trim ~ "'). A stream_view reads each input in a FROM or JOIN, where the run can read it as "
          ~ "of the version it pinned. Nothing was written.") }}
    {%- endif -%}
    {%- if re.match('(?is)\\s+(version|timestamp)\\s+as\\s+of\\b|\\s+for\\s+(system_)?(version|time)', after) -%}
      {{ exceptions.raise_compiler_error(subject ~ " reads " ~ name ~ " with its own time travel. A stream_view reads "
          ~ "every input as of the version its run pinned; remove the VERSION AS OF or TIMESTAMP AS OF. Nothing was "
          ~ "written.") }}
    {%- endif -%}
    {%- set alias = re.match('(?is)\\s+(?:as\\s+)?(`[^`]+`|[a-z_][a-z0-9_]*)', after) -%}
    {%- set aliased = alias is not none
                      and alias.group(1) | lower not in dbt_tablestream._stream_view_clause_words() -%}
    {%- set input = names.index(name) -%}
    {%- do template.append(token ~ ('' if aliased
        else ' as ' ~ dbt_tablestream._sql_identifier(relations[input].relation.identifier))) -%}
    {%- do template.append(after) -%}
    {%- do occurrences.append({'input': input, 'token': token}) -%}
  {%- endfor -%}
  {%- if not occurrences -%}
    {{ exceptions.raise_compiler_error(subject ~ " reads no source() or ref() in a FROM clause. A stream_view keeps "
        ~ "a select over Delta tables read with source() and ref() up to date. Nothing was written.") }}
  {%- endif -%}
  {{ return({'template': template | join(''), 'occurrences': occurrences}) }}
{% endmacro %}


{#-- The token that stands for the n-th read of an input in a view's template. --#}
{% macro _stream_view_token(n) %}
  {{ return('__tablestream_read_' ~ n ~ '__') }}
{% endmacro %}


{#-- The template with each occurrence's token replaced by the read `pick(occurrence index)`
     names: a key of its input's `reads`. --#}
{% macro _stream_view_variant(view, reads, picks) %}
  {%- set sql = namespace(text=view.template) -%}
  {%- for occurrence in view.occurrences -%}
    {%- set sql.text = sql.text | replace(occurrence.token, reads[occurrence.input][picks[loop.index0]]) -%}
  {%- endfor -%}
  {{ return(sql.text) }}
{% endmacro %}


{#-- An input's reads, each a name the view's statements define once in their WITH clause
     (_stream_view_with), so Spark resolves each table version once however many reads name it:
     `new` and `old`, the relation as of its window's end and start, and for a window that is not
     empty `minus` and `plus`, the rows it removed and added: its change feed netted per whole row
     (stream_view_net_rows_sql), so a row changed and changed back is in neither, a carry-over (a
     row rewritten unchanged) cancels itself, and a row's before and after images of one update
     are each in one; and `changed` and `wide`, a select's reads when its keys only grow with its
     inputs' rows (spark__stream_view_keys_sql): the rows the window removed or added, and the
     relation as of its window's end with the rows it removed. `definitions`: [name, select] each,
     in the order they may be defined. --#}
{% macro _stream_view_reads(input, relation, columns, index) %}
  {%- set prefix = '__tablestream_read_' ~ index ~ '_' -%}
  {%- set definitions = [[prefix ~ 'new', 'select * from ' ~ relation ~ ' version as of ' ~ input.through],
                         [prefix ~ 'old', 'select * from ' ~ relation ~ ' version as of ' ~ input.after]] -%}
  {%- set reads = {'new': prefix ~ 'new', 'old': prefix ~ 'old', 'minus': none, 'plus': none, 'changed': none,
                   'wide': none, 'definitions': definitions} -%}
  {%- if input.view is not none and not input.snapshot -%}
    {%- do definitions.append([prefix ~ 'net', dbt_tablestream.stream_view_net_rows_sql(input.view, columns)]) -%}
    {%- set names = dbt_tablestream._quoted_columns(columns | map(attribute='name')) -%}
    {%- for sign, test in [['minus', '< 0'], ['plus', '> 0']] -%}
      {%- do definitions.append([prefix ~ sign, 'select ' ~ names ~ ' from ' ~ prefix ~ 'net where '
                                                ~ '__tablestream_net ' ~ test]) -%}
      {%- do reads.update({sign: prefix ~ sign}) -%}
    {%- endfor -%}
    {#-- The window's columns are its end version's (a window ends before a schema change), so the
         relation as of that version has them. --#}
    {%- do definitions.append([prefix ~ 'changed', 'select ' ~ names ~ ' from ' ~ prefix ~ 'net where '
                                                   ~ '__tablestream_net <> 0']) -%}
    {%- do definitions.append([prefix ~ 'wide', 'select ' ~ names ~ ' from ' ~ prefix ~ 'new union all select '
                                                ~ names ~ ' from ' ~ prefix ~ 'minus']) -%}
    {%- do reads.update({'changed': prefix ~ 'changed', 'wide': prefix ~ 'wide'}) -%}
  {%- endif -%}
  {{ return(reads) }}
{% endmacro %}


{% macro stream_view_net_rows_sql(changes, columns) %}
  {{ return(adapter.dispatch('stream_view_net_rows_sql', 'dbt_tablestream')(changes, columns)) }}
{% endmacro %}


{#-- A window's rows with how many times it added each (`__tablestream_net`, negative for the rows
     it removed): a row of the change feed (`changes`: its read, with Delta's `_change_type`)
     counts +1 as an insert or update_postimage and -1 otherwise, summed per whole row. Spark
     cannot group by a VARIANT value (nor a struct or array holding one), so such a column is
     grouped by its JSON text: two equal values whose texts differ stay apart, which lists their
     key for recomputing, never loses it (spark__stream_view_keys_sql). --#}
{% macro spark__stream_view_net_rows_sql(changes, columns) %}
  {%- set selected, grouped = [], [] -%}
  {%- for column in columns -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column.name) -%}
    {%- if modules.re.search('(^|[<,:\s])variant($|[>,\s])', column.dtype | lower) -%}
      {%- do selected.append('any_value(' ~ quoted ~ ') as ' ~ quoted) -%}
      {%- do grouped.append('to_json(' ~ quoted ~ ')') -%}
    {%- else -%}
      {%- do selected.append(quoted) -%}
      {%- do grouped.append(quoted) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set sql -%}
select {{ selected | join(', ') }},
  sum(case when _change_type in ('insert', 'update_postimage') then 1 else -1 end) as __tablestream_net
from {{ changes }} as __tablestream_changes
group by {{ grouped | join(', ') }}
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}


{#-- `body` with the WITH clause that defines the reads it names, and the reads those name (a
     window's net rows under its minus or plus); a body that opens with its own WITH continues that
     clause. An input's definitions name only its earlier ones, so one pass from its last finds
     every one needed. --#}
{% macro _stream_view_with(reads, body) %}
  {%- set defined = [] -%}
  {%- for input in reads -%}
    {%- set texts = [body] -%}
    {%- set kept = [] -%}
    {%- for name, select in input.definitions | reverse -%}
      {%- set named = namespace(found=false) -%}
      {%- for text in texts if name in text -%}{%- set named.found = true -%}{%- endfor -%}
      {%- if named.found -%}
        {%- do texts.append(select) -%}
        {%- do kept.insert(0, name ~ ' as (\n' ~ select ~ '\n)') -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do defined.extend(kept) -%}
  {%- endfor -%}
  {%- if not defined -%}{{ return(body) }}{%- endif -%}
  {%- if body.startswith('with ') -%}{{ return('with ' ~ defined | join(',\n') ~ ',\n' ~ body[5:]) }}{%- endif -%}
  {{ return('with ' ~ defined | join(',\n') ~ '\n' ~ body) }}
{% endmacro %}


{#-- The view's rows as of every input's window end, without the WITH clause of its reads. --#}
{% macro _stream_view_rows_sql(view, reads) %}
  {%- set picks = [] -%}
  {%- for occurrence in view.occurrences -%}{%- do picks.append('new') -%}{%- endfor -%}
  {{ return('select * from (\n' ~ dbt_tablestream._stream_view_variant(view, reads, picks)
            ~ '\n) as __tablestream_view') }}
{% endmacro %}


{% macro stream_view_keys_sql(view, reads, keys, grows=false) %}
  {{ return(adapter.dispatch('stream_view_keys_sql', 'dbt_tablestream')(view, reads, keys, grows)) }}
{% endmacro %}


{#-- The keys of the view's rows a run's windows can change (docs/architecture.md, "Views"): for
     each read of an input whose window is not empty, the keys the view gives over the rows it
     removed with every other read as of its window's start, and over the rows it added with every
     other read as of its window's end. Any row of the view that a window adds, removes or changes
     is built from such a row, so its key is among these; a key listed whose row did not change is
     written again unchanged. When the select's keys only grow with its inputs' rows (`grows`,
     _stream_view_grows_with_inputs), one select per such read lists a superset of those keys: the
     read's removed and added rows together (`changed`), every other read as of its window's end
     with the rows its window removed (`wide`, which holds both its start's rows and its end's),
     so each other input is read once rather than twice. Each key is listed once (the change rows hold
     one row per listed key). None when no window has changes. --#}
{% macro spark__stream_view_keys_sql(view, reads, keys, grows=false) %}
  {%- set variants = [] -%}
  {%- for changed in view.occurrences if reads[changed.input].minus is not none -%}
    {%- for sign, others in ([['changed', 'wide']] if grows else [['minus', 'old'], ['plus', 'new']]) -%}
      {%- set picks = [] -%}
      {%- for occurrence in view.occurrences -%}
        {%- set other = 'new' if others == 'wide' and reads[occurrence.input].wide is none else others -%}
        {%- do picks.append(sign if occurrence.token == changed.token else other) -%}
      {%- endfor -%}
      {%- do variants.append('select distinct ' ~ dbt_tablestream._quoted_columns(keys) ~ ' from (\n'
          ~ dbt_tablestream._stream_view_variant(view, reads, picks) ~ '\n) as __tablestream_variant') -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(variants | join('\nunion\n') if variants else none) }}
{% endmacro %}


{% macro stream_view_changes_sql(keys_relation, rows_sql, keys, columns, commit_version) %}
  {{ return(adapter.dispatch('stream_view_changes_sql', 'dbt_tablestream')(keys_relation, rows_sql, keys, columns,
                                                                           commit_version)) }}
{% endmacro %}


{#-- A window's change rows, in a stream read's columns (change_rows_sql): for each listed key (in
     `keys_relation`), an UPDATE_AFTER with the view's row when the select gives one, else a
     DELETE. The select is read once, for the listed keys alone (a semi join, which Spark pushes
     into the input that holds the key). Keys match NULL-safely, so a NULL key is refused by the
     write's check rather than lost. The WITH clause of the reads is _stream_view_with's. --#}
{% macro spark__stream_view_changes_sql(keys_relation, rows_sql, keys, columns, commit_version) %}
  {%- set lowered = keys | map('lower') | list -%}
  {%- set matches = {'rows': [], 'keys': []} -%}
  {%- for key in keys -%}
    {%- set quoted = dbt_tablestream._sql_identifier(key) -%}
    {%- do matches.rows.append('__tablestream_view.' ~ quoted ~ ' <=> __tablestream_keys.' ~ quoted) -%}
    {%- do matches['keys'].append('__tablestream_keys.' ~ quoted ~ ' <=> __tablestream_rows.' ~ quoted) -%}
  {%- endfor -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}
    {%- set quoted = dbt_tablestream._sql_identifier(column.name) -%}
    {%- do selected.append(('__tablestream_keys.' if column.name | lower in lowered else '__tablestream_rows.')
                           ~ quoted ~ ' as ' ~ quoted) -%}
  {%- endfor -%}
  {%- set sql -%}
select {{ selected | join(', ') }},
  case when __tablestream_rows.__tablestream_present then 'UPDATE_AFTER' else 'DELETE' end as __change_type,
  cast({{ commit_version }} as bigint) as __commit_version, cast(null as timestamp) as __commit_timestamp
from {{ keys_relation }} as __tablestream_keys
left join (
  select __tablestream_view.*, true as __tablestream_present from (
{{ rows_sql }}
  ) as __tablestream_view
  left semi join {{ keys_relation }} as __tablestream_keys on {{ matches.rows | join(' and ') }}
) as __tablestream_rows on {{ matches['keys'] | join(' and ') }}
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}

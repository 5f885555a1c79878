{#-- Which selects a stream_view keeps (docs/stream-view.md, "The queries it keeps"), read from
     Spark's own plan of the model's select (EXPLAIN EXTENDED), so no SQL parser is needed and what
     is checked is what Spark runs. A run recomputes the view's rows for the keys its windows can
     change (stream_view_keys_sql); that finds every changed row when each operator's output row
     comes from input rows by a rule that does not look at other rows, or, where it does (an
     aggregate, a window function), when no filter, join or grouping reads the value it computes:
     the one exception is keeping the first row per key of a window partitioned by the key. --#}


{% macro _stream_view_plan_sections(explained) %}
  {%- set re = modules.re -%}
  {%- set analyzed = re.search('== Analyzed Logical Plan ==\\n(.*?)\\n== Optimized Logical Plan ==', explained,
                               re.S) -%}
  {%- set optimized = re.search('== Optimized Logical Plan ==\\n(.*?)\\n== Physical Plan ==', explained, re.S) -%}
  {%- if analyzed is none or optimized is none -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream: EXPLAIN EXTENDED gave no analyzed and optimized logical plan; "
        ~ "a stream_view reads its select's shape from them. Its text began: " ~ explained[:300]) }}
  {%- endif -%}
  {#-- The analyzed plan's first line is the select's schema. --#}
  {{ return({'analyzed': analyzed.group(1).split('\n')[1:] | join('\n'), 'optimized': optimized.group(1)}) }}
{% endmacro %}


{#-- The functions whose result is not a function of their input rows: each run would see other
     values than the last, or a row's value would depend on the order Spark reads rows in. --#}
{% macro _stream_view_nondeterministic_functions() %}
  {{ return(['rand', 'randn', 'random', 'uniform', 'randstr', 'uuid', 'shuffle', 'monotonically_increasing_id',
             'spark_partition_id', 'input_file_name', 'input_file_block_start', 'input_file_block_length',
             'current_timestamp', 'current_date', 'current_time', 'now', 'localtimestamp', 'curdate',
             'current_timezone', 'first', 'last', 'first_value', 'last_value', 'any_value', 'collect_list',
             'collect_set', 'array_agg', 'reflect', 'java_method', 'try_reflect']) }}
{% endmacro %}


{#-- The plan nodes a kept select may have, each with why it keeps (or what it needs). --#}
{% macro _stream_view_plan_nodes() %}
  {{ return(['Project', 'Filter', 'Join', 'Aggregate', 'Window', 'WindowGroupLimit', 'SubqueryAlias', 'Relation',
             'Sort', 'LocalRelation', 'OneRowRelation', 'Generate', 'Union', 'Distinct', 'Expand',
             'RepartitionByExpression', 'Repartition', 'RebalancePartitions']) }}
{% endmacro %}


{#-- The joins a kept select may have: an inner join, a left outer join (its NULL-extended rows
     are found through the left side's rows, docs/architecture.md, "Views"), and the semi join
     Spark makes of IN and EXISTS. --#}
{% macro _stream_view_join_types() %}
  {{ return(['Inner', 'LeftOuter', 'LeftSemi', 'Cross']) }}
{% endmacro %}


{#-- The items of a bracketed, comma-separated list in a plan line, split at its top level. --#}
{% macro _stream_view_plan_items(text) %}
  {%- set items = [] -%}
  {%- set state = namespace(depth=0, current='') -%}
  {%- for char in text -%}
    {%- if char in '([{' -%}{%- set state.depth = state.depth + 1 -%}{%- endif -%}
    {%- if char in ')]}' -%}{%- set state.depth = state.depth - 1 -%}{%- endif -%}
    {%- if char == ',' and state.depth == 0 -%}
      {%- do items.append(state.current | trim) -%}{%- set state.current = '' -%}
    {%- else -%}
      {%- set state.current = state.current ~ char -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if state.current | trim -%}{%- do items.append(state.current | trim) -%}{%- endif -%}
  {{ return(items) }}
{% endmacro %}


{#-- The top-level bracketed lists of a plan line's arguments: `[a, b], [c]` gives [[a, b], [c]]. --#}
{% macro _stream_view_plan_lists(arguments) %}
  {%- set lists = [] -%}
  {%- for part in dbt_tablestream._stream_view_plan_items(arguments) if part.startswith('[') and part.endswith(']') -%}
    {%- do lists.append(dbt_tablestream._stream_view_plan_items(part[1:-1])) -%}
  {%- endfor -%}
  {{ return(lists) }}
{% endmacro %}


{#-- Why Spark's plan of a view's select (EXPLAIN EXTENDED's text) is not kept by a run, or none.
     `keys`: the view's unique_key; `inputs`: the names of the tables it reads through source()
     and ref(), `schema.table`. --#}
{% macro _stream_view_shape_problem(explained, keys, inputs) %}
  {%- set re = modules.re -%}
  {%- set plans = dbt_tablestream._stream_view_plan_sections(explained) -%}
  {%- set found = re.search('\\b(' ~ dbt_tablestream._stream_view_nondeterministic_functions() | join('|') ~ ')\\(',
                            plans.analyzed) -%}
  {%- if found is not none -%}
    {{ return("it calls " ~ found.group(1) ~ "(), whose result is not a function of the rows it reads (it changes "
        ~ "from run to run, or with the order Spark reads rows in), so the rows a run keeps would not equal the select "
        ~ "recomputed. Compute the value upstream, in the table the view reads") }}
  {%- endif -%}
  {%- set subquery = re.search('(list#\\d+|exists#\\d+|scalar-subquery#\\d+|lateral-subquery#\\d+)',
                               plans.optimized) -%}
  {%- if subquery is not none -%}
    {{ return("it has a subquery in an expression (" ~ subquery.group(1) ~ "), whose value depends on rows other "
        ~ "than the row it is computed for. Join the subquery's table instead") }}
  {%- endif -%}
  {%- set lines = plans.optimized.split('\n') | reverse | list -%}
  {%- set derived = [] -%}
  {%- set ranked = [] -%}
  {%- set lowered_keys = keys | map('lower') | list -%}
  {%- set lowered_inputs = inputs | map('lower') | list -%}
  {%- for line in lines if line | trim -%}
    {%- set body = re.sub('^[\\s:+|-]*', '', line) -%}
    {%- set node = re.match('^(\\w+)', body).group(1) if re.match('^(\\w+)', body) else body -%}
    {%- set arguments = body[node | length:] | trim -%}
    {%- set used = re.findall('#(\\d+)', arguments) -%}
    {%- if node not in dbt_tablestream._stream_view_plan_nodes() -%}
      {{ return("its plan has a " ~ node ~ " (" ~ body[:120] ~ "), which a run cannot apply a window to: "
          ~ dbt_tablestream._stream_view_node_remedy(node)) }}
    {%- elif node == 'Relation' -%}
      {%- set table = re.match('^([^\\[]+)\\[', arguments) -%}
      {%- set name = table.group(1) | lower if table else arguments -%}
      {%- set known = namespace(found=false) -%}
      {%- for input in lowered_inputs if name == input or name.endswith('.' ~ input) -%}
        {%- set known.found = true -%}
      {%- endfor -%}
      {%- if not known.found -%}
        {{ return("it reads the table " ~ name ~ " other than through source() or ref(), so a run would not know "
            ~ "when it changes. Read it with source() or ref()") }}
      {%- endif -%}
    {%- elif node == 'Join' -%}
      {%- set join_type = arguments.split(',')[0] | trim -%}
      {%- if join_type not in dbt_tablestream._stream_view_join_types() -%}
        {{ return("it has a " ~ join_type ~ " join, which a run cannot apply a window to: "
            ~ dbt_tablestream._stream_view_node_remedy(join_type)) }}
      {%- endif -%}
      {%- if used | select('in', derived) | list -%}
        {{ return("it joins on a value an aggregate or a window function computes (" ~ arguments[:160] ~ "), so "
            ~ "a change to one row can change which rows join. Join on columns of the tables") }}
      {%- endif -%}
    {%- elif node == 'Filter' -%}
      {%- set derived_used = used | select('in', derived) | list -%}
      {%- set first_row = re.match('^\\((.*)#(\\d+) (=|<=) 1\\)$', arguments) -%}
      {%- if derived_used and not (first_row and first_row.group(2) in ranked and derived_used | unique | list
                                                                                  == [first_row.group(2)]) -%}
        {{ return("it filters on a value an aggregate or a window function computes (" ~ arguments[:160] ~ ", "
            ~ "for example HAVING), so a change to one row can add or remove other rows. Keep that filter out of the "
            ~ "view: filter in the model that reads it") }}
      {%- endif -%}
    {%- elif node in ['Aggregate', 'Window'] -%}
      {%- set lists = dbt_tablestream._stream_view_plan_lists(arguments) -%}
      {%- set outputs = lists[0] if node == 'Window' else lists[1] -%}
      {%- set grouping = lists[1] if node == 'Window' else lists[0] -%}
      {%- set grouping_ids = re.findall('#(\\d+)', grouping | join(' ')) -%}
      {#-- Grouping by a computed value beside the key is grouping by the key. --#}
      {%- set plain_names = [] -%}
      {%- for item in grouping -%}
        {%- set attribute = re.match('^(\\w+)#(\\d+)L?$', item) -%}
        {%- if attribute and attribute.group(2) not in derived -%}
          {%- do plain_names.append(attribute.group(1) | lower) -%}
        {%- endif -%}
      {%- endfor -%}
      {%- if grouping_ids | select('in', derived) | list and lowered_keys | reject('in', plain_names) | list -%}
        {{ return("it groups or partitions by a value an aggregate or a window function computes (" ~ arguments[:160]
            ~ "), so a change to one row can move other rows between groups. Group by columns of the tables") }}
      {%- endif -%}
      {%- if node == 'Window' -%}
        {%- set partition = [] -%}
        {%- for item in grouping -%}{%- do partition.append(re.sub('#\\d+L?$', '', item) | lower) -%}{%- endfor -%}
        {%- if partition | sort != lowered_keys | sort -%}
          {{ return("it has a window function partitioned by " ~ (partition | join(', ') or 'nothing') ~ ", not by its "
              ~ "unique_key (" ~ keys | join(', ') ~ "), so a change to one row changes the other rows of its "
              ~ "partition. Partition the window by the unique_key, for example the latest row per key: "
              ~ "row_number() over (partition by " ~ keys | join(', ') ~ " order by ...) = 1") }}
        {%- endif -%}
      {%- endif -%}
      {%- for item in outputs -%}
        {%- set defined = re.search('#(\\d+)L?$', item) -%}
        {%- set plain = re.match('^\\w+#(\\d+)L?(?: AS \\w+#\\d+L?)?$', item) -%}
        {%- if defined and not (plain and plain.group(1) in grouping_ids) -%}
          {%- do derived.append(defined.group(1)) -%}
          {%- if node == 'Window' and re.match('^(row_number|rank|dense_rank)\\(', item) -%}
            {%- do ranked.append(defined.group(1)) -%}
          {%- endif -%}
        {%- endif -%}
      {%- endfor -%}
    {%- elif node in ['Project', 'Generate', 'Expand'] -%}
      {%- for item in dbt_tablestream._stream_view_plan_items(arguments[1:-1] if node == 'Project' else arguments)
            if re.findall('#(\\d+)', item) | select('in', derived) | list -%}
        {%- for defined in re.findall('AS [^#]*#(\\d+)', item) -%}
          {%- do derived.append(defined) -%}
          {%- if re.findall('#(\\d+)', item) | select('in', ranked) | list -%}
            {%- do ranked.append(defined) -%}
          {%- endif -%}
        {%- endfor -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#-- Whether the keys a kept select gives can only grow as rows are added to any of its reads
     (docs/architecture.md, "Views"): true unless Spark's optimized plan of it has an outer join,
     whose NULL-extended row leaves when a matching row arrives. Every other node a kept select may
     have keeps a key while a row it comes from remains: a join or a filter passes rows on by a
     rule of their own, an aggregate or a window partitioned by the key keeps a row for every
     group that has one. spark__stream_view_keys_sql lists such a select's keys with one read per
     changed input rather than two. --#}
{% macro _stream_view_grows_with_inputs(explained) %}
  {%- set optimized = dbt_tablestream._stream_view_plan_sections(explained).optimized -%}
  {{ return(modules.re.search('\\bJoin (LeftOuter|RightOuter|FullOuter|LeftAnti)\\b', optimized) is none) }}
{% endmacro %}


{#-- What to write instead of a node or a join a run cannot apply a window to. --#}
{% macro _stream_view_node_remedy(node) %}
  {%- set remedies = {
      'RightOuter': "write it as a LEFT JOIN with its sides swapped",
      'FullOuter': "a full outer join keeps rows of either side that match nothing; build it from two left joins, or "
                   ~ "materialize it as a table",
      'LeftAnti': "a row of the left side leaves the view when a matching row arrives on the right (NOT EXISTS, "
                  ~ "NOT IN, LEFT ANTI JOIN); flag the rows upstream instead",
      'GlobalLimit': "LIMIT keeps rows by their position among all rows; filter by a column instead",
      'LocalLimit': "LIMIT keeps rows by their position among all rows; filter by a column instead",
      'Offset': "OFFSET keeps rows by their position among all rows; filter by a column instead",
      'Sample': "TABLESAMPLE keeps random rows; filter by a column instead",
      'Except': "EXCEPT removes rows when rows arrive in its second input; flag the rows upstream instead",
      'Intersect': "INTERSECT keeps rows only while a matching row exists in the other input; use a join",
  } -%}
  {{ return(remedies.get(node, "materialize this select as a table, or keep the part with a " ~ node
                                ~ " in a model of its own")) }}
{% endmacro %}

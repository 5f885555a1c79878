{#-- The kinds of _stream_config_spec's settings. Each kind has what it accepts, as the messages
     and docs say it (_accepted_<kind>), and the one check of a value (_checked_<kind>), which
     returns the value normalised or refuses it. _settings_from_configs checks every setting by its
     kind before the rules that relate one setting to another. --#}

{#-- The kinds, in one table so that a reader finds each kind's two macros by grep: every kind
     here has `_accepted_<kind>` and `_checked_<kind>` in this file, and no other macro is named so
     (tests/unit/test_dispatch_tables.py). --#}
{% macro _setting_kinds() %}
  {{ return(['choice', 'start_position', 'boolean', 'whole_number', 'name', 'columns', 'sql_condition', 'duration',
             'aggregates', 'unsupported', 'path', 'globs']) }}
{% endmacro %}


{#-- The kind of a spec entry, refused when _setting_kinds does not list it. --#}
{% macro _setting_kind(entry) %}
  {%- if entry.kind not in dbt_tablestream._setting_kinds() -%}
    {{ exceptions.raise_compiler_error("dbt_tablestream: no setting kind '" ~ entry.kind ~ "'; the kinds are "
        ~ dbt_tablestream._setting_kinds() | join(', ') ~ " (_setting_kinds).") }}
  {%- endif -%}
  {{ return(entry.kind) }}
{% endmacro %}


{#-- What a config accepts, as the messages and docs list it. --#}
{% macro _stream_config_accepted(entry) %}
  {{ return(dbt_tablestream['_accepted_' ~ dbt_tablestream._setting_kind(entry)](entry)) }}
{% endmacro %}


{#-- A config's value checked by its kind and normalised; an unset optional config stays none. --#}
{% macro _config_checked(name, value, entry, subject) %}
  {%- if value is none and entry.default is none -%}{{ return(none) }}{%- endif -%}
  {{ return(dbt_tablestream['_checked_' ~ dbt_tablestream._setting_kind(entry)](name, value, entry, subject)) }}
{% endmacro %}


{#-- The refusal of a value outside what its config accepts: a choice lists the values, any other
     kind says what it takes. `entry.needed`: the model's materialization refuses it unset
     (_settings_from_configs), so it is not said to be optional. --#}
{% macro _config_refused(name, value, entry, subject) %}
  {%- set accepted = dbt_tablestream._stream_config_accepted(entry) -%}
  {%- set optional = entry.default is none and entry.kind != 'unsupported' and not entry.needed -%}
  {%- set where = " (the model's config, or the project var " ~ entry.project_var ~ ")" if entry.project_var
      else " (a project var; nothing was written)" if entry.var_only else '' -%}
  {%- if entry.kind in ['choice', 'start_position'] -%}
    {{ exceptions.raise_compiler_error(subject ~ ": invalid " ~ name ~ " '" ~ value ~ "'" ~ where
        ~ ". Accepted values: " ~ accepted ~ (", or leave it unset" if optional else "") ~ ".") }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ where ~ " must be " ~ accepted
      ~ (" (or leave it unset)" if optional else "") ~ ", got " ~ value ~ ".") }}
{% endmacro %}


{#-- choice: `a (meaning), b`, the default marked when the values have meanings. --#}
{% macro _accepted_choice(entry) %}
  {%- set explained = entry.accepted.values() | reject('none') | list | length > 0 -%}
  {%- set values = [] -%}
  {%- for value, meaning in entry.accepted.items() -%}
    {%- set notes = ([meaning] if meaning else [])
                    + (['the default'] if explained and value == entry.default else []) -%}
    {%- do values.append(value | string ~ (' (' ~ notes | join(', ') ~ ')' if notes else '')) -%}
  {%- endfor -%}
  {{ return(values | join(', ')) }}
{% endmacro %}

{#-- A value renamed before 1.0 is refused with its new name until 1.0. 2 and '2' are one value. --#}
{% macro _checked_choice(name, value, entry, subject) %}
  {%- if value is string and value in entry.get('renamed', {}) -%}
    {%- set new = entry.renamed[value] -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " '" ~ value ~ "' was renamed to '" ~ new
        ~ "' in 0.2.0: set " ~ name ~ ": " ~ new
        ~ (" (in the model's config, or the project var " ~ entry.project_var ~ " where the project sets it)"
            if entry.project_var else "")
        ~ ". The old name is refused until 1.0.") }}
  {%- endif -%}
  {%- for accepted in entry.accepted if value is not boolean and value | string == accepted | string -%}
    {{ return(accepted) }}
  {%- endfor -%}
  {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
{% endmacro %}


{% macro _accepted_start_position(entry) %}
  {{ return(dbt_tablestream._accepted_choice(entry)) }}
{% endmacro %}

{#-- A listed word, or a mapping of one of the `{kind: ...}` entries the spec lists. --#}
{% macro _checked_start_position(name, value, entry, subject) %}
  {%- set words = [] -%}
  {%- set kinds = [] -%}
  {%- for listed in entry.accepted -%}
    {%- do (kinds.append(listed[1:].split(':')[0]) if listed.startswith('{') else words.append(listed)) -%}
  {%- endfor -%}
  {%- if value is not mapping -%}
    {%- if value is string and value in words -%}{{ return(value) }}{%- endif -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {%- if value | length != 1 or (value.keys() | list)[0] not in kinds -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {%- if 'version' in value and not dbt_tablestream._is_whole_number(value.version, 0) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " version must be a whole number >= 0, got "
        ~ value.version) }}
  {%- endif -%}
  {%- if 'timestamp' in value and value.timestamp is not string -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " timestamp must be an ISO-8601 string in quotes, got "
        ~ value.timestamp) }}
  {%- endif -%}
  {%- if 'stream' in value and not dbt_tablestream._is_name(value.stream) -%}
    {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " stream must name a stream of the same source ("
        ~ dbt_tablestream._accepted_name(entry) ~ "), got " ~ value.stream) }}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}


{% macro _accepted_boolean(entry) %}{{ return('true or false') }}{% endmacro %}

{% macro _checked_boolean(name, value, entry, subject) %}
  {%- if value is not boolean -%}{%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}{%- endif -%}
  {{ return(value) }}
{% endmacro %}


{% macro _accepted_whole_number(entry) %}
  {{ return('a whole number' ~ (' of ' ~ entry.unit if entry.unit else '') ~ ' >= ' ~ entry.minimum) }}
{% endmacro %}

{% macro _checked_whole_number(name, value, entry, subject) %}
  {%- if not dbt_tablestream._is_whole_number(value, entry.minimum) -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {{ return(value | int) }}
{% endmacro %}

{#-- YAML's true is a number to Jinja, so true and false are not whole numbers here; 2.0 is, 2.5
     is not, and neither is '3'. --#}
{% macro _is_whole_number(value, minimum) %}
  {{ return(value is number and value is not boolean and value >= minimum and value == value | int) }}
{% endmacro %}


{#-- name: a stream's name, which becomes part of table and offsets identifiers. --#}
{% macro _accepted_name(entry) %}{{ return('letters, digits and underscores') }}{% endmacro %}

{% macro _checked_name(name, value, entry, subject) %}
  {%- if not dbt_tablestream._is_name(value) -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}

{% macro _is_name(value) %}
  {{ return(value is string and modules.re.fullmatch('[A-Za-z0-9_]+', value) is not none) }}
{% endmacro %}


{% macro _accepted_columns(entry) %}
  {%- if entry.or_all -%}{{ return('true (every column), false, or a non-empty list of column names') }}{%- endif -%}
  {%- set names = 'a list of column names' if entry.may_be_empty else 'a non-empty list of column names' -%}
  {{ return(('a column name or ' if entry.single else '') ~ names) }}
{% endmacro %}

{#-- Returns a list (or, with `or_all`, true or false). --#}
{% macro _checked_columns(name, value, entry, subject) %}
  {%- if entry.or_all and value is boolean -%}{{ return(value) }}{%- endif -%}
  {%- set names = [value] if entry.single and value is string else value -%}
  {%- if names is string or names is mapping or names is not sequence or names | reject('string') | list
      or not (names or entry.may_be_empty) -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {{ return(names | list) }}
{% endmacro %}


{% macro _accepted_sql_condition(entry) %}
  {{ return("a SQL boolean expression over the model's columns, such as op = 'd'") }}
{% endmacro %}

{% macro _checked_sql_condition(name, value, entry, subject) %}
  {%- if value is not string or not value | trim -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}


{% macro _accepted_duration(entry) %}
  {{ return("a whole number of days, hours or minutes, such as '36 hours'") }}
{% endmacro %}

{#-- Returns `<number> <unit>`, as Spark's INTERVAL takes it. --#}
{% macro _checked_duration(name, value, entry, subject) %}
  {%- set parsed = modules.re.fullmatch('\\s*(\\d+)\\s+(day|days|hour|hours|minute|minutes)\\s*', value | string) -%}
  {%- if not parsed -%}{%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}{%- endif -%}
  {{ return(parsed.group(1) ~ ' ' ~ parsed.group(2)) }}
{% endmacro %}


{#-- aggregates: `{output column: aggregate}`, each aggregate one of `accepted` over one column of the
     model's select (or `*` for count). --#}
{% macro _accepted_aggregates(entry) %}
  {{ return("a mapping of output column to one of " ~ entry.accepted | join(', ') ~ ", where col is a column of "
      ~ "the model's select") }}
{% endmacro %}

{#-- Returns a list of {name, function, column} in the mapping's order (column none for count(*)).
     Anything else is refused by name: count(distinct ...), other functions, an expression (which
     could not be updated from the changed rows alone). --#}
{% macro _checked_aggregates(name, value, entry, subject) %}
  {%- if value is not mapping or not value -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {%- set parsed = [] -%}
  {%- for column, expression in value.items() -%}
    {%- if expression is not string -%}
      {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
    {%- endif -%}
    {%- if not dbt_tablestream._is_name(column) or (column | lower).startswith('__tablestream_') -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " names an output column '" ~ column
          ~ "'; output columns take letters, digits and underscores and do not start with __tablestream_ (the target's "
          ~ "own columns). Nothing was written.") }}
    {%- endif -%}
    {%- set found = modules.re.fullmatch('\\s*(count|sum|avg|min|max)\\s*\\(\\s*'
                                         ~ '(\\*|`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)\\s*\\)\\s*',
                                         expression | string, modules.re.IGNORECASE) -%}
    {%- set function = found.group(1) | lower if found else none -%}
    {%- set argument = found.group(2) if found else none -%}
    {%- if function is none or (argument == '*' and function != 'count') -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " '" ~ column ~ "': " ~ expression
          ~ " is not an aggregate a stream_aggregate keeps up to date. Accepted: " ~ entry.accepted | join(', ')
          ~ ", where col is a column of the model's select: compute an expression in the select and aggregate its "
          ~ "column; count(distinct ...), other functions and window functions cannot be updated from the changed rows "
          ~ "alone, so keep them in a table model. Nothing was written.") }}
    {%- endif -%}
    {#-- A quoted column is unquoted as Spark reads it: a doubled backtick is one. --#}
    {%- set unquoted = argument[1:-1] | replace('``', '`') if argument.startswith('`') else argument -%}
    {%- do parsed.append({'name': column, 'function': function, 'column': none if argument == '*' else unquoted}) -%}
  {%- endfor -%}
  {{ return(parsed) }}
{% endmacro %}


{% macro _accepted_unsupported(entry) %}{{ return('not supported') }}{% endmacro %}

{% macro _checked_unsupported(name, value, entry, subject) %}
  {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " is not supported. " ~ entry.remedy) }}
{% endmacro %}


{#-- path: a folder, as the file system reads it (directory_table's location, resolved against the
     project on the local profile by _validate_directory_table_config). --#}
{% macro _accepted_path(entry) %}
  {{ return("a folder's path or URI: a relative path is the dbt project directory's on the local profile "
      ~ "(type: tablestream); use an absolute path or URI on a cluster") }}
{% endmacro %}

{#-- Returns the path without surrounding blanks. --#}
{% macro _checked_path(name, value, entry, subject) %}
  {%- if value is not string or not value | trim -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {{ return(value | trim) }}
{% endmacro %}


{% macro _accepted_globs(entry) %}
  {{ return("a glob pattern, or a list of them, matched against each file's relative path, for example "
      ~ "['*.json', 'daily/*.csv']") }}
{% endmacro %}

{#-- Returns a list; a lone pattern is a list of one. --#}
{% macro _checked_globs(name, value, entry, subject) %}
  {%- set patterns = [value] if value is string else value -%}
  {%- if patterns is not iterable or patterns is mapping or patterns | reject('string') | list -%}
    {%- do dbt_tablestream._config_refused(name, value, entry, subject) -%}
  {%- endif -%}
  {{ return(patterns | list) }}
{% endmacro %}

{#-- How the package writes a value or a name into Spark SQL (docs/architecture.md, "Quoting"):
     every string literal it builds from a value goes through _sql_string, and every name it
     quotes itself (a column, a name part, a temporary view, a file path in `format.`path``, a
     setting's backquoted value) through _sql_identifier. Relations dbt renders are dbt's. --#}


{#-- A Spark SQL string literal of `value` (NULL for none). Spark reads a backslash in a literal as
     an escape, so both the backslash and the quote are escaped; any other character, a newline or
     a letter outside ASCII, stands for itself. --#}
{% macro _sql_string(value) %}
  {%- if value is none -%}{{ return('cast(null as string)') }}{%- endif -%}
  {{ return("'" ~ (value | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") }}
{% endmacro %}


{#-- `name` between backticks, a backtick in it doubled: Spark's quoted identifier, and the value
     of `SET key = `value``, which Spark reads verbatim. dbt's adapter.quote for Spark is the same
     without the doubling, so a name without a backtick is quoted as dbt quotes it. --#}
{% macro _sql_identifier(name) %}
  {{ return('`' ~ (name | string | replace('`', '``')) ~ '`') }}
{% endmacro %}

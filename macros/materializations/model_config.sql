{#-- The one reader of a package config from the model being compiled or run. dbt's home for a
     package's own keys is `meta` (read with config.meta_get): dbt-databricks warns about unknown
     top-level keys and dbt Fusion ignores them. So a config is read under `meta` first, then at the
     top level, where dbt-spark users and earlier releases set it, then from the project var
     `project_var` when there is one. A value set both ways, differently, is refused: which of the
     two would apply is not something a reader of the model can tell. --#}
{% macro _model_config_value(name, subject, default=none, project_var=none) %}
  {%- set under_meta = config.meta_get(name, none) -%}
  {%- if under_meta is none -%}
    {%- set value = config.get(name, none) -%}
  {%- else -%}
    {#-- config.get of a key set only under meta warns (dbt's GetMetaKeyWarning), so the top level
         is looked up in the model's configs as dbt resolved them. --#}
    {%- set top_level = model.config.get(name) if model is defined and model.config is mapping else none -%}
    {%- if top_level is not none and top_level != under_meta -%}
      {{ exceptions.raise_compiler_error(subject ~ ": " ~ name ~ " is set twice, to " ~ tojson(top_level)
          ~ " at the top level of its config and to " ~ tojson(under_meta) ~ " under meta (config(), a yml config: "
          ~ "block and dbt_project.yml all count). Nothing was written. Set it in one place: under meta (meta={'" ~ name
          ~ "': ...}), which dbt-databricks and dbt Fusion accept, or at the top level.") }}
    {%- endif -%}
    {%- set value = under_meta -%}
  {%- endif -%}
  {%- if value is none and project_var is not none -%}{%- set value = var(project_var, none) -%}{%- endif -%}
  {{ return(value if value is not none else default) }}
{% endmacro %}


{#-- The one reader of a project var of _stream_project_var_spec: checked by its kind, its default
     when unset, refused before any SQL runs when outside what it accepts. --#}
{% macro _stream_project_var(name) %}
  {%- set entry = dbt_tablestream._stream_project_var_spec()[name] -%}
  {%- set value = var(name, none) -%}
  {{ return(dbt_tablestream._config_checked(name, value if value is not none else entry.default, entry,
                                            'dbt_tablestream')) }}
{% endmacro %}

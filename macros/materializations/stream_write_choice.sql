{#-- How a later run of the net strategy writes its window (docs/architecture.md, "A window's
     write"), decided from numbers alone: it reads nothing and runs nothing, and
     tests/unit/test_write_choice.py checks it as a table of cases.
     - `window`: {count: how many distinct keys it changes (none when not counted), listed: the keys
       themselves when there are at most the protocol's cap of them (none else), files: into how
       many of the target's key-ordered files of max_rows_per_file rows its integer keys fall
       (none when not estimated)};
     - `target`: {rows: its row count (none when not counted), vectors: deletion vectors on, feed:
       its change feed on (both from the model's tblproperties)};
     - `settings`: {merge_write, replace_where_keys (the most keys a replace may list: 0 when the
       model may take no write but a MERGE, _replace_where_refusal), max_rows_per_file}.
     Returns {write, write_options}: the write and the session settings of its commit
     (_stream_write_option_settings):
     - 'rewrite' (stream_rewrite_sql): the target rewritten from itself, less the window's keys,
       plus its upserts, each file read and written by one task so the key order holds. Chosen by
       merge_write rewrite, or under auto for a window whose keys fall in at least half the
       files of a copy-on-write target without a change feed: it reads and writes what a
       rebuild does and no more, where a MERGE or a key list joins or tests every row of the files
       it touches (bench/README.md, "The write of a window"). A feed would record every row of the
       target as deleted and inserted, which every reader of the feed then cancels;
     - 'replace_where' (stream_replace_where_sql): the window's listed keys replaced. Chosen by
       merge_write replace_where for a listed window, or under auto for one spread out: its keys
       fall in at least 4 files, which hold 20 rows or more per changed key;
     - 'merge_copying': a MERGE that copies the files it touches rather than marking rows in
       deletion vectors, for a window known to touch few files of a target with vectors, the
       faster of the two there (bench/README.md, "Writes for one window");
     - 'merge': one MERGE, for everything else. --#}
{% macro _stream_net_write_choice(window, target, settings) %}
  {%- set write = dbt_tablestream._stream_net_write_kind(window, target, settings) -%}
  {#-- A target of one file is read by one task whatever the setting: none is sent. --#}
  {%- set one_file = target.rows is not none and settings.max_rows_per_file
                     and target.rows <= settings.max_rows_per_file -%}
  {{ return({'write': write,
             'write_options': {'max_rows_per_file': settings.max_rows_per_file, 'copy_files': write == 'merge_copying',
                        'replaces': write == 'replace_where', 'aligned': write == 'rewrite' and not one_file}}) }}
{% endmacro %}


{% macro _stream_net_write_kind(window, target, settings) %}
  {%- set merge = 'merge_copying' if target.vectors and window.files is not none else 'merge' -%}
  {%- if settings.replace_where_keys == 0 or not window.count -%}{{ return('merge') }}{%- endif -%}
  {%- if settings.merge_write == 'rewrite' -%}{{ return('rewrite') }}{%- endif -%}
  {%- set listed = window.listed is not none and window.count <= settings.replace_where_keys -%}
  {%- if settings.merge_write == 'replace_where' -%}{{ return('replace_where' if listed else 'merge') }}{%- endif -%}
  {%- if window.files is none -%}{{ return('merge') }}{%- endif -%}
  {%- set file_rows = settings.max_rows_per_file -%}
  {%- set target_files = ((target.rows + file_rows - 1) // file_rows) if target.rows and file_rows else none -%}
  {%- if target_files and not target.vectors and not target.feed and window.files * 2 >= target_files -%}
    {{ return('rewrite') }}
  {%- endif -%}
  {%- if listed and window.files >= 4 and window.files * file_rows >= 20 * window.count -%}
    {{ return('replace_where') }}
  {%- endif -%}
  {{ return(merge) }}
{% endmacro %}

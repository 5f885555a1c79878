{#-- Deletion vectors read from their own bytes (docs/architecture.md, "Three ways to read
     changes"): the row positions a vector marks, so that a commit which changed a file's vector
     is read as the file's rows at the positions its new vector marks and its old one did not, by
     the file's path, with no time travel. The bytes are decoded in Python
     (dbt_tablestream/_deletion_vectors.py, with pyroaring), so only the local profile, which runs
     Python beside Spark, reads them; on every other engine those files are read by time travel,
     where Delta applies the vectors. --#}


{#-- The most rows the vectors of one window may mark together to be read by position: each
     position that changed is listed in the read's SQL (`_metadata.row_index in (...)`), and the
     rows a vector marks are every delete of its file until a purge, not only the window's. --#}
{% macro _deletion_vector_decode_limit() %}
  {{ return(1000000) }}
{% endmacro %}


{% macro delta_log_decode_vectors(stream, commits) %}
  {{ return(adapter.dispatch('delta_log_decode_vectors', 'dbt_tablestream')(stream, commits)) }}
{% endmacro %}


{#-- No Python runs beside this engine's Spark to decode a vector: the window's vector-changed
     files are read by time travel (delta_log_vector_changes_sql). --#}
{% macro spark__delta_log_decode_vectors(stream, commits) %}
  {{ return(none) }}
{% endmacro %}


{#-- Gives every file entry of `commits` whose vector the commit changed (removed and added again
     under one path) `positions`, the row positions its vector marks ([] for no vector), where all
     of the window's such vectors can be read so (the adapter's deletion_vector_positions: inline
     or stored beside the data on this machine, in the portable format, checksums and counts as
     the log says) and mark at most _deletion_vector_decode_limit() rows together. Else none gets
     them, and those commits are read by time travel; so under column mapping, where a file read
     by its path names its columns by their physical names, nothing is decoded. --#}
{% macro tablestream__delta_log_decode_vectors(stream, commits) %}
  {%- if stream.files.column_mapping not in [none, 'none'] -%}{{ return(none) }}{%- endif -%}
  {%- set entries = [] -%}
  {%- for commit in commits -%}
    {%- do entries.extend((commit.removes + commit.adds) | selectattr('path', 'in',
        dbt_tablestream._delta_log_revectored_paths(commit))) -%}
  {%- endfor -%}
  {%- set vectors = entries | map(attribute='vector') | list -%}
  {%- set marked = vectors | select | map(attribute='cardinality') | map('int') | sum -%}
  {%- if not entries or marked > dbt_tablestream._deletion_vector_decode_limit() -%}{{ return(none) }}{%- endif -%}
  {%- set decoded = adapter.deletion_vector_positions(stream.files.location, vectors) -%}
  {%- if decoded is none -%}{{ return(none) }}{%- endif -%}
  {%- for entry in entries -%}{%- do entry.update({'positions': decoded[loop.index0]}) -%}{%- endfor -%}
{% endmacro %}

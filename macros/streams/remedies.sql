{#-- What a refusal of a stream's window advises its reader to do. --#}


{#-- What a refusal of the reader's window advises: the value's own `remedy` (a change query's,
     stream_health's, the PySpark API's), else the model's stream reset. --#}
{% macro _stream_remedy(stream) %}
  {{ return(stream.remedy if stream.remedy is not none else dbt_tablestream._stream_reset_remedy()) }}
{% endmacro %}


{#-- The remedy for a stream that can no longer continue from its offset. --#}
{% macro _stream_reset_remedy() %}
  {{ return("Reset the stream with `dbt run --full-refresh -s " ~ model.name ~ "`: it rebuilds the target and starts "
      ~ "the stream again from its start_at.") }}
{% endmacro %}

{#-- Forget a stream: it leaves show_streams, and if its model runs again it starts over from its
     start_at in a new epoch. The target table is kept; drop it yourself if it is no longer wanted.
     `stream_name` names a stream or a stream model (all its streams). `dry_run` says what it would
     drop and writes nothing. `format: json` prints one JSON list (stream_name, target, epoch,
     dropped, dry_run, message per stream) instead of the lines.
     `dbt run-operation dbt_tablestream.drop_stream --args '{stream_name: ...}'` --#}
{% macro drop_stream(stream_name, schema=none, dry_run=false, format='text') %}
  {%- do dbt_tablestream.stream_engine_check('drop_stream') -%}
  {%- set results = [] -%}
  {%- for position in dbt_tablestream._find_stream_positions(stream_name, schema) -%}
    {%- set result = {'stream_name': position.stream_name, 'target': position.target, 'epoch': position.epoch | int,
                      'dropped': false, 'dry_run': dry_run} -%}
    {%- if position.mode == 'dropped' -%}
      {%- do result.update({'message': dbt_tablestream._stream_subject(position.stream_name)
                                       ~ " is already dropped."}) -%}
    {%- elif dry_run -%}
      {%- do result.update({'epoch': (position.epoch | int) + 1,
                            'message': dbt_tablestream._stream_subject(position.stream_name)
                                       ~ " would be dropped (dry run: nothing written); " ~ position.target
                                       ~ " would be kept."}) -%}
    {%- else -%}
      {%- set epoch = dbt_tablestream._open_stream_epoch(position, 'dropped', none, position.source_table_id,
                                                         position.offsets_schema) -%}
      {%- do result.update({'epoch': epoch, 'dropped': true,
                            'message': dbt_tablestream._stream_subject(position.stream_name) ~ " dropped; "
                                       ~ position.target ~ " is kept."}) -%}
    {%- endif -%}
    {%- do results.append(result) -%}
    {%- if format != 'json' -%}{{ print(result.message) }}{%- endif -%}
  {%- endfor -%}
  {%- if format == 'json' -%}{{ print(tojson(results)) }}{%- endif -%}
  {{ return(results) }}
{% endmacro %}

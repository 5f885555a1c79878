{#-- The application's operational table, as the application would create it on a Spark catalog:
     a Delta table, here without its change data feed (main.py turns it on with
     dbt_tablestream.enable_change_tracking). Its rows are then written by the application with
     delta-rs (the realtime writer), straight into the table's folder. --#}
{% macro create_app_tables() %}
  {% do run_query("create schema if not exists app") %}
  {% do run_query("create table if not exists app.orders (order_id bigint, customer string, amount decimal(10,2), status string) using delta") %}
  {#-- A table of order events (a CDC feed, append-only): written by the realtime writer in
       APPEND_ONLY mode, read by the stream_merge model order_events_current. --#}
  {% do run_query("create table if not exists app.order_events (order_id bigint, op string, seq bigint, status string, amount decimal(10,2)) using delta tblproperties (delta.enableChangeDataFeed = true)") %}
  {{ log("app.orders and app.order_events are ready", info=True) }}
{% endmacro %}

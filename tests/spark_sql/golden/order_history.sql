-- order_history: operations / enable_change_tracking
alter table app.orders set tblproperties ('delta.enableChangeDataFeed' = 'true');

-- order_history: operations / show_streams
select * from (
  select *,
    row_number() over (partition by stream_name order by epoch desc nulls last, to_version desc nulls last, committed_at desc nulls last)
      as __position,
    last_value(case when mode not in ('reset', 'dropped') then mode end, true) over (
      partition by stream_name order by epoch nulls first, to_version nulls first, committed_at nulls first
      rows between unbounded preceding and unbounded following) as stream_mode
  from analytics.tablestream_offsets
) as __tablestream_positions
where __position = 1
order by stream_name;

-- order_history: first_run / source_state
describe detail app.orders;

-- order_history: first_run / source_state
describe history `app`.`orders` limit 1;

-- order_history: first_run / model
select * from (
  /* tablestream:window {"stream": "order_history__app_orders", "stream_id": "tablestream\/order_history__app_orders\/0", "source": "app.orders", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_history__app_orders", "remedy": null} */
  select `order_id`, `customer`, `amount`, `status`,
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from (select *, 'insert' as _change_type, cast(9 as bigint) as _commit_version,
    cast('2026-11-21 09:30:00' as timestamp) as _commit_timestamp
  from app.orders version as of 9) as __tablestream_snapshot
);

-- order_history: first_run / null_keys
select count(*) as rows_read, count_if(`order_id` is null) as null_keys from (

select * from (
  /* tablestream:window {"stream": "order_history__app_orders", "stream_id": "tablestream\/order_history__app_orders\/0", "source": "app.orders", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_history__app_orders", "remedy": null} */
  select `order_id`, `customer`, `amount`, `status`,
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from (select *, 'insert' as _change_type, cast(9 as bigint) as _commit_version,
    cast('2026-11-21 09:30:00' as timestamp) as _commit_timestamp
  from app.orders version as of 9) as __tablestream_snapshot
)) as __tablestream_keys;

-- order_history: first_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- order_history: first_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- order_history: first_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- order_history: first_run / commit_open
reset spark.sql.files.openCostInBytes;

-- order_history: first_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- order_history: first_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- order_history: first_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- order_history: first_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- order_history: first_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/order_history__app_orders/0`;

-- order_history: first_run / commit_open
set spark.databricks.delta.write.txnVersion = 9;

-- order_history: first_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "order_history__app_orders", "tablestream.stream_id": "tablestream/order_history__app_orders/0", "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "order_history__app_orders", "tablestream.stream_id": "tablestream/order_history__app_orders/0", "tablestream.epoch": 0, "tablestream.from": 9, "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- order_history: first_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- order_history: first_run / write
create or replace table analytics.order_history
using delta




as
select * from (with __tablestream_events as (
  select `order_id`, `customer`, `amount`, `status`, __commit_version,
    __commit_timestamp as __tablestream_at,
    __change_type = 'DELETE' as __tablestream_delete
  from (

select * from (
  /* tablestream:window {"stream": "order_history__app_orders", "stream_id": "tablestream\/order_history__app_orders\/0", "source": "app.orders", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_history__app_orders", "remedy": null} */
  select `order_id`, `customer`, `amount`, `status`,
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from (select *, 'insert' as _change_type, cast(9 as bigint) as _commit_version,
    cast('2026-11-21 09:30:00' as timestamp) as _commit_timestamp
  from app.orders version as of 9) as __tablestream_snapshot
)) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_points as (
  select * from (
    select *,
      row_number() over (partition by `order_id`, __tablestream_at order by named_struct('v', __commit_version, 'd', not __tablestream_delete, 'h', xxhash64(`order_id`, `customer`, `amount`, `status`)) desc)
        as __tablestream_last
    from __tablestream_events
  ) as __tablestream_ranked
  where __tablestream_last = 1
), __tablestream_timeline as (
  select __tablestream_point.`order_id`, __tablestream_point.`customer`, __tablestream_point.`amount`, __tablestream_point.`status`,
    __tablestream_point.__tablestream_at,
    __tablestream_point.__tablestream_delete, false as __tablestream_stored,
    __tablestream_point.__tablestream_at as __tablestream_start, cast(null as string) as __tablestream_scd_id
  from __tablestream_points as __tablestream_point
), __tablestream_compared as (
  select *,
    row_number() over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) as __tablestream_position,
    lag(__tablestream_delete) over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) as __tablestream_after_delete,
    lag(named_struct('status', `status`)) over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) <=> named_struct('status', `status`) as __tablestream_same,
    lag(named_struct('order_id', `order_id`, 'customer', `customer`, 'amount', `amount`, 'status', `status`)) over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) as __tablestream_before
  from __tablestream_timeline
), __tablestream_grouped as (
  select *,
    sum(case when __tablestream_stored
               or (not __tablestream_delete
                   and (__tablestream_after_delete is null or __tablestream_after_delete or not __tablestream_same))
               or (__tablestream_delete and not coalesce(__tablestream_after_delete, true))
             then 1 else 0 end)
      over (partition by `order_id` order by __tablestream_position rows between unbounded preceding and current row)
      as __tablestream_group
  from __tablestream_compared
), __tablestream_groups as (
  select `order_id`, __tablestream_group,
    min_by(__tablestream_delete, __tablestream_position) as __tablestream_deletion,
    min_by(__tablestream_stored, __tablestream_position) as __tablestream_stored,
    min_by(__tablestream_scd_id, __tablestream_position) as __tablestream_scd_id,
    count(*) as __tablestream_events,
    min_by(__tablestream_start, __tablestream_position) as __tablestream_from,
    min_by(__tablestream_at, __tablestream_position) as __tablestream_first_at,
    max_by(__tablestream_at, __tablestream_position) as __tablestream_last_at,

    min_by(case when __tablestream_stored then named_struct('order_id', `order_id`, 'customer', `customer`, 'amount', `amount`, 'status', `status`) else __tablestream_before end,
           __tablestream_position) as __tablestream_closed_values,
    max_by(named_struct('order_id', `order_id`, 'customer', `customer`, 'amount', `amount`, 'status', `status`), __tablestream_position) as __tablestream_last_values
  from __tablestream_grouped
  where __tablestream_group > 0
  group by `order_id`, __tablestream_group
), __tablestream_versions as (
  select *, lead(__tablestream_from) over (partition by `order_id` order by __tablestream_group) as __tablestream_to
  from __tablestream_groups
)
select
  case when __tablestream_deletion then __tablestream_closed_values.`order_id`
    else __tablestream_last_values.`order_id` end as `order_id`,
  case when __tablestream_deletion then __tablestream_closed_values.`customer`
    else __tablestream_last_values.`customer` end as `customer`,
  case when __tablestream_deletion then __tablestream_closed_values.`amount`
    else __tablestream_last_values.`amount` end as `amount`,
  case when __tablestream_deletion then __tablestream_closed_values.`status`
    else __tablestream_last_values.`status` end as `status`,
  coalesce(__tablestream_scd_id, md5(to_json(named_struct('k0', `order_id`, 'from', __tablestream_from)))) as dbt_scd_id,
  case when __tablestream_deletion then __tablestream_first_at else __tablestream_last_at end as dbt_updated_at,
  __tablestream_from as dbt_valid_from,
  __tablestream_to as dbt_valid_to,
  __tablestream_deletion as dbt_is_deleted
from __tablestream_versions
where true
  and not (__tablestream_stored and __tablestream_events = 1 and __tablestream_to is null)) as __tablestream_versions order by `order_id`, dbt_valid_from;

-- order_history: first_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- order_history: first_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- order_history: first_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- order_history: first_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- order_history: first_run / target_marker
describe history `analytics`.`order_history` limit 5;

-- order_history: first_run / offsets_append
create table if not exists analytics.tablestream_offsets using delta partitioned by (stream_name) as
select * from (

  select
    'order_history__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/order_history__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(9 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.order_history' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at

) as __tablestream_offset where 1 = 0;

-- order_history: first_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'order_history__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/order_history__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(9 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.order_history' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- order_history: next_run / offsets_read
select epoch, to_version, source_table_id, mode, source, count(*) over () as runs
from analytics.tablestream_offsets
where stream_name = 'order_history__app_orders'
order by epoch desc nulls last, to_version desc nulls last, committed_at desc nulls last
limit 1;

-- order_history: next_run / target_marker
describe history `analytics`.`order_history` limit 5;

-- order_history: next_run / source_state
describe detail app.orders;

-- order_history: next_run / source_state
describe history `app`.`orders` limit 10;

-- order_history: next_run / window_check
select current_timestamp() - try_cast('interval 1 week' as interval) as retained_from, current_timestamp() as checked_at;

-- order_history: next_run / model
select * from (
  /* tablestream:window {"stream": "order_history__app_orders", "stream_id": "tablestream\/order_history__app_orders\/0", "source": "app.orders", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_history__app_orders", "remedy": null} */
  select `order_id`, `customer`, `amount`, `status`,
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from (select * from (
    select *,
      count_if(_change_type in ('update_preimage', 'delete')) over (__tablestream_pair) as __tablestream_before,
      count_if(not _change_type in ('update_preimage', 'delete')) over (__tablestream_pair) as __tablestream_after,
      row_number() over (__tablestream_side) as __tablestream_rank
    from table_changes('app.orders', 6, 9)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
);

-- order_history: next_run / cache_window
create or replace temporary view `__tablestream_window_order_history` as select * from (

select * from (
  /* tablestream:window {"stream": "order_history__app_orders", "stream_id": "tablestream\/order_history__app_orders\/0", "source": "app.orders", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_history__app_orders", "remedy": null} */
  select `order_id`, `customer`, `amount`, `status`,
    case _change_type
      when 'insert' then 'INSERT'
      when 'update_preimage' then 'UPDATE_BEFORE'
      when 'update_postimage' then 'UPDATE_AFTER'
      when 'delete' then 'DELETE'
    end as __change_type,
    _commit_version as __commit_version,
    _commit_timestamp as __commit_timestamp
  from (select * from (
    select *,
      count_if(_change_type in ('update_preimage', 'delete')) over (__tablestream_pair) as __tablestream_before,
      count_if(not _change_type in ('update_preimage', 'delete')) over (__tablestream_pair) as __tablestream_after,
      row_number() over (__tablestream_side) as __tablestream_rank
    from table_changes('app.orders', 6, 9)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
)) as __tablestream_cached;

-- order_history: next_run / cache_window
cache lazy table `__tablestream_window_order_history`;

-- order_history: next_run / null_keys
select coalesce(sum(rows_read), 0) as rows_read, coalesce(sum(null_keys), 0) as null_keys, to_json(collect_list(case when lo is not null then array(cast(lo as string), cast(hi as string)) end)) as key_ranges
from (
  select min(__tablestream_key) as lo, max(__tablestream_key) as hi, sum(rows_read) as rows_read, sum(null_keys) as null_keys
  from (
    select *,
      sum(case when __tablestream_cut < 32 then 1 else 0 end)
        over (order by __tablestream_key rows between unbounded preceding and current row) as __tablestream_range
    from (
      select *,
        case when __tablestream_gap is not null then row_number() over (order by __tablestream_gap desc nulls last) end
          as __tablestream_cut
      from (
        select *, case when try_subtract(__tablestream_key, lag(__tablestream_key) over (order by __tablestream_key)) > 1 then try_subtract(__tablestream_key, lag(__tablestream_key) over (order by __tablestream_key)) end as __tablestream_gap
        from (
          select `order_id` as __tablestream_key, count(*) as rows_read, count_if(`order_id` is null) as null_keys
          from (select * from `__tablestream_window_order_history`) as __tablestream_rows
          group by `order_id`
        ) as __tablestream_keys
      ) as __tablestream_gaps
    ) as __tablestream_cuts
  ) as __tablestream_ranged
  group by __tablestream_range
) as __tablestream_key_ranges;

-- order_history: next_run / target_marker
describe history `analytics`.`order_history` limit 5;

-- order_history: next_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- order_history: next_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- order_history: next_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- order_history: next_run / commit_open
reset spark.sql.files.openCostInBytes;

-- order_history: next_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- order_history: next_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- order_history: next_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- order_history: next_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- order_history: next_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/order_history__app_orders/0`;

-- order_history: next_run / commit_open
set spark.databricks.delta.write.txnVersion = 9;

-- order_history: next_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "order_history__app_orders", "tablestream.stream_id": "tablestream/order_history__app_orders/0", "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "order_history__app_orders", "tablestream.stream_id": "tablestream/order_history__app_orders/0", "tablestream.epoch": 0, "tablestream.from": 5, "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- order_history: next_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- order_history: next_run / write
merge into analytics.order_history as target
using (
with __tablestream_events as (
  select `order_id`, `customer`, `amount`, `status`, __commit_version,
    __commit_timestamp as __tablestream_at,
    __change_type = 'DELETE' as __tablestream_delete
  from (select * from `__tablestream_window_order_history`) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_points as (
  select * from (
    select *,
      row_number() over (partition by `order_id`, __tablestream_at order by named_struct('v', __commit_version, 'd', not __tablestream_delete, 'h', xxhash64(`order_id`, `customer`, `amount`, `status`)) desc)
        as __tablestream_last
    from __tablestream_events
  ) as __tablestream_ranked
  where __tablestream_last = 1
), __tablestream_window_keys as (
  select distinct `order_id` from __tablestream_points
), __tablestream_timeline as (
  select __tablestream_point.`order_id`, __tablestream_point.`customer`, __tablestream_point.`amount`, __tablestream_point.`status`,
    __tablestream_point.__tablestream_at,
    __tablestream_point.__tablestream_delete, false as __tablestream_stored,
    __tablestream_point.__tablestream_at as __tablestream_start, cast(null as string) as __tablestream_scd_id
  from __tablestream_points as __tablestream_point
  union all
  select __tablestream_open.`order_id`, __tablestream_open.`customer`, __tablestream_open.`amount`, __tablestream_open.`status`, __tablestream_open.dbt_updated_at,
    __tablestream_open.dbt_is_deleted, true,
    __tablestream_open.dbt_valid_from, __tablestream_open.dbt_scd_id
  from analytics.order_history as __tablestream_open
  left semi join __tablestream_window_keys
    on __tablestream_open.`order_id` = __tablestream_window_keys.`order_id`
  where __tablestream_open.dbt_valid_to is null
), __tablestream_compared as (
  select *,
    row_number() over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) as __tablestream_position,
    lag(__tablestream_delete) over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) as __tablestream_after_delete,
    lag(named_struct('status', `status`)) over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) <=> named_struct('status', `status`) as __tablestream_same,
    lag(named_struct('order_id', `order_id`, 'customer', `customer`, 'amount', `amount`, 'status', `status`)) over (partition by `order_id` order by __tablestream_stored desc, __tablestream_at) as __tablestream_before
  from __tablestream_timeline
), __tablestream_grouped as (
  select *,
    sum(case when __tablestream_stored
               or (not __tablestream_delete
                   and (__tablestream_after_delete is null or __tablestream_after_delete or not __tablestream_same))
               or (__tablestream_delete and not coalesce(__tablestream_after_delete, true))
             then 1 else 0 end)
      over (partition by `order_id` order by __tablestream_position rows between unbounded preceding and current row)
      as __tablestream_group
  from __tablestream_compared
), __tablestream_groups as (
  select `order_id`, __tablestream_group,
    min_by(__tablestream_delete, __tablestream_position) as __tablestream_deletion,
    min_by(__tablestream_stored, __tablestream_position) as __tablestream_stored,
    min_by(__tablestream_scd_id, __tablestream_position) as __tablestream_scd_id,
    count(*) as __tablestream_events,
    min_by(__tablestream_start, __tablestream_position) as __tablestream_from,
    min_by(__tablestream_at, __tablestream_position) as __tablestream_first_at,
    max_by(__tablestream_at, __tablestream_position) as __tablestream_last_at,

    min_by(case when __tablestream_stored then named_struct('order_id', `order_id`, 'customer', `customer`, 'amount', `amount`, 'status', `status`) else __tablestream_before end,
           __tablestream_position) as __tablestream_closed_values,
    max_by(named_struct('order_id', `order_id`, 'customer', `customer`, 'amount', `amount`, 'status', `status`), __tablestream_position) as __tablestream_last_values
  from __tablestream_grouped
  where __tablestream_group > 0
  group by `order_id`, __tablestream_group
), __tablestream_versions as (
  select *, lead(__tablestream_from) over (partition by `order_id` order by __tablestream_group) as __tablestream_to
  from __tablestream_groups
)
select
  case when __tablestream_deletion then __tablestream_closed_values.`order_id`
    else __tablestream_last_values.`order_id` end as `order_id`,
  case when __tablestream_deletion then __tablestream_closed_values.`customer`
    else __tablestream_last_values.`customer` end as `customer`,
  case when __tablestream_deletion then __tablestream_closed_values.`amount`
    else __tablestream_last_values.`amount` end as `amount`,
  case when __tablestream_deletion then __tablestream_closed_values.`status`
    else __tablestream_last_values.`status` end as `status`,
  coalesce(__tablestream_scd_id, md5(to_json(named_struct('k0', `order_id`, 'from', __tablestream_from)))) as dbt_scd_id,
  case when __tablestream_deletion then __tablestream_first_at else __tablestream_last_at end as dbt_updated_at,
  __tablestream_from as dbt_valid_from,
  __tablestream_to as dbt_valid_to,
  __tablestream_deletion as dbt_is_deleted
from __tablestream_versions
where true
  and not (__tablestream_stored and __tablestream_events = 1 and __tablestream_to is null)
) as source
on target.dbt_scd_id = source.dbt_scd_id and target.dbt_valid_to is null
  and (target.`order_id` >= 10 and target.`order_id` <= 20
    or target.`order_id` >= 40 and target.`order_id` <= 40)
when matched then update set
  target.`order_id` = source.`order_id`,
  target.`customer` = source.`customer`,
  target.`amount` = source.`amount`,
  target.`status` = source.`status`,
  target.`dbt_updated_at` = source.`dbt_updated_at`,
  target.`dbt_valid_to` = source.`dbt_valid_to`,
  target.`dbt_is_deleted` = source.`dbt_is_deleted`
when not matched then insert (`order_id`, `customer`, `amount`, `status`, `dbt_scd_id`, `dbt_updated_at`, `dbt_valid_from`, `dbt_valid_to`, `dbt_is_deleted`)
  values (source.`order_id`, source.`customer`, source.`amount`, source.`status`, source.`dbt_scd_id`, source.`dbt_updated_at`, source.`dbt_valid_from`, source.`dbt_valid_to`, source.`dbt_is_deleted`);

-- order_history: next_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- order_history: next_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- order_history: next_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- order_history: next_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- order_history: next_run / target_marker
describe history `analytics`.`order_history` limit 5;

-- order_history: next_run / uncache_window
uncache table if exists `__tablestream_window_order_history`;

-- order_history: next_run / uncache_window
drop view if exists `__tablestream_window_order_history`;

-- order_history: next_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'order_history__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/order_history__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(5 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.order_history' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- order_history: next_run / pause_point
select java_method('java.lang.Thread', 'sleep', cast(1500 as bigint)) as paused;

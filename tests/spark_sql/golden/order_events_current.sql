-- order_events_current: operations / enable_change_tracking
alter table app.order_events set tblproperties ('delta.enableChangeDataFeed' = 'true');

-- order_events_current: operations / show_streams
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

-- order_events_current: first_run / source_state
describe detail app.order_events;

-- order_events_current: first_run / source_state
describe history `app`.`order_events` limit 1;

-- order_events_current: first_run / model
select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from (
  /* tablestream:window {"stream": "order_events_current__app_order_events", "stream_id": "tablestream\/order_events_current__app_order_events\/0", "source": "app.order_events", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_events_current__app_order_events", "remedy": null} */
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`,
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
  from app.order_events version as of 9) as __tablestream_snapshot
);

-- order_events_current: first_run / null_keys
select count(*) as rows_read, count_if(`order_id` is null) as null_keys, count_if(__change_type <> 'UPDATE_BEFORE' and `event_ts` is null) as null_sequence_0, count_if(__change_type <> 'UPDATE_BEFORE' and `lsn` is null) as null_sequence_1 from (

select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from (
  /* tablestream:window {"stream": "order_events_current__app_order_events", "stream_id": "tablestream\/order_events_current__app_order_events\/0", "source": "app.order_events", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_events_current__app_order_events", "remedy": null} */
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`,
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
  from app.order_events version as of 9) as __tablestream_snapshot
)) as __tablestream_keys;

-- order_events_current: first_run / tombstones
create or replace table analytics.order_events_current__tablestream_tombstones using delta as
select `order_id`, `event_ts`, `lsn`, current_timestamp() as __tablestream_recorded_at
from (with __tablestream_events as (
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
    __change_type = 'DELETE' or coalesce((op = 'd'), false) as __tablestream_delete
  from (

select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from (
  /* tablestream:window {"stream": "order_events_current__app_order_events", "stream_id": "tablestream\/order_events_current__app_order_events\/0", "source": "app.order_events", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_events_current__app_order_events", "remedy": null} */
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`,
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
  from app.order_events version as of 9) as __tablestream_snapshot
)) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_ordered as (
  select __tablestream_event.*, named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`, 'd', __tablestream_event.__tablestream_delete, 'h', xxhash64(__tablestream_event.`order_id`, __tablestream_event.`op`, __tablestream_event.`event_ts`, __tablestream_event.`lsn`, __tablestream_event.`amount`, __tablestream_event.`status`)) as __tablestream_order
  from __tablestream_events as __tablestream_event
), __tablestream_ranked as (
  select *,
    row_number() over (partition by `order_id` order by __tablestream_order desc) as __tablestream_newest,
    max(case when __tablestream_delete then __tablestream_order end) over (partition by `order_id`) as __tablestream_last_delete
  from __tablestream_ordered
), __tablestream_carried as (
  select
    `order_id`,
    `op`,
    `event_ts`,
    `lsn`,
    `amount`,
    last_value(case when not __tablestream_delete
                         and (__tablestream_last_delete is null or __tablestream_order > __tablestream_last_delete)
      then `status` end, true) over (partition by `order_id` order by __tablestream_order
        rows between unbounded preceding and unbounded following) as `status`,
    `__commit_timestamp`,
    __tablestream_last_delete is not null as __tablestream_after_delete,
    __tablestream_delete, __tablestream_newest
  from __tablestream_ranked
)
select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
  case when __tablestream_delete then 'DELETE' else 'UPDATE_AFTER' end as __change_type, __tablestream_after_delete
from __tablestream_carried
where __tablestream_newest = 1) as __tablestream_changes
where __change_type = 'DELETE';

-- order_events_current: first_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- order_events_current: first_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- order_events_current: first_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- order_events_current: first_run / commit_open
reset spark.sql.files.openCostInBytes;

-- order_events_current: first_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- order_events_current: first_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- order_events_current: first_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- order_events_current: first_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- order_events_current: first_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/order_events_current__app_order_events/0`;

-- order_events_current: first_run / commit_open
set spark.databricks.delta.write.txnVersion = 9;

-- order_events_current: first_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "order_events_current__app_order_events", "tablestream.stream_id": "tablestream/order_events_current__app_order_events/0", "tablestream.to": 9, "tablestream.source": "app.order_events", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "order_events_current__app_order_events", "tablestream.stream_id": "tablestream/order_events_current__app_order_events/0", "tablestream.epoch": 0, "tablestream.from": 9, "tablestream.to": 9, "tablestream.source": "app.order_events", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- order_events_current: first_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- order_events_current: first_run / write
create or replace table analytics.order_events_current
using delta




as
select `order_id`, `event_ts`, `lsn`, `amount`, `status`
from (with __tablestream_events as (
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
    __change_type = 'DELETE' or coalesce((op = 'd'), false) as __tablestream_delete
  from (

select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from (
  /* tablestream:window {"stream": "order_events_current__app_order_events", "stream_id": "tablestream\/order_events_current__app_order_events\/0", "source": "app.order_events", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_events_current__app_order_events", "remedy": null} */
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`,
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
  from app.order_events version as of 9) as __tablestream_snapshot
)) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_ordered as (
  select __tablestream_event.*, named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`, 'd', __tablestream_event.__tablestream_delete, 'h', xxhash64(__tablestream_event.`order_id`, __tablestream_event.`op`, __tablestream_event.`event_ts`, __tablestream_event.`lsn`, __tablestream_event.`amount`, __tablestream_event.`status`)) as __tablestream_order
  from __tablestream_events as __tablestream_event
), __tablestream_ranked as (
  select *,
    row_number() over (partition by `order_id` order by __tablestream_order desc) as __tablestream_newest,
    max(case when __tablestream_delete then __tablestream_order end) over (partition by `order_id`) as __tablestream_last_delete
  from __tablestream_ordered
), __tablestream_carried as (
  select
    `order_id`,
    `op`,
    `event_ts`,
    `lsn`,
    `amount`,
    last_value(case when not __tablestream_delete
                         and (__tablestream_last_delete is null or __tablestream_order > __tablestream_last_delete)
      then `status` end, true) over (partition by `order_id` order by __tablestream_order
        rows between unbounded preceding and unbounded following) as `status`,
    `__commit_timestamp`,
    __tablestream_last_delete is not null as __tablestream_after_delete,
    __tablestream_delete, __tablestream_newest
  from __tablestream_ranked
)
select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
  case when __tablestream_delete then 'DELETE' else 'UPDATE_AFTER' end as __change_type, __tablestream_after_delete
from __tablestream_carried
where __tablestream_newest = 1) as __tablestream_net
where __change_type in ('INSERT', 'UPDATE_AFTER')
order by `order_id`;

-- order_events_current: first_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- order_events_current: first_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- order_events_current: first_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- order_events_current: first_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- order_events_current: first_run / target_marker
describe history `analytics`.`order_events_current` limit 5;

-- order_events_current: first_run / offsets_append
create table if not exists analytics.tablestream_offsets using delta partitioned by (stream_name) as
select * from (

  select
    'order_events_current__app_order_events' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/order_events_current__app_order_events/0' as stream_id,
    'app.order_events' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(9 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.order_events_current' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at

) as __tablestream_offset where 1 = 0;

-- order_events_current: first_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'order_events_current__app_order_events' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/order_events_current__app_order_events/0' as stream_id,
    'app.order_events' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(9 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.order_events_current' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- order_events_current: next_run / offsets_read
select epoch, to_version, source_table_id, mode, source, count(*) over () as runs
from analytics.tablestream_offsets
where stream_name = 'order_events_current__app_order_events'
order by epoch desc nulls last, to_version desc nulls last, committed_at desc nulls last
limit 1;

-- order_events_current: next_run / target_marker
describe history `analytics`.`order_events_current` limit 5;

-- order_events_current: next_run / source_state
describe detail app.order_events;

-- order_events_current: next_run / source_state
describe history `app`.`order_events` limit 10;

-- order_events_current: next_run / window_check
select current_timestamp() - try_cast('interval 1 week' as interval) as retained_from, current_timestamp() as checked_at;

-- order_events_current: next_run / model
select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from (
  /* tablestream:window {"stream": "order_events_current__app_order_events", "stream_id": "tablestream\/order_events_current__app_order_events\/0", "source": "app.order_events", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_events_current__app_order_events", "remedy": null} */
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`,
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
    from table_changes('app.order_events', 6, 9)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
);

-- order_events_current: next_run / cache_window
create or replace temporary view `__tablestream_window_order_events_current` as select * from (

select order_id, op, event_ts, lsn, amount, status, __change_type, __commit_timestamp
from (
  /* tablestream:window {"stream": "order_events_current__app_order_events", "stream_id": "tablestream\/order_events_current__app_order_events\/0", "source": "app.order_events", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream order_events_current__app_order_events", "remedy": null} */
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`,
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
    from table_changes('app.order_events', 6, 9)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
)) as __tablestream_cached;

-- order_events_current: next_run / cache_window
cache lazy table `__tablestream_window_order_events_current`;

-- order_events_current: next_run / null_keys
select coalesce(sum(rows_read), 0) as rows_read, coalesce(sum(null_keys), 0) as null_keys, coalesce(sum(null_sequence_0), 0) as null_sequence_0, coalesce(sum(null_sequence_1), 0) as null_sequence_1, to_json(collect_list(case when lo is not null then array(cast(lo as string), cast(hi as string)) end)) as key_ranges
from (
  select min(__tablestream_key) as lo, max(__tablestream_key) as hi, sum(rows_read) as rows_read, sum(null_keys) as null_keys, sum(null_sequence_0) as null_sequence_0, sum(null_sequence_1) as null_sequence_1
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
          select `order_id` as __tablestream_key, count(*) as rows_read, count_if(`order_id` is null) as null_keys, count_if(__change_type <> 'UPDATE_BEFORE' and `event_ts` is null) as null_sequence_0, count_if(__change_type <> 'UPDATE_BEFORE' and `lsn` is null) as null_sequence_1
          from (select * from `__tablestream_window_order_events_current`) as __tablestream_rows
          group by `order_id`
        ) as __tablestream_keys
      ) as __tablestream_gaps
    ) as __tablestream_cuts
  ) as __tablestream_ranged
  group by __tablestream_range
) as __tablestream_key_ranges;

-- order_events_current: next_run / tombstones
merge into analytics.order_events_current__tablestream_tombstones as target
using (
select `order_id`, `event_ts`, `lsn`, current_timestamp() as __tablestream_recorded_at
from (with __tablestream_events as (
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
    __change_type = 'DELETE' or coalesce((op = 'd'), false) as __tablestream_delete
  from (select * from `__tablestream_window_order_events_current`) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_ordered as (
  select __tablestream_event.*, named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`, 'd', __tablestream_event.__tablestream_delete, 'h', xxhash64(__tablestream_event.`order_id`, __tablestream_event.`op`, __tablestream_event.`event_ts`, __tablestream_event.`lsn`, __tablestream_event.`amount`, __tablestream_event.`status`)) as __tablestream_order
  from __tablestream_events as __tablestream_event
  left join analytics.order_events_current as __tablestream_applied0
    on __tablestream_applied0.`order_id` = __tablestream_event.`order_id`
  left join analytics.order_events_current__tablestream_tombstones as __tablestream_applied1
    on __tablestream_applied1.`order_id` = __tablestream_event.`order_id`
  where case
    when __tablestream_applied0.`order_id` is not null
      then named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`) > named_struct('s0', __tablestream_applied0.`event_ts`, 's1', __tablestream_applied0.`lsn`)
    when __tablestream_applied1.`order_id` is not null
      then named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`) > named_struct('s0', __tablestream_applied1.`event_ts`, 's1', __tablestream_applied1.`lsn`)
    else true end
), __tablestream_ranked as (
  select *,
    row_number() over (partition by `order_id` order by __tablestream_order desc) as __tablestream_newest,
    max(case when __tablestream_delete then __tablestream_order end) over (partition by `order_id`) as __tablestream_last_delete
  from __tablestream_ordered
), __tablestream_carried as (
  select
    `order_id`,
    `op`,
    `event_ts`,
    `lsn`,
    `amount`,
    last_value(case when not __tablestream_delete
                         and (__tablestream_last_delete is null or __tablestream_order > __tablestream_last_delete)
      then `status` end, true) over (partition by `order_id` order by __tablestream_order
        rows between unbounded preceding and unbounded following) as `status`,
    `__commit_timestamp`,
    __tablestream_last_delete is not null as __tablestream_after_delete,
    __tablestream_delete, __tablestream_newest
  from __tablestream_ranked
)
select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
  case when __tablestream_delete then 'DELETE' else 'UPDATE_AFTER' end as __change_type, __tablestream_after_delete
from __tablestream_carried
where __tablestream_newest = 1) as __tablestream_changes
where __change_type = 'DELETE'
) as source
on target.`order_id` = source.`order_id`
when matched and named_struct('s0', source.`event_ts`, 's1', source.`lsn`) > named_struct('s0', target.`event_ts`, 's1', target.`lsn`) then update set
  target.`event_ts` = source.`event_ts`, target.`lsn` = source.`lsn`, target.`__tablestream_recorded_at` = source.`__tablestream_recorded_at`
when not matched then insert *
when not matched by source and target.__tablestream_recorded_at < current_timestamp() - interval 7 days then delete;

-- order_events_current: next_run / target_marker
describe history `analytics`.`order_events_current` limit 5;

-- order_events_current: next_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- order_events_current: next_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- order_events_current: next_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- order_events_current: next_run / commit_open
reset spark.sql.files.openCostInBytes;

-- order_events_current: next_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- order_events_current: next_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- order_events_current: next_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- order_events_current: next_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- order_events_current: next_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/order_events_current__app_order_events/0`;

-- order_events_current: next_run / commit_open
set spark.databricks.delta.write.txnVersion = 9;

-- order_events_current: next_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "order_events_current__app_order_events", "tablestream.stream_id": "tablestream/order_events_current__app_order_events/0", "tablestream.to": 9, "tablestream.source": "app.order_events", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "order_events_current__app_order_events", "tablestream.stream_id": "tablestream/order_events_current__app_order_events/0", "tablestream.epoch": 0, "tablestream.from": 5, "tablestream.to": 9, "tablestream.source": "app.order_events", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- order_events_current: next_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- order_events_current: next_run / write
merge into analytics.order_events_current as target
using (
  select __tablestream_change.*,
    case when __tablestream_dead.`order_id` is not null
      then named_struct('s0', __tablestream_dead.`event_ts`, 's1', __tablestream_dead.`lsn`) end as __tablestream_tombstone
  from (with __tablestream_events as (
  select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
    __change_type = 'DELETE' or coalesce((op = 'd'), false) as __tablestream_delete
  from (select * from `__tablestream_window_order_events_current`) as __tablestream_model
  where __change_type <> 'UPDATE_BEFORE'
), __tablestream_ordered as (
  select __tablestream_event.*, named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`, 'd', __tablestream_event.__tablestream_delete, 'h', xxhash64(__tablestream_event.`order_id`, __tablestream_event.`op`, __tablestream_event.`event_ts`, __tablestream_event.`lsn`, __tablestream_event.`amount`, __tablestream_event.`status`)) as __tablestream_order
  from __tablestream_events as __tablestream_event
  left join analytics.order_events_current as __tablestream_applied0
    on __tablestream_applied0.`order_id` = __tablestream_event.`order_id`
  left join analytics.order_events_current__tablestream_tombstones as __tablestream_applied1
    on __tablestream_applied1.`order_id` = __tablestream_event.`order_id`
  where case
    when __tablestream_applied0.`order_id` is not null
      then named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`) > named_struct('s0', __tablestream_applied0.`event_ts`, 's1', __tablestream_applied0.`lsn`)
    when __tablestream_applied1.`order_id` is not null
      then named_struct('s0', __tablestream_event.`event_ts`, 's1', __tablestream_event.`lsn`) > named_struct('s0', __tablestream_applied1.`event_ts`, 's1', __tablestream_applied1.`lsn`)
    else true end
), __tablestream_ranked as (
  select *,
    row_number() over (partition by `order_id` order by __tablestream_order desc) as __tablestream_newest,
    max(case when __tablestream_delete then __tablestream_order end) over (partition by `order_id`) as __tablestream_last_delete
  from __tablestream_ordered
), __tablestream_carried as (
  select
    `order_id`,
    `op`,
    `event_ts`,
    `lsn`,
    `amount`,
    last_value(case when not __tablestream_delete
                         and (__tablestream_last_delete is null or __tablestream_order > __tablestream_last_delete)
      then `status` end, true) over (partition by `order_id` order by __tablestream_order
        rows between unbounded preceding and unbounded following) as `status`,
    `__commit_timestamp`,
    __tablestream_last_delete is not null as __tablestream_after_delete,
    __tablestream_delete, __tablestream_newest
  from __tablestream_ranked
)
select `order_id`, `op`, `event_ts`, `lsn`, `amount`, `status`, `__commit_timestamp`,
  case when __tablestream_delete then 'DELETE' else 'UPDATE_AFTER' end as __change_type, __tablestream_after_delete
from __tablestream_carried
where __tablestream_newest = 1) as __tablestream_change
  left join analytics.order_events_current__tablestream_tombstones as __tablestream_dead
    on __tablestream_dead.`order_id` = __tablestream_change.`order_id`
) as source
on target.`order_id` = source.`order_id`
  and (target.`order_id` >= 10 and target.`order_id` <= 20
    or target.`order_id` >= 40 and target.`order_id` <= 40)
when matched and source.__change_type = 'DELETE' and named_struct('s0', source.`event_ts`, 's1', source.`lsn`) > named_struct('s0', target.`event_ts`, 's1', target.`lsn`) then delete
when matched and source.__change_type <> 'DELETE' and named_struct('s0', source.`event_ts`, 's1', source.`lsn`) > named_struct('s0', target.`event_ts`, 's1', target.`lsn`) then update set
  target.`order_id` = source.`order_id`,
  target.`amount` = source.`amount`,
  target.`status` = case when source.__tablestream_after_delete then source.`status` else coalesce(source.`status`, target.`status`) end,
  target.`event_ts` = source.`event_ts`,
  target.`lsn` = source.`lsn`
when not matched and source.__change_type <> 'DELETE'
  and (source.__tablestream_tombstone is null or named_struct('s0', source.`event_ts`, 's1', source.`lsn`) > source.__tablestream_tombstone) then
  insert (`order_id`, `event_ts`, `lsn`, `amount`, `status`)
  values (source.`order_id`, source.`event_ts`, source.`lsn`, source.`amount`, source.`status`);

-- order_events_current: next_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- order_events_current: next_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- order_events_current: next_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- order_events_current: next_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- order_events_current: next_run / target_marker
describe history `analytics`.`order_events_current` limit 5;

-- order_events_current: next_run / uncache_window
uncache table if exists `__tablestream_window_order_events_current`;

-- order_events_current: next_run / uncache_window
drop view if exists `__tablestream_window_order_events_current`;

-- order_events_current: next_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'order_events_current__app_order_events' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/order_events_current__app_order_events/0' as stream_id,
    'app.order_events' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(5 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.order_events_current' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- order_events_current: next_run / pause_point
select java_method('java.lang.Thread', 'sleep', cast(1500 as bigint)) as paused;

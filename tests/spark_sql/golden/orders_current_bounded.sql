-- orders_current_bounded: operations / enable_change_tracking
alter table app.orders set tblproperties ('delta.enableChangeDataFeed' = 'true');

-- orders_current_bounded: operations / show_streams
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

-- orders_current_bounded: first_run / source_state
describe detail app.orders;

-- orders_current_bounded: first_run / source_state
describe history `app`.`orders`;

-- orders_current_bounded: first_run / window_check
select current_timestamp() - try_cast('interval 1 week' as interval) as retained_from, current_timestamp() as checked_at;

-- orders_current_bounded: first_run / model
select order_id, customer, amount, status, __change_type, __commit_version
from (
  /* tablestream:window {"stream": "orders_current_bounded__app_orders", "stream_id": "tablestream\/orders_current_bounded__app_orders\/0", "source": "app.orders", "after": 1, "through": 4, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": 3, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_current_bounded__app_orders", "remedy": null} */
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
    from table_changes('app.orders', 2, 4)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
);

-- orders_current_bounded: first_run / null_keys
select count(*) as rows_read, count_if(`order_id` is null) as null_keys from (

select order_id, customer, amount, status, __change_type, __commit_version
from (
  /* tablestream:window {"stream": "orders_current_bounded__app_orders", "stream_id": "tablestream\/orders_current_bounded__app_orders\/0", "source": "app.orders", "after": 1, "through": 4, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": 3, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_current_bounded__app_orders", "remedy": null} */
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
    from table_changes('app.orders', 2, 4)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
)) as __tablestream_keys;

-- orders_current_bounded: first_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- orders_current_bounded: first_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- orders_current_bounded: first_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- orders_current_bounded: first_run / commit_open
reset spark.sql.files.openCostInBytes;

-- orders_current_bounded: first_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- orders_current_bounded: first_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- orders_current_bounded: first_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- orders_current_bounded: first_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- orders_current_bounded: first_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/orders_current_bounded__app_orders/0`;

-- orders_current_bounded: first_run / commit_open
set spark.databricks.delta.write.txnVersion = 4;

-- orders_current_bounded: first_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "orders_current_bounded__app_orders", "tablestream.stream_id": "tablestream/orders_current_bounded__app_orders/0", "tablestream.to": 4, "tablestream.source": "app.orders", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "orders_current_bounded__app_orders", "tablestream.stream_id": "tablestream/orders_current_bounded__app_orders/0", "tablestream.epoch": 0, "tablestream.from": 1, "tablestream.to": 4, "tablestream.source": "app.orders", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- orders_current_bounded: first_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- orders_current_bounded: first_run / write
create or replace table analytics.orders_current_bounded
using delta




as
select `order_id`, `customer`, `amount`, `status`
from (with __tablestream_changes as (
  select *, case when __change_type in ('DELETE', 'UPDATE_BEFORE') then 0 else 1 end as __tablestream_rank
  from (

select order_id, customer, amount, status, __change_type, __commit_version
from (
  /* tablestream:window {"stream": "orders_current_bounded__app_orders", "stream_id": "tablestream\/orders_current_bounded__app_orders\/0", "source": "app.orders", "after": 1, "through": 4, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": 3, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_current_bounded__app_orders", "remedy": null} */
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
    from table_changes('app.orders', 2, 4)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
)) as __tablestream_model
), __tablestream_ordered as (
  select *,
    row_number() over (partition by `order_id` order by __commit_version, __tablestream_rank)
      as __tablestream_first,
    row_number() over (partition by `order_id` order by __commit_version desc, __tablestream_rank desc)
      as __tablestream_last,
    first_value(__change_type) over (partition by `order_id` order by __commit_version, __tablestream_rank rows between unbounded preceding and unbounded following) in ('UPDATE_BEFORE', 'DELETE', 'UPDATE_AFTER')
      as __tablestream_existed,
    last_value(__change_type) over (partition by `order_id` order by __commit_version, __tablestream_rank rows between unbounded preceding and unbounded following) in ('INSERT', 'UPDATE_AFTER') as __tablestream_exists
  from __tablestream_changes
)
select `order_id`, `customer`, `amount`, `status`, `__commit_version`, 'UPDATE_BEFORE' as __change_type from __tablestream_ordered
where __tablestream_first = 1 and __tablestream_existed and __tablestream_exists
  and __change_type in ('UPDATE_BEFORE', 'DELETE')
union all
select `order_id`, `customer`, `amount`, `status`, `__commit_version`,
  case when not __tablestream_exists then 'DELETE' when __tablestream_existed then 'UPDATE_AFTER' else 'INSERT' end
    as __change_type
from __tablestream_ordered
where (__tablestream_last = 1 and __tablestream_exists)
  or (__tablestream_first = 1 and __tablestream_existed and not __tablestream_exists)) as __tablestream_net
where __change_type in ('INSERT', 'UPDATE_AFTER')
order by `order_id`;

-- orders_current_bounded: first_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- orders_current_bounded: first_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- orders_current_bounded: first_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- orders_current_bounded: first_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- orders_current_bounded: first_run / target_marker
describe history `analytics`.`orders_current_bounded` limit 5;

-- orders_current_bounded: first_run / offsets_append
create table if not exists analytics.tablestream_offsets using delta partitioned by (stream_name) as
select * from (

  select
    'orders_current_bounded__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/orders_current_bounded__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(1 as bigint) as from_version,
    cast(4 as bigint) as to_version,
    'analytics.orders_current_bounded' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at

) as __tablestream_offset where 1 = 0;

-- orders_current_bounded: first_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'orders_current_bounded__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/orders_current_bounded__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(1 as bigint) as from_version,
    cast(4 as bigint) as to_version,
    'analytics.orders_current_bounded' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- orders_current_bounded: next_run / offsets_read
select epoch, to_version, source_table_id, mode, source, count(*) over () as runs
from analytics.tablestream_offsets
where stream_name = 'orders_current_bounded__app_orders'
order by epoch desc nulls last, to_version desc nulls last, committed_at desc nulls last
limit 1;

-- orders_current_bounded: next_run / target_marker
describe history `analytics`.`orders_current_bounded` limit 5;

-- orders_current_bounded: next_run / source_state
describe detail app.orders;

-- orders_current_bounded: next_run / source_state
describe history `app`.`orders` limit 10;

-- orders_current_bounded: next_run / window_check
select current_timestamp() - try_cast('interval 1 week' as interval) as retained_from, current_timestamp() as checked_at;

-- orders_current_bounded: next_run / model
select order_id, customer, amount, status, __change_type, __commit_version
from (
  /* tablestream:window {"stream": "orders_current_bounded__app_orders", "stream_id": "tablestream\/orders_current_bounded__app_orders\/0", "source": "app.orders", "after": 5, "through": 8, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": 3, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_current_bounded__app_orders", "remedy": null} */
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
    from table_changes('app.orders', 6, 8)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
);

-- orders_current_bounded: next_run / cache_window
create or replace temporary view `__tablestream_window_orders_current_bounded` as select * from (

select order_id, customer, amount, status, __change_type, __commit_version
from (
  /* tablestream:window {"stream": "orders_current_bounded__app_orders", "stream_id": "tablestream\/orders_current_bounded__app_orders\/0", "source": "app.orders", "after": 5, "through": 8, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": 3, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_current_bounded__app_orders", "remedy": null} */
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
    from table_changes('app.orders', 6, 8)
    window __tablestream_pair as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end
        rows between unbounded preceding and unbounded following),
      __tablestream_side as (partition by _commit_version, _change_type in ('update_preimage', 'update_postimage'), `order_id`, `customer`, `amount`, `status` order by case when _change_type in ('update_preimage', 'delete') then 0 else 1 end)
  ) as __tablestream_pairs
  where __tablestream_rank - (case when _change_type in ('update_preimage', 'delete') then 0 else __tablestream_before end)
    > least(__tablestream_before, __tablestream_after)
) as __tablestream_changes
)) as __tablestream_cached;

-- orders_current_bounded: next_run / cache_window
cache lazy table `__tablestream_window_orders_current_bounded`;

-- orders_current_bounded: next_run / null_keys
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
          from (select * from `__tablestream_window_orders_current_bounded`) as __tablestream_rows
          group by `order_id`
        ) as __tablestream_keys
      ) as __tablestream_gaps
    ) as __tablestream_cuts
  ) as __tablestream_ranged
  group by __tablestream_range
) as __tablestream_key_ranges;

-- orders_current_bounded: next_run / target_marker
describe history `analytics`.`orders_current_bounded` limit 5;

-- orders_current_bounded: next_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- orders_current_bounded: next_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- orders_current_bounded: next_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- orders_current_bounded: next_run / commit_open
reset spark.sql.files.openCostInBytes;

-- orders_current_bounded: next_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- orders_current_bounded: next_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- orders_current_bounded: next_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- orders_current_bounded: next_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- orders_current_bounded: next_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/orders_current_bounded__app_orders/0`;

-- orders_current_bounded: next_run / commit_open
set spark.databricks.delta.write.txnVersion = 8;

-- orders_current_bounded: next_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "orders_current_bounded__app_orders", "tablestream.stream_id": "tablestream/orders_current_bounded__app_orders/0", "tablestream.to": 8, "tablestream.source": "app.orders", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "orders_current_bounded__app_orders", "tablestream.stream_id": "tablestream/orders_current_bounded__app_orders/0", "tablestream.epoch": 0, "tablestream.from": 5, "tablestream.to": 8, "tablestream.source": "app.orders", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- orders_current_bounded: next_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- orders_current_bounded: next_run / write
merge into analytics.orders_current_bounded as target
using (
select `order_id`, `customer`, `amount`, `status`, __change_type, __commit_version,
  cast(null as timestamp) as __commit_timestamp
from (with __tablestream_changes as (
  select *, case when __change_type in ('DELETE', 'UPDATE_BEFORE') then 0 else 1 end as __tablestream_rank
  from (select * from `__tablestream_window_orders_current_bounded`) as __tablestream_model
), __tablestream_ordered as (
  select *,
    row_number() over (partition by `order_id` order by __commit_version, __tablestream_rank)
      as __tablestream_first,
    row_number() over (partition by `order_id` order by __commit_version desc, __tablestream_rank desc)
      as __tablestream_last,
    first_value(__change_type) over (partition by `order_id` order by __commit_version, __tablestream_rank rows between unbounded preceding and unbounded following) in ('UPDATE_BEFORE', 'DELETE', 'UPDATE_AFTER')
      as __tablestream_existed,
    last_value(__change_type) over (partition by `order_id` order by __commit_version, __tablestream_rank rows between unbounded preceding and unbounded following) in ('INSERT', 'UPDATE_AFTER') as __tablestream_exists
  from __tablestream_changes
)
select `order_id`, `customer`, `amount`, `status`, `__commit_version`, 'UPDATE_BEFORE' as __change_type from __tablestream_ordered
where __tablestream_first = 1 and __tablestream_existed and __tablestream_exists
  and __change_type in ('UPDATE_BEFORE', 'DELETE')
union all
select `order_id`, `customer`, `amount`, `status`, `__commit_version`,
  case when not __tablestream_exists then 'DELETE' when __tablestream_existed then 'UPDATE_AFTER' else 'INSERT' end
    as __change_type
from __tablestream_ordered
where (__tablestream_last = 1 and __tablestream_exists)
  or (__tablestream_first = 1 and __tablestream_existed and not __tablestream_exists)) as __tablestream_net
where __change_type <> 'UPDATE_BEFORE'
) as source
on target.`order_id` = source.`order_id` and (target.`order_id` >= 10 and target.`order_id` <= 20
    or target.`order_id` >= 40 and target.`order_id` <= 40)
when matched and source.`__change_type` = 'DELETE' then delete
when matched and source.`__change_type` <> 'DELETE' then update set
  target.`order_id` = source.`order_id`,
  target.`customer` = source.`customer`,
  target.`amount` = source.`amount`,
  target.`status` = source.`status`
when not matched and source.`__change_type` <> 'DELETE' then insert (`order_id`, `customer`, `amount`, `status`)
  values (source.`order_id`, source.`customer`, source.`amount`, source.`status`);

-- orders_current_bounded: next_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- orders_current_bounded: next_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- orders_current_bounded: next_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- orders_current_bounded: next_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- orders_current_bounded: next_run / target_marker
describe history `analytics`.`orders_current_bounded` limit 5;

-- orders_current_bounded: next_run / uncache_window
uncache table if exists `__tablestream_window_orders_current_bounded`;

-- orders_current_bounded: next_run / uncache_window
drop view if exists `__tablestream_window_orders_current_bounded`;

-- orders_current_bounded: next_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'orders_current_bounded__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/orders_current_bounded__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(5 as bigint) as from_version,
    cast(8 as bigint) as to_version,
    'analytics.orders_current_bounded' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- orders_current_bounded: next_run / pause_point
select java_method('java.lang.Thread', 'sleep', cast(1500 as bigint)) as paused;

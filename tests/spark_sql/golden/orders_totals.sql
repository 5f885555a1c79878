-- orders_totals: operations / enable_change_tracking
alter table app.orders set tblproperties ('delta.enableChangeDataFeed' = 'true');

-- orders_totals: operations / show_streams
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

-- orders_totals: first_run / source_state
describe detail app.orders;

-- orders_totals: first_run / source_state
describe history `app`.`orders` limit 1;

-- orders_totals: first_run / model
select customer, status, amount, __change_type
from (
  /* tablestream:window {"stream": "orders_totals__app_orders", "stream_id": "tablestream\/orders_totals__app_orders\/0", "source": "app.orders", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_totals__app_orders", "remedy": null} */
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

-- orders_totals: first_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- orders_totals: first_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- orders_totals: first_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- orders_totals: first_run / commit_open
reset spark.sql.files.openCostInBytes;

-- orders_totals: first_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- orders_totals: first_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- orders_totals: first_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- orders_totals: first_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- orders_totals: first_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/orders_totals__app_orders/0`;

-- orders_totals: first_run / commit_open
set spark.databricks.delta.write.txnVersion = 9;

-- orders_totals: first_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "orders_totals__app_orders", "tablestream.stream_id": "tablestream/orders_totals__app_orders/0", "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "orders_totals__app_orders", "tablestream.stream_id": "tablestream/orders_totals__app_orders/0", "tablestream.epoch": 0, "tablestream.from": 9, "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- orders_totals: first_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- orders_totals: first_run / write
create or replace table analytics.orders_totals
using delta




as
select `customer`, `status`, count(*) as `orders`, count(`amount`) as `priced_orders`, sum(`amount`) as `revenue`, avg(`amount`) as `mean_amount`, min(`amount`) as `smallest`, max(`amount`) as `largest`, count(*) as `__tablestream_rows`, count(`amount`) as `__tablestream_count_amount`, sum(`amount`) as `__tablestream_sum_amount`
from (

select customer, status, amount, __change_type
from (
  /* tablestream:window {"stream": "orders_totals__app_orders", "stream_id": "tablestream\/orders_totals__app_orders\/0", "source": "app.orders", "after": 9, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": true, "snapshot": true, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_totals__app_orders", "remedy": null} */
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
)) as __tablestream_rows_read
group by `customer`, `status`
order by `customer`, `status`;

-- orders_totals: first_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- orders_totals: first_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- orders_totals: first_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- orders_totals: first_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- orders_totals: first_run / target_marker
describe history `analytics`.`orders_totals` limit 5;

-- orders_totals: first_run / offsets_append
create table if not exists analytics.tablestream_offsets using delta partitioned by (stream_name) as
select * from (

  select
    'orders_totals__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/orders_totals__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(9 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.orders_totals' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at

) as __tablestream_offset where 1 = 0;

-- orders_totals: first_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'orders_totals__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/orders_totals__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(9 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.orders_totals' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- orders_totals: next_run / offsets_read
select epoch, to_version, source_table_id, mode, source, count(*) over () as runs
from analytics.tablestream_offsets
where stream_name = 'orders_totals__app_orders'
order by epoch desc nulls last, to_version desc nulls last, committed_at desc nulls last
limit 1;

-- orders_totals: next_run / target_marker
describe history `analytics`.`orders_totals` limit 5;

-- orders_totals: next_run / source_state
describe detail app.orders;

-- orders_totals: next_run / source_state
describe history `app`.`orders` limit 10;

-- orders_totals: next_run / window_check
select current_timestamp() - try_cast('interval 1 week' as interval) as retained_from, current_timestamp() as checked_at;

-- orders_totals: next_run / model
select customer, status, amount, __change_type
from (
  select * from (
  /* tablestream:window {"stream": "orders_totals__app_orders", "stream_id": "tablestream\/orders_totals__app_orders\/0", "source": "app.orders", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_totals__app_orders", "remedy": null} */
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
) as __tablestream_window_rows where /* tablestream:rows */ 'window' = 'window'
  union all
  select * from (
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
) as __tablestream_now_rows where /* tablestream:rows */ 'window' = 'current'
);

-- orders_totals: next_run / cache_window
create or replace temporary view `__tablestream_window_orders_totals` as select * from (

select customer, status, amount, __change_type
from (
  select * from (
  /* tablestream:window {"stream": "orders_totals__app_orders", "stream_id": "tablestream\/orders_totals__app_orders\/0", "source": "app.orders", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_totals__app_orders", "remedy": null} */
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
) as __tablestream_window_rows where /* tablestream:rows */ 'window' = 'window'
  union all
  select * from (
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
) as __tablestream_now_rows where /* tablestream:rows */ 'window' = 'current'
)) as __tablestream_cached;

-- orders_totals: next_run / cache_window
cache table `__tablestream_window_orders_totals`;

-- orders_totals: next_run / recomputed_groups
with __tablestream_signed as (
  select *, case when __change_type in ('DELETE', 'UPDATE_BEFORE') then -1 else 1 end as __tablestream_sign
  from (select * from `__tablestream_window_orders_totals`) as __tablestream_rows_read
),
__tablestream_deltas as (
  select `customer`, `status`, sum(__tablestream_sign) as `__tablestream_d_rows`,
    sum(case when `amount` is not null then __tablestream_sign else 0 end) as `__tablestream_d_count_amount`,
    sum(case when __tablestream_sign > 0 then `amount` else -`amount` end) as `__tablestream_d_sum_amount`
  from __tablestream_signed
  group by `customer`, `status`
),
__tablestream_values_0 as (
  select `customer`, `status`,
    min(case when __tablestream_net > 0 then __tablestream_value end) as `__tablestream_added_min_amount`,
    min(case when __tablestream_net < 0 then __tablestream_value end) as `__tablestream_removed_min_amount`,
    max(case when __tablestream_net > 0 then __tablestream_value end) as `__tablestream_added_max_amount`,
    max(case when __tablestream_net < 0 then __tablestream_value end) as `__tablestream_removed_max_amount`
  from (
    select `customer`, `status`, `amount` as __tablestream_value, sum(__tablestream_sign) as __tablestream_net
    from __tablestream_signed
    where `amount` is not null
    group by `customer`, `status`, `amount`
  ) as __tablestream_net_values
  group by `customer`, `status`
),
__tablestream_flagged as (
  select __tablestream_window.*,
    __tablestream_values_0.`__tablestream_added_min_amount`,
    __tablestream_values_0.`__tablestream_removed_min_amount`,
    __tablestream_values_0.`__tablestream_added_max_amount`,
    __tablestream_values_0.`__tablestream_removed_max_amount`,
    coalesce(__tablestream_target.__tablestream_rows, 0) + __tablestream_window.__tablestream_d_rows > 0 and ((__tablestream_values_0.`__tablestream_removed_min_amount` is not null and (least(__tablestream_target.`smallest`, __tablestream_values_0.`__tablestream_added_min_amount`) is null or __tablestream_values_0.`__tablestream_removed_min_amount` <= least(__tablestream_target.`smallest`, __tablestream_values_0.`__tablestream_added_min_amount`))) or (__tablestream_values_0.`__tablestream_removed_max_amount` is not null and (greatest(__tablestream_target.`largest`, __tablestream_values_0.`__tablestream_added_max_amount`) is null or __tablestream_values_0.`__tablestream_removed_max_amount` >= greatest(__tablestream_target.`largest`, __tablestream_values_0.`__tablestream_added_max_amount`)))) as __tablestream_recompute
  from __tablestream_deltas as __tablestream_window
  left join __tablestream_values_0 on __tablestream_values_0.`customer` <=> __tablestream_window.`customer` and __tablestream_values_0.`status` <=> __tablestream_window.`status`
  left join analytics.orders_totals as __tablestream_target on __tablestream_target.`customer` <=> __tablestream_window.`customer` and __tablestream_target.`status` <=> __tablestream_window.`status`
)
select to_json(collect_list(array(cast(`customer` as string), cast(`status` as string)))) from (select * from __tablestream_flagged where __tablestream_recompute limit 1001) as __tablestream_listed;

-- orders_totals: next_run / key_ranges
select to_json(collect_list(case when lo is not null then array(cast(lo as string), cast(hi as string)) end)) as key_ranges
from (
  select min(__tablestream_key) as lo, max(__tablestream_key) as hi
  from (
    select *,
      sum(case when __tablestream_cut < 32 then 1 else 0 end)
        over (order by __tablestream_key rows between unbounded preceding and current row) as __tablestream_range
    from (
      select *,
        case when __tablestream_gap is not null then row_number() over (order by __tablestream_gap desc nulls last) end
          as __tablestream_cut
      from (
        select *, cast(null as int) as __tablestream_gap
        from (
          select `customer` as __tablestream_key
          from (select * from `__tablestream_window_orders_totals`) as __tablestream_rows
          group by `customer`
        ) as __tablestream_keys
      ) as __tablestream_gaps
    ) as __tablestream_cuts
  ) as __tablestream_ranged
  group by __tablestream_range
) as __tablestream_key_ranges;

-- orders_totals: next_run / target_marker
describe history `analytics`.`orders_totals` limit 5;

-- orders_totals: next_run / commit_open
reset spark.databricks.delta.merge.deletionVectors.persistent;

-- orders_totals: next_run / commit_open
reset spark.databricks.delta.replaceWhere.constraintCheck.enabled;

-- orders_totals: next_run / commit_open
reset spark.sql.parquet.filterPushdown;

-- orders_totals: next_run / commit_open
reset spark.sql.files.openCostInBytes;

-- orders_totals: next_run / commit_open
reset spark.databricks.delta.autoCompact.enabled;

-- orders_totals: next_run / commit_open
reset spark.databricks.delta.autoCompact.minNumFiles;

-- orders_totals: next_run / commit_open
reset spark.databricks.delta.autoCompact.minFileSize;

-- orders_totals: next_run / commit_open
reset spark.databricks.delta.autoCompact.maxFileSize;

-- orders_totals: next_run / commit_open
set spark.databricks.delta.write.txnAppId = `tablestream/orders_totals__app_orders/0`;

-- orders_totals: next_run / commit_open
set spark.databricks.delta.write.txnVersion = 9;

-- orders_totals: next_run / commit_open
set spark.databricks.delta.commitInfo.userMetadata = `{"tablestream.stream": "orders_totals__app_orders", "tablestream.stream_id": "tablestream/orders_totals__app_orders/0", "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.invocation_id": "<invocation_id>", "tablestream.inputs": [{"tablestream.stream": "orders_totals__app_orders", "tablestream.stream_id": "tablestream/orders_totals__app_orders/0", "tablestream.epoch": 0, "tablestream.from": 5, "tablestream.to": 9, "tablestream.source": "app.orders", "tablestream.source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "tablestream.invocation_id": "<invocation_id>"}]}`;

-- orders_totals: next_run / commit_open
set spark.sql.files.maxRecordsPerFile = 250000;

-- orders_totals: next_run / write
merge into analytics.orders_totals as __tablestream_target
using (
  with __tablestream_signed as (
    select *, case when __change_type in ('DELETE', 'UPDATE_BEFORE') then -1 else 1 end as __tablestream_sign
    from (select * from `__tablestream_window_orders_totals`) as __tablestream_rows_read
  ),
  __tablestream_deltas as (
    select `customer`, `status`, sum(__tablestream_sign) as `__tablestream_d_rows`,
      sum(case when `amount` is not null then __tablestream_sign else 0 end) as `__tablestream_d_count_amount`,
      sum(case when __tablestream_sign > 0 then `amount` else -`amount` end) as `__tablestream_d_sum_amount`,
      coalesce((`customer` = cast('ann' as string) and `status` = cast('paid' as string)) or (`customer` = cast('bob' as string) and `status` is null), false) as `__tablestream_listed_group`
    from __tablestream_signed
    group by `customer`, `status`
  ),
  __tablestream_values_0 as (
    select `customer`, `status`,
      min(case when __tablestream_net > 0 then __tablestream_value end) as `__tablestream_added_min_amount`,
      min(case when __tablestream_net < 0 then __tablestream_value end) as `__tablestream_removed_min_amount`,
      max(case when __tablestream_net > 0 then __tablestream_value end) as `__tablestream_added_max_amount`,
      max(case when __tablestream_net < 0 then __tablestream_value end) as `__tablestream_removed_max_amount`
    from (
      select `customer`, `status`, `amount` as __tablestream_value, sum(__tablestream_sign) as __tablestream_net
      from __tablestream_signed
      where `amount` is not null
      group by `customer`, `status`, `amount`
    ) as __tablestream_net_values
    group by `customer`, `status`
  ),
  __tablestream_flagged as (
    select __tablestream_window.*,
      __tablestream_values_0.`__tablestream_added_min_amount`,
      __tablestream_values_0.`__tablestream_removed_min_amount`,
      __tablestream_values_0.`__tablestream_added_max_amount`,
      __tablestream_values_0.`__tablestream_removed_max_amount`,
      __tablestream_window.__tablestream_listed_group as __tablestream_recompute
    from __tablestream_deltas as __tablestream_window
    left join __tablestream_values_0 on __tablestream_values_0.`customer` <=> __tablestream_window.`customer` and __tablestream_values_0.`status` <=> __tablestream_window.`status`
  ),
  __tablestream_current as (
    select `customer`, `status`, count(*) as `orders`, count(`amount`) as `priced_orders`, sum(`amount`) as `revenue`, avg(`amount`) as `mean_amount`, min(`amount`) as `smallest`, max(`amount`) as `largest`, count(*) as `__tablestream_rows`, count(`amount`) as `__tablestream_count_amount`, sum(`amount`) as `__tablestream_sum_amount`
    from (select * from (

    select customer, status, amount, __change_type
    from (
      select * from (
      /* tablestream:window {"stream": "orders_totals__app_orders", "stream_id": "tablestream\/orders_totals__app_orders\/0", "source": "app.orders", "after": 5, "through": 9, "mode": "standard", "read": "table_changes", "spark_net_changes": false, "drop_carryovers": true, "on_feed_off": "fail", "max_versions": null, "epoch": 0, "source_table_id": "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11", "latest": 9, "restart": false, "snapshot": false, "timestamp": "2026-11-21 09:30:00", "file_retention": null, "runs": null, "view": "window", "split": null, "schema_change": null, "schema_version": null, "appends_only": false, "window_files": null, "note": null, "files": null, "subject": "Stream orders_totals__app_orders", "remedy": null} */
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
    ) as __tablestream_window_rows where /* tablestream:rows */ 'current' = 'window'
      union all
      select * from (
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
    ) as __tablestream_now_rows where /* tablestream:rows */ 'current' = 'current'
    )) as __tablestream_now where (`customer` = cast('ann' as string) and `status` = cast('paid' as string)) or (`customer` = cast('bob' as string) and `status` is null)) as __tablestream_rows_read
    group by `customer`, `status`
  )
  select __tablestream_window.*, __tablestream_current.__tablestream_rows is not null as __tablestream_found,
    __tablestream_current.`orders` as `__tablestream_r_orders`,
    __tablestream_current.`priced_orders` as `__tablestream_r_priced_orders`,
    __tablestream_current.`revenue` as `__tablestream_r_revenue`,
    __tablestream_current.`mean_amount` as `__tablestream_r_mean_amount`,
    __tablestream_current.`smallest` as `__tablestream_r_smallest`,
    __tablestream_current.`largest` as `__tablestream_r_largest`,
    __tablestream_current.`__tablestream_rows` as `__tablestream_r___tablestream_rows`,
    __tablestream_current.`__tablestream_count_amount` as `__tablestream_r___tablestream_count_amount`,
    __tablestream_current.`__tablestream_sum_amount` as `__tablestream_r___tablestream_sum_amount`
  from __tablestream_flagged as __tablestream_window
  left join __tablestream_current
    on __tablestream_current.`customer` <=> __tablestream_window.`customer` and __tablestream_current.`status` <=> __tablestream_window.`status`
) as __tablestream_window
on __tablestream_target.`customer` <=> __tablestream_window.`customer` and __tablestream_target.`status` <=> __tablestream_window.`status`
  and ((__tablestream_target.`customer` >= 'ann' and __tablestream_target.`customer` <= 'bob'
    or __tablestream_target.`customer` >= 'eve' and __tablestream_target.`customer` <= 'eve')
    or __tablestream_target.`customer` is null)
when matched and __tablestream_window.__tablestream_recompute and not __tablestream_window.__tablestream_found
  then delete
when matched and __tablestream_window.__tablestream_recompute then update set
  `orders` = __tablestream_window.`__tablestream_r_orders`,
  `priced_orders` = __tablestream_window.`__tablestream_r_priced_orders`,
  `revenue` = __tablestream_window.`__tablestream_r_revenue`,
  `mean_amount` = __tablestream_window.`__tablestream_r_mean_amount`,
  `smallest` = __tablestream_window.`__tablestream_r_smallest`,
  `largest` = __tablestream_window.`__tablestream_r_largest`,
  `__tablestream_rows` = __tablestream_window.`__tablestream_r___tablestream_rows`,
  `__tablestream_count_amount` = __tablestream_window.`__tablestream_r___tablestream_count_amount`,
  `__tablestream_sum_amount` = __tablestream_window.`__tablestream_r___tablestream_sum_amount`
when matched and __tablestream_target.__tablestream_rows + __tablestream_window.__tablestream_d_rows <= 0 then delete
when matched then update set
  `orders` = __tablestream_target.`orders` + __tablestream_window.__tablestream_d_rows,
  `priced_orders` = __tablestream_target.`priced_orders` + __tablestream_window.`__tablestream_d_count_amount`,
  `revenue` = case when (__tablestream_target.`__tablestream_count_amount` + __tablestream_window.`__tablestream_d_count_amount`) = 0 then null else coalesce(__tablestream_target.`revenue`, 0) + coalesce(__tablestream_window.`__tablestream_d_sum_amount`, 0) end,
  `mean_amount` = case when (__tablestream_target.`__tablestream_count_amount` + __tablestream_window.`__tablestream_d_count_amount`) = 0 then null else cast(cast(case when (__tablestream_target.`__tablestream_count_amount` + __tablestream_window.`__tablestream_d_count_amount`) = 0 then null else coalesce(__tablestream_target.`__tablestream_sum_amount`, 0) + coalesce(__tablestream_window.`__tablestream_d_sum_amount`, 0) end as decimal(22, 2)) / cast((__tablestream_target.`__tablestream_count_amount` + __tablestream_window.`__tablestream_d_count_amount`) as decimal(20, 0)) as decimal(16, 6)) end,
  `smallest` = least(__tablestream_target.`smallest`, __tablestream_window.`__tablestream_added_min_amount`),
  `largest` = greatest(__tablestream_target.`largest`, __tablestream_window.`__tablestream_added_max_amount`),
  `__tablestream_rows` = __tablestream_target.`__tablestream_rows` + __tablestream_window.__tablestream_d_rows,
  `__tablestream_count_amount` = __tablestream_target.`__tablestream_count_amount` + __tablestream_window.`__tablestream_d_count_amount`,
  `__tablestream_sum_amount` = case when (__tablestream_target.`__tablestream_count_amount` + __tablestream_window.`__tablestream_d_count_amount`) = 0 then null else coalesce(__tablestream_target.`__tablestream_sum_amount`, 0) + coalesce(__tablestream_window.`__tablestream_d_sum_amount`, 0) end
when not matched and __tablestream_window.__tablestream_recompute and __tablestream_window.__tablestream_found
  then insert (`customer`, `status`, `orders`, `priced_orders`, `revenue`, `mean_amount`, `smallest`, `largest`, `__tablestream_rows`, `__tablestream_count_amount`, `__tablestream_sum_amount`)
  values (__tablestream_window.`customer`, __tablestream_window.`status`, __tablestream_window.`__tablestream_r_orders`, __tablestream_window.`__tablestream_r_priced_orders`, __tablestream_window.`__tablestream_r_revenue`, __tablestream_window.`__tablestream_r_mean_amount`, __tablestream_window.`__tablestream_r_smallest`, __tablestream_window.`__tablestream_r_largest`, __tablestream_window.`__tablestream_r___tablestream_rows`, __tablestream_window.`__tablestream_r___tablestream_count_amount`, __tablestream_window.`__tablestream_r___tablestream_sum_amount`)
when not matched and not __tablestream_window.__tablestream_recompute and __tablestream_window.__tablestream_d_rows > 0
  then insert (`customer`, `status`, `orders`, `priced_orders`, `revenue`, `mean_amount`, `smallest`, `largest`, `__tablestream_rows`, `__tablestream_count_amount`, `__tablestream_sum_amount`)
  values (__tablestream_window.`customer`, __tablestream_window.`status`, __tablestream_window.__tablestream_d_rows, __tablestream_window.`__tablestream_d_count_amount`, case when __tablestream_window.`__tablestream_d_count_amount` = 0 then null else __tablestream_window.`__tablestream_d_sum_amount` end, case when __tablestream_window.`__tablestream_d_count_amount` = 0 then null else cast(cast(case when __tablestream_window.`__tablestream_d_count_amount` = 0 then null else __tablestream_window.`__tablestream_d_sum_amount` end as decimal(22, 2)) / cast(__tablestream_window.`__tablestream_d_count_amount` as decimal(20, 0)) as decimal(16, 6)) end, __tablestream_window.`__tablestream_added_min_amount`, __tablestream_window.`__tablestream_added_max_amount`, __tablestream_window.__tablestream_d_rows, __tablestream_window.`__tablestream_d_count_amount`, case when __tablestream_window.`__tablestream_d_count_amount` = 0 then null else __tablestream_window.`__tablestream_d_sum_amount` end);

-- orders_totals: next_run / commit_close
reset spark.databricks.delta.write.txnAppId;

-- orders_totals: next_run / commit_close
reset spark.databricks.delta.write.txnVersion;

-- orders_totals: next_run / commit_close
reset spark.databricks.delta.commitInfo.userMetadata;

-- orders_totals: next_run / commit_close
reset spark.sql.files.maxRecordsPerFile;

-- orders_totals: next_run / target_marker
describe history `analytics`.`orders_totals` limit 5;

-- orders_totals: next_run / uncache_window
uncache table if exists `__tablestream_window_orders_totals`;

-- orders_totals: next_run / uncache_window
drop view if exists `__tablestream_window_orders_totals`;

-- orders_totals: next_run / offsets_append
insert into analytics.tablestream_offsets (stream_name, epoch, stream_id, source, source_table_id, mode, from_version, to_version, target, rows_written, invocation_id, committed_at)

  select
    'orders_totals__app_orders' as stream_name,
    cast(0 as bigint) as epoch,
    'tablestream/orders_totals__app_orders/0' as stream_id,
    'app.orders' as source,
    '0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11' as source_table_id,
    'standard' as mode,
    cast(5 as bigint) as from_version,
    cast(9 as bigint) as to_version,
    'analytics.orders_totals' as target,
    cast(42 as bigint) as rows_written,
    '<invocation_id>' as invocation_id,
    current_timestamp() as committed_at;

-- orders_totals: next_run / pause_point
select java_method('java.lang.Thread', 'sleep', cast(1500 as bigint)) as paused;

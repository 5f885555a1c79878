-- directory_table: sync / files_view
create or replace temporary view landing_files__tablestream_files using binaryFile options (path 'abfss://landing@account.dfs.core.windows.net/orders/', recursiveFileLookup 'true');

-- directory_table: sync / listing_view
create or replace temporary view landing_files__tablestream_listing as
select * from (
  select
    substring(path, instr(path, 'landing@account.dfs.core.windows.net/orders') + 44) as relative_path,
    path as url,
    length as size,
    modificationTime as last_modified_time,
    concat(cast(length as string), '-', cast(unix_micros(modificationTime) as string)) as fingerprint
  from landing_files__tablestream_files
) as __tablestream_files
where not relative_path rlike '(^|/)[._]'
  and relative_path rlike '^(?:.*\\.json|daily/.*\\.csv)$'
  and not relative_path rlike '^(?:.*tmp.*|a\\.b.)$';

-- directory_table: sync / create
create or replace table analytics.landing_files using delta tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.logRetentionDuration' = 'interval 7 days') as select relative_path, url, size, last_modified_time, fingerprint from landing_files__tablestream_listing;

-- directory_table: sync / diff
select
  count_if(s.relative_path is not null) as files,
  count_if(t.relative_path is null) as inserted,
  count_if(s.relative_path is not null and t.relative_path is not null
           and (s.size <> t.size or s.last_modified_time <> t.last_modified_time)) as updated,
  count_if(s.relative_path is null) as deleted
from landing_files__tablestream_listing as s
full outer join analytics.landing_files as t on s.relative_path = t.relative_path;

-- directory_table: sync / merge
merge into analytics.landing_files as t
using landing_files__tablestream_listing as s
on t.relative_path = s.relative_path
when matched and (t.size <> s.size or t.last_modified_time <> s.last_modified_time) then update set *
when not matched then insert *
when not matched by source then delete;

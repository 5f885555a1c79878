{{ config(materialized='table') }}

select _metadata.file_name as relative_path, _metadata.file_size as size,
  _metadata.file_modification_time as modified_at
from binaryFile.`{{ var('landing') }}/*.json`

"""Stream window reads in the embedded engine: a Spark data source of a window's raw changes.

The checks that come before a read live in ``_log`` (no Spark needed).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import LongType, StringType, StructType, TimestampType

from dbt_tablestream.embedded._sources import (
    CHANGE_TYPE,
    COMMIT_TIMESTAMP,
    COMMIT_VERSION,
    delta_spark_schema,
    read_change_feed,
    read_delta_partition,
)

WINDOW_SOURCE = "tablestream_window"


def window_schema(path: str, version: int) -> StructType:
    return (
        delta_spark_schema(path, version)
        .add(CHANGE_TYPE, StringType())
        .add(COMMIT_VERSION, LongType())
        .add(COMMIT_TIMESTAMP, TimestampType())
    )


class WindowReader(DataSourceReader):
    """Arrow batches of a window's raw changes (Delta column names), or of a snapshot as inserts."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.path = options["path"]
        self.kind = options["kind"]
        self.start = int(options["start"])
        self.end = int(options["end"])
        self.timestamp = options.get("timestamp")
        self.columns = [field.name for field in schema.fields]

    def partitions(self) -> list[InputPartition]:
        if self.kind == "changes":
            return [InputPartition(0)]
        from deltalake import DeltaTable

        files = len(DeltaTable(self.path, version=self.end).file_uris())
        count = max(1, min(files, 8))
        return [InputPartition((index, count)) for index in range(count)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        names = self.columns
        if self.kind == "changes":
            changes = read_change_feed(self.path, self.path, self.start, self.end)
            yield from changes.select(names).to_batches()
            return
        index, count = partition.value
        data_columns = names[:-3]
        stamp = datetime.fromisoformat(str(self.timestamp))
        for batch in read_delta_partition(self.path, self.end, index, count, data_columns):
            rows = batch.num_rows
            arrays = [
                *batch.columns,
                pa.array(["insert"] * rows, pa.string()),
                pa.array([self.end] * rows, pa.int64()),
                pa.array([stamp] * rows, pa.timestamp("us", tz="UTC")),
            ]
            yield pa.RecordBatch.from_arrays(arrays, names=names)


class WindowSource(DataSource):
    """`spark.read.format("tablestream_window")` with options path, kind (changes|snapshot), start, end."""

    @classmethod
    def name(cls) -> str:
        return WINDOW_SOURCE

    def schema(self) -> StructType:
        return window_schema(self.options["path"], int(self.options["end"]))

    def reader(self, schema: StructType) -> DataSourceReader:
        return WindowReader(dict(self.options), schema)

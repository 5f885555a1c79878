"""Spark-side readers of Delta tables stored by delta-rs.

Two things are registered in the session: one Python data source class per Delta table (so a
catalog table `schema.table` reads the live Delta table), and the `table_changes` table function
(the Delta change feed of a version range). The classes are built per table or per warehouse
because Spark hands a catalog-table data source empty options at read time (DESIGN.md, section 2),
so a class must carry its own path. They are pickled by value into Spark's Python workers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import LongType, StringType, StructType, TimestampType

from dbt_tablestream.embedded._layout import table_dir
from dbt_tablestream.embedded._log import CHANGE_FEED_PROPERTY
from dbt_tablestream.exceptions import ChangeFeedError

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"


def spark_schema_of(arrow_schema: pa.Schema) -> StructType:
    from dbt_tablestream.embedded._arrow import normalize_schema

    return from_arrow_schema(normalize_schema(arrow_schema), prefer_timestamp_ntz=True)


def delta_spark_schema(path: str, version: int | None = None) -> StructType:
    from deltalake import DeltaTable

    from dbt_tablestream.embedded._arrow import as_pyarrow_schema

    table = DeltaTable(path) if version is None else DeltaTable(path, version=version)
    return spark_schema_of(as_pyarrow_schema(table.schema().to_arrow()))


def read_delta_partition(
    path: str, version: int, index: int, count: int, columns: list[str]
) -> Iterator[pa.RecordBatch]:
    """Yield the record batches of every ``count``-th data file of one pinned table version."""
    from deltalake import DeltaTable

    from dbt_tablestream.embedded._arrow import normalize_schema

    dataset = DeltaTable(path, version=version).to_pyarrow_dataset()
    fragments = list(dataset.get_fragments())[index::count]
    target = normalize_schema(pa.schema([dataset.schema.field(name) for name in columns]))
    for fragment in fragments:
        for batch in fragment.to_batches(schema=dataset.schema, columns=columns):
            if batch.num_rows:
                yield batch.cast(target)


def data_source_class(source_name: str, path: str) -> type[DataSource]:
    """A data source that reads the live Delta table at ``path``, registered as ``source_name``."""

    class DeltaTableReader(DataSourceReader):
        def __init__(self, schema: StructType) -> None:
            self.columns = [field.name for field in schema.fields]

        def partitions(self) -> list[InputPartition]:
            from deltalake import DeltaTable

            # Pin the version once, on the driver, so every partition reads the same snapshot.
            table = DeltaTable(path)
            files = len(table.file_uris())
            count = max(1, min(files, 8))
            return [InputPartition((table.version(), index, count)) for index in range(count)]

        def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
            version, index, count = partition.value
            yield from read_delta_partition(path, version, index, count, self.columns)

    class DeltaTableSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return source_name

        def schema(self) -> StructType:
            return delta_spark_schema(path)

        def reader(self, schema: StructType) -> DataSourceReader:
            return DeltaTableReader(schema)

    DeltaTableSource.__name__ = DeltaTableSource.__qualname__ = f"DeltaTableSource_{source_name}"
    return DeltaTableSource


def resolve_table_path(warehouse: str, table: str) -> tuple[str, str]:
    """Map a table name (`schema.table`) or a path to ``(path, display name)``."""
    if "/" in table or "\\" in table:
        return table, table
    parts = table.replace("`", "").split(".")
    if len(parts) != 2:
        raise ChangeFeedError(f"table_changes needs a qualified table name `schema.table` or a path, got {table!r}.")
    schema, name = (part.lower() for part in parts)
    return str(table_dir(Path(warehouse), schema, name)), f"{schema}.{name}"


def check_change_feed_range(table: Any, display: str, start: int, end: int | None) -> int:
    """Validate a change-feed range against the table; return the effective (inclusive) end."""
    latest = table.version()
    enabled = str(table.metadata().configuration.get(CHANGE_FEED_PROPERTY, "false")).lower() == "true"
    if not enabled:
        raise ChangeFeedError(
            f"Change data feed is not enabled on {display}, so it has no changes to read. "
            f"Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking "
            f"--args '{{relation: {display}}}'` (or set the table property "
            f"{CHANGE_FEED_PROPERTY} = true); changes are recorded from then on."
        )
    if start < 0:
        raise ChangeFeedError(f"table_changes on {display}: the start version must be >= 0, got {start}.")
    if start > latest:
        raise ChangeFeedError(
            f"table_changes on {display}: start version {start} is beyond the latest version {latest}. "
            f"Use a start version from 0 to {latest}."
        )
    effective_end = latest if end is None else end
    if effective_end < start:
        raise ChangeFeedError(
            f"table_changes on {display}: end version {effective_end} is before start version {start}."
        )
    if effective_end > latest:
        raise ChangeFeedError(
            f"table_changes on {display}: end version {effective_end} is beyond the latest version {latest}."
        )
    return effective_end


def change_feed_schema(path: str) -> StructType:
    return (
        delta_spark_schema(path)
        .add(CHANGE_TYPE, StringType())
        .add(COMMIT_VERSION, LongType())
        .add(COMMIT_TIMESTAMP, TimestampType())
    )


def open_delta(path: str, display: str) -> Any:
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        raise ChangeFeedError(f"table_changes: {display} is not a Delta table (nothing found at {path}).")
    return DeltaTable(path)


def open_change_feed(path: str, display: str, start: int, end: int | None) -> pa.RecordBatchReader:
    """The change rows of versions ``start..end`` (inclusive) as delta-rs's ``load_cdf`` streams them;
    :func:`change_rows` makes what is read of them a table."""
    table = open_delta(path, display)
    effective_end = check_change_feed_range(table, display, start, end)
    return pa.RecordBatchReader.from_stream(table.load_cdf(starting_version=start, ending_version=effective_end))


def change_rows(changes: pa.Table) -> pa.Table:
    from dbt_tablestream.embedded._arrow import normalize_table

    changes = normalize_table(changes)
    # delta-rs reports commit times as zone-less milliseconds; they are UTC instants.
    index = changes.schema.get_field_index(COMMIT_TIMESTAMP)
    return changes.set_column(index, COMMIT_TIMESTAMP, changes.column(index).cast(pa.timestamp("us", tz="UTC")))


def read_change_feed(path: str, display: str, start: int, end: int | None) -> pa.Table:
    """The change rows of versions ``start..end`` (inclusive), as delta-rs's ``load_cdf`` returns them."""
    return change_rows(open_change_feed(path, display, start, end).read_all())


def table_changes_class(warehouse: str) -> type:
    """The `table_changes(table, start[, end])` UDTF for tables of one warehouse."""
    from pyspark.sql.udtf import AnalyzeArgument, AnalyzeResult

    class TableChanges:
        @staticmethod
        def analyze(
            table: AnalyzeArgument, start: AnalyzeArgument, end: AnalyzeArgument | None = None
        ) -> AnalyzeResult:
            if not isinstance(table.value, str) or not isinstance(start.value, int):
                raise ChangeFeedError(
                    "table_changes takes literal arguments: table_changes('<schema.table or path>', <start>[, <end>])."
                )
            path, display = resolve_table_path(warehouse, table.value)
            delta = open_delta(path, display)
            check_change_feed_range(delta, display, start.value, None if end is None else end.value)
            return AnalyzeResult(change_feed_schema(path))

        def eval(self, table: str, start: int, end: int | None = None) -> Iterator[tuple[Any, ...]]:
            path, display = resolve_table_path(warehouse, table)
            names = change_feed_schema(path).names
            changes = read_change_feed(path, display, start, end).select(names)
            for batch in changes.to_batches():
                yield from zip(*(column.to_pylist() for column in batch.columns), strict=True)

    return TableChanges

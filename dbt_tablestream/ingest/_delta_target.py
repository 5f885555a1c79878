"""The realtime writer's target in a warehouse folder: a Delta table written by path with delta-rs,
so a producer process commits without starting a JVM. delta-spark reads what it writes: both
speak the same Delta protocol, and the folder is where the local profile's catalog keeps the table.

Each flush is one append or one MERGE of keyed changes, carrying a SetTransaction (the writer's
id, the flush's sequence number), so a retried flush that did commit is recognised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError

from dbt_tablestream._warehouse import table_dir
from dbt_tablestream.ingest._options import RetryStatus
from dbt_tablestream.ingest._targets import CHANGE_OPERATION, DELETE, UPSERT, missing_table

# Lands in each commit's commitInfo, so the table's history names the writer of every flush.
WRITER_METADATA_KEY = "tablestream.ingest.writer"


def _commit_properties(writer_id: str, sequence: int) -> CommitProperties:
    return CommitProperties(
        app_transactions=[Transaction(writer_id, int(sequence))],
        custom_metadata={WRITER_METADATA_KEY: writer_id},
    )


class DeltaTarget:
    """A table of a warehouse folder: ``<warehouse>/<schema>.db/<table>``.

    The rows a stream hands over are built in :meth:`arrow_schema`, the table's own Arrow schema
    as delta-rs reports it, so delta-rs takes them as they are: no cast and no type mapping.
    """

    def __init__(self, warehouse: Path, schema: str, table: str) -> None:
        self.display = f"{schema}.{table}"
        self.path = str(table_dir(warehouse, schema, table))
        self._open: Any = None
        if not DeltaTable.is_deltatable(self.path):
            raise missing_table(self.display, f"in the warehouse {warehouse}")

    def _table(self) -> Any:
        """The table at its latest version. Kept open and brought up to date incrementally: a
        writer commits often, and loading the log from scratch each time grows with its length."""
        if self._open is None:
            self._open = DeltaTable(self.path)
        else:
            self._open.update_incremental()
        return self._open

    def arrow_schema(self) -> pa.Schema:
        # delta-rs 1.x hands out arro3 schemas; pyarrow takes them through the Arrow C interface.
        return pa.schema(self._table().schema().to_arrow())

    def properties(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self._table().metadata().configuration.items()}

    def committed_sequence(self, writer_id: str) -> int | None:
        version = self._table().transaction_version(writer_id)
        return None if version is None else int(version)

    def append(self, rows: pa.Table, writer_id: str, sequence: int) -> None:
        write_deltalake(self._table(), rows, mode="append", commit_properties=_commit_properties(writer_id, sequence))

    def apply_changes(self, rows: pa.Table, keys: list[str], writer_id: str, sequence: int) -> None:
        """One MERGE: each key is upserted or deleted as its CHANGE_OPERATION says."""
        table = self._table()
        operation = f"source.`{CHANGE_OPERATION}`"
        values = {f"`{name}`": f"source.`{name}`" for name in rows.column_names if name != CHANGE_OPERATION}
        (
            table.merge(
                source=rows,
                predicate=" AND ".join(f"target.`{key}` = source.`{key}`" for key in keys),
                source_alias="source",
                target_alias="target",
                # The source is in memory; not streamed, it lets delta-rs derive a pruning
                # predicate from its key ranges, so only the files those keys may be in are read.
                streamed_exec=False,
                commit_properties=_commit_properties(writer_id, sequence),
            )
            .when_matched_delete(predicate=f"{operation} = '{DELETE}'")
            .when_matched_update(updates=values, predicate=f"{operation} = '{UPSERT}'")
            .when_not_matched_insert(updates=values, predicate=f"{operation} = '{UPSERT}'")
            .execute()
        )

    def retry_status(self, error: BaseException) -> RetryStatus | None:
        if isinstance(error, CommitFailedError):
            return RetryStatus.FAILED
        if isinstance(error, OSError):
            return RetryStatus.INTERNAL_ERROR
        return None

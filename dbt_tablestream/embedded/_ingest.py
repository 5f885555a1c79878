"""The realtime writer's target on the embedded engine: a warehouse table written with delta-rs.

Each flush is one append or one MERGE of keyed changes, carrying a SetTransaction (the writer's
id, the flush's sequence number), so a retried flush that did commit is recognised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError

from dbt_tablestream.embedded._arrow import normalize_table
from dbt_tablestream.embedded._delta import (
    CommitMarker,
    is_delta_table,
    keyed_changes_spec,
    merge_table,
    table_arrow_schema,
)
from dbt_tablestream.embedded._layout import table_dir
from dbt_tablestream.ingest._options import RetryStatus
from dbt_tablestream.ingest._targets import missing_table


class DeltaTarget:
    """A table of an embedded-engine warehouse: ``<warehouse>/<schema>.db/<table>``."""

    def __init__(self, warehouse: Path, schema: str, table: str) -> None:
        self.display = f"{schema}.{table}"
        self.path = str(table_dir(warehouse, schema, table))
        self._open: Any = None
        if not is_delta_table(self.path):
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
        return table_arrow_schema(self._table())

    def properties(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self._table().metadata().configuration.items()}

    def committed_sequence(self, writer_id: str) -> int | None:
        version = self._table().transaction_version(writer_id)
        return None if version is None else int(version)

    def _marker(self, writer_id: str, sequence: int) -> CommitMarker:
        return CommitMarker(app_id=writer_id, version=sequence, metadata={"tablestream.ingest.writer": writer_id})

    def append(self, rows: pa.Table, writer_id: str, sequence: int) -> None:
        # The rows are built in the table's schema already, so no cast by position is needed.
        marker = self._marker(writer_id, sequence)
        write_deltalake(
            self._table(), normalize_table(rows), mode="append", commit_properties=marker.commit_properties()
        )

    def apply_changes(self, rows: pa.Table, keys: list[str], writer_id: str, sequence: int) -> None:
        merge_table(self._table(), rows, keyed_changes_spec(keys), marker=self._marker(writer_id, sequence))

    def retry_status(self, error: BaseException) -> RetryStatus | None:
        if isinstance(error, CommitFailedError):
            return RetryStatus.FAILED
        if isinstance(error, OSError):
            return RetryStatus.INTERNAL_ERROR
        return None

"""The offsets log and the sources' positions, read from the Delta logs with delta-rs: no JVM.

This is what `tablestream status` and `history` show on the local profile in about a second.
Whether a stream's next window can be read (staleness) is the `spark__` macros' rule; the
command asks dbt for it with `--check`, and this module does not repeat it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbt_tablestream._status import StreamStatus
from dbt_tablestream._warehouse import table_dir

OFFSETS_TABLE = "tablestream_offsets"
# Rows the offsets log holds besides runs: a reset (to a version, or back to start_at) and a drop.
RESET, DROPPED = "reset", "dropped"


def offsets_rows(warehouse: Path, schema: str) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    path = table_dir(warehouse, schema, OFFSETS_TABLE)
    if not DeltaTable.is_deltatable(str(path)):
        return []
    return table_rows(DeltaTable(str(path)))


def table_rows(table: Any) -> list[dict[str, Any]]:
    """A Delta table's rows through delta-rs's query engine, which reads deletion vectors: the
    pyarrow readers refuse any table whose protocol lists them, and Spark creates every table with
    them when `spark.databricks.delta.properties.defaults.enableDeletionVectors` is set."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    return pa.table(QueryBuilder().register("rows", table).execute("select * from rows").read_all()).to_pylist()


def position_key(row: dict[str, Any]) -> tuple[int, int, datetime]:
    """The order of a stream's offsets rows, as the macros order them; the last is its position."""
    to_version = row["to_version"] if row["to_version"] is not None else -1
    committed = row["committed_at"] or datetime.min.replace(tzinfo=timezone.utc)
    if committed.tzinfo is None:
        committed = committed.replace(tzinfo=timezone.utc)
    return (row["epoch"], to_version, committed)


def latest_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        current = latest.get(row["stream_name"])
        if current is None or position_key(row) > position_key(current):
            latest[row["stream_name"]] = row
    return latest


def stream_history(warehouse: Path, schemas: list[str], name: str) -> list[dict[str, Any]]:
    """The offsets-log rows of the stream ``name``, or else of the streams of the model ``name``
    (whose target is `<schema>.<name>`), from the logs of ``schemas``; oldest first."""
    rows = [row for schema in schemas for row in offsets_rows(warehouse, schema)]
    named = [row for row in rows if row["stream_name"] == name]
    if not named:
        named = [row for row in rows if str(row["target"]).rpartition(".")[2].lower() == name.lower()]
    return sorted(named, key=lambda row: (row["stream_name"], *position_key(row)))


def stream_statuses(warehouse: Path, schema: str) -> list[StreamStatus]:
    rows = offsets_rows(warehouse, schema)
    runs = [row for row in rows if row["mode"] not in (RESET, DROPPED)]
    modes = {row["stream_name"]: row["mode"] for row in sorted(runs, key=position_key)}
    return [
        stream_status(warehouse, row, modes.get(name, row["mode"]))
        for name, row in sorted(latest_rows(rows).items())
        if row["mode"] != DROPPED
    ]


def commit_time(table: Any, version: int) -> datetime | None:
    """A version's commit time from the table's history (None once the log entry is gone)."""
    if version < 0:
        return None
    latest = table.version()
    for entry in table.history(latest - version + 1):
        if entry.get("version") == version and "timestamp" in entry:
            return datetime.fromtimestamp(entry["timestamp"] / 1000, tz=timezone.utc)
    return None


def stream_status(warehouse: Path, row: dict[str, Any], mode: str | None = None) -> StreamStatus:
    """Where the stream stands against its source: positions and lag, from the Delta logs."""
    from deltalake import DeltaTable

    source, offset = row["source"], row["to_version"]
    source_schema, _, source_name = source.rpartition(".")
    source_schema = source_schema.rpartition(".")[2]
    path = table_dir(warehouse, source_schema, source_name)
    common = {
        "stream": row["stream_name"],
        "source": source,
        "mode": mode or row["mode"],
        "epoch": row["epoch"],
        "offset_version": offset,
        "target": row["target"],
        "last_run": row["committed_at"],
        "rows_written": row["rows_written"],
        "stale": None,
    }
    problem = "reset: its next run starts again from start_at (a new epoch)." if offset is None else None
    if not DeltaTable.is_deltatable(str(path)):
        problem = (
            f"no Delta table of {source} at {path} (a table stored elsewhere, or dropped): "
            "run `tablestream status --check` to ask Spark."
        )
        return StreamStatus(offset_time=None, source_version=None, source_time=None, problem=problem, **common)
    table = DeltaTable(str(path))
    latest = table.version()
    return StreamStatus(
        offset_time=commit_time(table, offset) if offset is not None and offset <= latest else None,
        source_version=latest,
        source_time=commit_time(table, latest),
        problem=problem,
        **common,
    )

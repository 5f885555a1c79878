"""Stream status on the embedded engine, read straight from the warehouse's Delta tables.

No Spark: the offsets log is read with delta-rs and each source's position from its
``_delta_log``, so ``tablestream status`` answers in about a second.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from dbt_tablestream._status import StreamStatus
from dbt_tablestream.embedded._layout import table_dir
from dbt_tablestream.embedded._log import check_window, read_commit
from dbt_tablestream.exceptions import StreamError

OFFSETS_TABLE = "tablestream_offsets"
# The log's columns, as offsets_values_sql writes them (committed_at: a UTC instant).
OFFSETS_SCHEMA = pa.schema(
    [
        ("stream_name", pa.string()),
        ("epoch", pa.int64()),
        ("stream_id", pa.string()),
        ("source", pa.string()),
        ("source_table_id", pa.string()),
        ("mode", pa.string()),
        ("from_version", pa.int64()),
        ("to_version", pa.int64()),
        ("target", pa.string()),
        ("rows_written", pa.int64()),
        ("invocation_id", pa.string()),
        ("committed_at", pa.timestamp("us", tz="UTC")),
    ]
)
# Rows the offsets log holds besides runs: a reset (to a version, or back to start_at) and a drop.
RESET, DROPPED = "reset", "dropped"
LOG_RETENTION = ("delta.logRetentionDuration", timedelta(days=30))
FILE_RETENTION = ("delta.deletedFileRetentionDuration", timedelta(days=7))
INTERVAL = re.compile(r"(?:interval\s+)?(\d+)\s*(second|minute|hour|day|week)s?", re.IGNORECASE)
UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}


def offsets_rows(warehouse: Path, schema: str) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    path = table_dir(warehouse, schema, OFFSETS_TABLE)
    if not DeltaTable.is_deltatable(str(path)):
        return []
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist()


def position_key(row: dict[str, Any]) -> tuple[int, int, datetime]:
    """The order of a stream's offsets rows; the last is its current position."""
    to_version = row["to_version"] if row["to_version"] is not None else -1
    committed = row["committed_at"] or datetime.min.replace(tzinfo=timezone.utc)
    return (row["epoch"], to_version, committed)


def latest_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        current = latest.get(row["stream_name"])
        if current is None or position_key(row) > position_key(current):
            latest[row["stream_name"]] = row
    return latest


OFFSET_ROW_DDL = "epoch bigint, to_version bigint, source_table_id string, mode string"


def latest_offset_row(path: str, stream: str) -> dict[str, Any] | None:
    """A stream's current position in the offsets log at ``path`` (the columns of OFFSET_ROW_DDL)."""
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    columns = ["stream_name", "epoch", "to_version", "source_table_id", "mode", "committed_at"]
    rows = DeltaTable(path).to_pyarrow_dataset().to_table(columns=columns, filter=pc.field("stream_name") == stream)
    latest = latest_rows(rows.to_pylist()).get(stream)
    if latest is None:
        return None
    return {key: latest[key] for key in ("epoch", "to_version", "source_table_id", "mode")}


def stream_history(warehouse: Path, schema: str, stream: str) -> list[dict[str, Any]]:
    return sorted((row for row in offsets_rows(warehouse, schema) if row["stream_name"] == stream), key=position_key)


def commit_time(path: Path, version: int) -> datetime | None:
    actions = read_commit(path, version) if version >= 0 else None
    for action in actions or []:
        if "commitInfo" in action and "timestamp" in action["commitInfo"]:
            return datetime.fromtimestamp(action["commitInfo"]["timestamp"] / 1000, tz=timezone.utc)
    return None


def retention(configuration: dict[str, Any], setting: tuple[str, timedelta]) -> timedelta:
    key, default = setting
    match = INTERVAL.search(str(configuration.get(key, "")))
    return timedelta(seconds=int(match.group(1)) * UNIT_SECONDS[match.group(2).lower()]) if match else default


def stream_statuses(warehouse: Path, schema: str) -> list[StreamStatus]:
    rows = offsets_rows(warehouse, schema)
    runs = [row for row in rows if row["mode"] not in (RESET, DROPPED)]
    modes = {row["stream_name"]: row["mode"] for row in sorted(runs, key=position_key)}
    return [
        stream_status(warehouse, row, modes.get(name, row["mode"]))
        for name, row in sorted(latest_rows(rows).items())
        if row["mode"] != DROPPED
    ]


def stream_status(warehouse: Path, row: dict[str, Any], mode: str | None = None) -> StreamStatus:
    """Where the stream stands against its source, and whether its next run can read its window."""
    from deltalake import DeltaTable

    stream, source, offset = row["stream_name"], row["source"], row["to_version"]
    source_schema, _, source_name = source.partition(".")
    path = table_dir(warehouse, source_schema, source_name)
    model = str(row["target"]).rpartition(".")[2]
    common = {
        "stream": stream,
        "source": source,
        "mode": mode or row["mode"],
        "epoch": row["epoch"],
        "offset_version": offset,
        "target": row["target"],
        "last_run": row["committed_at"],
        "rows_written": row["rows_written"],
    }
    if not DeltaTable.is_deltatable(str(path)):
        problem = f"the source {source} does not exist (no Delta table at {path}). Create it, or drop the stream."
        return StreamStatus(
            offset_time=None, source_version=None, source_time=None, stale=True, problem=problem, **common
        )
    table = DeltaTable(str(path))
    latest = table.version()
    problem = None
    if offset is None:
        problem = "reset: its next run starts again from start_at (a new epoch)."
    else:
        try:
            check_window(str(path), source, stream, offset, latest, row["source_table_id"], model=model)
        except StreamError as error:
            problem = str(error)
    at_risk = None
    if offset is not None and problem is None and offset < latest:
        oldest_unconsumed = commit_time(path, offset + 1)
        configuration = table.metadata().configuration
        keep = min(retention(configuration, LOG_RETENTION), retention(configuration, FILE_RETENTION))
        at_risk = oldest_unconsumed + keep if oldest_unconsumed is not None else None
    return StreamStatus(
        offset_time=commit_time(path, offset) if offset is not None else None,
        source_version=latest,
        source_time=commit_time(path, latest),
        stale=problem is not None and offset is not None,
        problem=problem,
        at_risk_from=at_risk,
        **common,
    )

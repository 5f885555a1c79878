"""The offsets log and the sources' positions, read from the Delta logs with delta-rs: no JVM.

This is what `tablestream status` and `history` show on the local profile in about a second.
Whether a stream's next window can be read (staleness) is the `spark__` macros' rule; the
command asks dbt for it with `--check`, and this module does not repeat it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

from dbt_tablestream._documents import HistoryEntry, OffsetsRow, StreamHealth, StreamStatus
from dbt_tablestream._macros import render
from dbt_tablestream._warehouse import table_dir

OFFSETS_TABLE = "tablestream_offsets"
# Rows the offsets log holds besides runs: a reset (to a version, or back to start_at) and a drop.
RESET, DROPPED = "reset", "dropped"


def offsets_rows(warehouse: Path, schema: str) -> list[OffsetsRow]:
    from deltalake import DeltaTable

    path = table_dir(warehouse, schema, OFFSETS_TABLE)
    if not DeltaTable.is_deltatable(str(path)):
        return []
    rows: list[OffsetsRow] = table_rows(DeltaTable(str(path)))  # type: ignore[assignment]
    return rows


def table_rows(table: Any) -> list[dict[str, Any]]:
    """A Delta table's rows through delta-rs's query engine, which reads deletion vectors: the
    pyarrow readers refuse any table whose protocol lists them, and Spark creates every table with
    them when `spark.databricks.delta.properties.defaults.enableDeletionVectors` is set."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    rows: list[dict[str, Any]] = pa.table(
        QueryBuilder().register("rows", table).execute("select * from rows").read_all()
    ).to_pylist()
    return rows


def position_key(row: OffsetsRow) -> tuple[tuple[bool, Any], ...]:
    """The order of a stream's offsets rows, by the macros' _offsets_position_columns with a NULL
    first (offsets_position_order_sql); the last is its position. delta-rs reads a time with its
    zone, Spark's rows without: both are compared in UTC."""
    values = [row.get(column) for column in _position_columns()]
    return tuple(
        (
            value is not None,
            value.replace(tzinfo=timezone.utc) if isinstance(value, datetime) and not value.tzinfo else value,
        )
        for value in values
    )


@cache
def _position_columns() -> tuple[str, ...]:
    return tuple(render("_offsets_position_columns"))


def latest_rows(rows: list[OffsetsRow]) -> dict[str, OffsetsRow]:
    latest: dict[str, OffsetsRow] = {}
    for row in rows:
        current = latest.get(row["stream_name"])
        if current is None or position_key(row) > position_key(current):
            latest[row["stream_name"]] = row
    return latest


def document_value(value: Any) -> Any:
    """A value as the dbt operations report it: a time as Spark prints it on the local profile,
    whose session runs in UTC (spark.sql.session.timeZone), without an offset; anything else as read."""
    if isinstance(value, datetime):
        return str(value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo is not None else value)
    return value


def stream_history(warehouse: Path, schemas: list[str], name: str, limit: int) -> list[HistoryEntry]:
    """The offsets-log rows of the stream ``name``, or else of the streams of the model ``name``
    (whose target is `<schema>.<name>`), from the logs of ``schemas``: each stream's ``limit``
    latest, newest first, as _stream_history_entry reports them."""
    rows = [row for schema in schemas for row in offsets_rows(warehouse, schema)]
    named = [row for row in rows if row["stream_name"] == name]
    if not named:
        named = [row for row in rows if str(row["target"]).rpartition(".")[2].lower() == name.lower()]
    entries = []
    for stream in sorted({row["stream_name"] for row in named}):
        newest = sorted((row for row in named if row["stream_name"] == stream), key=position_key, reverse=True)
        entries += [
            render("_stream_history_entry", {key: document_value(value) for key, value in row.items()})
            for row in newest[:limit]
        ]
    return entries


def stream_names(warehouse: Path, schemas: list[str]) -> list[str]:
    """The streams the offsets logs of ``schemas`` hold."""
    return sorted({row["stream_name"] for schema in schemas for row in offsets_rows(warehouse, schema)})


def stream_statuses(warehouse: Path, schema: str) -> list[StreamStatus]:
    """The status of every stream in ``schema``'s offsets log, as _stream_status_document reports
    it, with what the Delta logs say (staleness not checked)."""
    rows = offsets_rows(warehouse, schema)
    runs = [row for row in rows if row["mode"] not in (RESET, DROPPED)]
    modes = {row["stream_name"]: row["mode"] for row in sorted(runs, key=position_key)}
    return [
        render(
            "_stream_status_document",
            {**{key: document_value(value) for key, value in row.items()}, "stream_mode": modes.get(name)},
            stream_health(warehouse, row),
        )
        for name, row in sorted(latest_rows(rows).items())
        if row["mode"] != DROPPED
    ]


def commit_time(table: Any, version: int) -> str | None:
    """A version's commit time as Delta's DESCRIBE HISTORY reports it, which the run-operation path
    shows: its in-commit timestamp where the table keeps one, else the modification time of the
    commit's log file. commitInfo's own `timestamp`, which delta-rs reports, is taken a moment
    before the file is written (a millisecond apart here), so it would not match. None once the
    log entry is gone."""
    if version < 0:
        return None
    latest = table.version()
    for entry in table.history(latest - version + 1):
        if entry.get("version") == version and "timestamp" in entry:
            millis = int(entry.get("inCommitTimestamp") or log_file_millis(table, version) or entry["timestamp"])
            moment = datetime.fromtimestamp(millis // 1000, tz=timezone.utc).replace(microsecond=millis % 1000 * 1000)
            return str(document_value(moment))
    return None


def log_file_millis(table: Any, version: int) -> int | None:
    """The modification time, in milliseconds, of a local table's commit file `version`."""
    uri = str(table.table_uri)
    root = Path(uri.removeprefix("file://")) if uri.startswith("file://") or "://" not in uri else None
    log_file = root / "_delta_log" / f"{version:020d}.json" if root else None
    return log_file.stat().st_mtime_ns // 1_000_000 if log_file and log_file.exists() else None


def stream_health(warehouse: Path, row: OffsetsRow) -> StreamHealth:
    """stream_health's keys from the Delta logs: positions, not staleness (`stale` none)."""
    from deltalake import DeltaTable

    source, offset = row["source"], row["to_version"]
    source_schema, _, source_name = source.rpartition(".")
    path = table_dir(warehouse, source_schema.rpartition(".")[2], source_name)
    health: StreamHealth = {
        "offset_time": None,
        "source_version": None,
        "source_time": None,
        "stale": None,
        "refusal": None,
        "problem": render("_stream_reset_problem") if offset is None else None,
        "at_risk_from": None,
        "at_risk_in_seconds": None,
    }
    if not DeltaTable.is_deltatable(str(path)):
        health["problem"] = (
            f"no Delta table of {source} at {path} (a table stored elsewhere, or dropped): "
            "run `tablestream status --check` to ask Spark."
        )
        return health
    table = DeltaTable(str(path))
    latest = table.version()
    health["source_version"] = latest
    health["source_time"] = commit_time(table, latest)
    if offset is not None and offset <= latest:
        health["offset_time"] = commit_time(table, offset)
    return health

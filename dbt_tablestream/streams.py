"""Table streams from PySpark, modelled on Zettapark's table streams (seed 000).

    from dbt_tablestream.streams import open_stream

    stream = open_stream(warehouse="warehouse", source="app.orders", name="orders_sync",
                         offsets_schema="analytics")
    stream.read().show()                 # the pending changes; reading does not advance
    with stream.consume() as window:     # advances only if the block completes
        window.append_to("analytics.orders_log")

A stream here is the same cursor the dbt materializations keep: its position is the latest row
for its name in ``<offsets_schema>.tablestream_offsets``, so ``tablestream status`` shows
streams from both. The offset moves only after the consuming write has committed.
``window.append_to`` writes with the stream's commit marker (exactly once: a crash between the
write and the offset is recovered from the marker); a write of your own inside ``consume`` is
applied at least once.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from dbt_tablestream.exceptions import StreamError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from dbt_tablestream.embedded._engine import Engine

T = TypeVar("T")
MODES = ("standard", "append_only")
CHANGE_TYPES = {
    "insert": "INSERT",
    "update_preimage": "UPDATE_BEFORE",
    "update_postimage": "UPDATE_AFTER",
    "delete": "DELETE",
}


@dataclass(frozen=True)
class Position:
    epoch: int
    offset: int
    table_id: str | None


class StreamWindow:
    """The changes ``(after, through]`` of one consume: read them, write them, and the offset moves."""

    def __init__(self, stream: TableStream, position: Position, through: int, view: str | None) -> None:
        self.stream = stream
        self.position = position
        self.after = position.offset
        self.through = through
        self.view = view
        self.dataframe: DataFrame = stream.engine.sql(stream._window_sql(view))
        self.rows_written: int | None = None
        self.target: str | None = None

    @property
    def df(self) -> DataFrame:
        return self.dataframe

    @property
    def is_empty(self) -> bool:
        return self.after >= self.through

    def append_to(self, table: str, *, columns: list[str] | None = None) -> int:
        """Append the window's rows (or ``columns`` of them) to ``schema.table`` as one Delta commit
        carrying the stream's marker; creates the table on first use. Returns rows written (0 when a
        previous, interrupted consume had already written this window)."""
        schema, _, name = table.partition(".")
        if not name:
            raise StreamError(f"Stream {self.stream.name}: append_to takes a qualified `schema.table`, got {table!r}.")
        select = ", ".join(f"`{column}`" for column in columns) if columns else "*"
        sql = f"select {select} from ({self.stream._window_sql(self.view)}) as __tablestream_window"
        written = self.stream._append(schema.lower(), name.lower(), sql, self)
        self.rows_written = (self.rows_written or 0) + written
        self.target = table
        return written


class Consumption:
    """``with stream.consume() as window``: the offset advances when the block completes."""

    def __init__(self, stream: TableStream) -> None:
        self.stream = stream
        self.window: StreamWindow | None = None

    def __enter__(self) -> StreamWindow:
        self.window = self.stream._open_window()
        return self.window

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None and self.window is not None:
            self.stream._advance(self.window)


class TableStream:
    """A stream over a Delta source on the embedded engine. Use :func:`open_stream`."""

    def __init__(
        self,
        engine: Engine,
        *,
        source: str,
        name: str,
        offsets_schema: str,
        mode: str = "standard",
        start_at: str | Mapping[str, int] = "latest",
        target: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise StreamError(f"Stream {name}: mode must be one of {', '.join(MODES)}; got {mode!r}.")
        schema, _, table = source.partition(".")
        if not table:
            raise StreamError(f"Stream {name}: source must be a qualified `schema.table`, got {source!r}.")
        if not (start_at in ("latest", "earliest") or (isinstance(start_at, Mapping) and "version" in start_at)):
            raise StreamError(
                f"Stream {name}: start_at takes 'latest', 'earliest' or {{'version': N}}; got {start_at!r}."
            )
        self.engine = engine
        self.name = name
        self.source = f"{schema.lower()}.{table.lower()}"
        self.source_schema, self.source_table = schema.lower(), table.lower()
        self.offsets_schema = offsets_schema.lower()
        self.mode = mode
        self.start_at = start_at
        self.target = target.lower() if target else None
        self._position()  # creates the stream: its start is logged now, so later changes are pending

    # ----- where the stream stands ------------------------------------------------------------
    @property
    def _source_path(self) -> str:
        return str(self.engine.catalog.table_path(self.source_schema, self.source_table))

    @property
    def _offsets_path(self) -> str:
        from dbt_tablestream.embedded._status import OFFSETS_TABLE

        return str(self.engine.catalog.table_path(self.offsets_schema, OFFSETS_TABLE))

    def _remedy(self) -> str:
        return (
            f"Reset the stream with `tablestream reset {self.name} --schema {self.offsets_schema} --to-version <v>` "
            "(a version whose changes can still be read), or open it again under a new name."
        )

    def _position(self) -> Position:
        from dbt_tablestream.embedded._delta import is_delta_table
        from dbt_tablestream.embedded._log import source_state
        from dbt_tablestream.embedded._status import latest_offset_row

        row = latest_offset_row(self._offsets_path, self.name) if is_delta_table(self._offsets_path) else None
        if row is not None and row["to_version"] is not None:
            logged = Position(int(row["epoch"]), int(row["to_version"]), row["source_table_id"])
            marked = self._marked_position()
            # A consume that wrote its target but died before logging its offset: the marker wins.
            return max(logged, marked, key=lambda p: (p.epoch, p.offset)) if marked else logged
        # New, or reset back to its start: log where it starts, in a new epoch.
        state = source_state(self._source_path, self.source, self.name, want_earliest=self.start_at == "earliest")
        if self.start_at == "latest":
            start = state.latest_version
        elif self.start_at == "earliest":
            if state.earliest_change_version is None:
                raise StreamError(
                    f"Stream {self.name}: the source {self.source} has no readable change feed. Enable it with "
                    f"`dbt run-operation dbt_tablestream.enable_change_tracking --args '{{relation: {self.source}}}'`."
                )
            start = state.earliest_change_version - 1
        else:
            assert isinstance(self.start_at, Mapping)
            start = int(self.start_at["version"])
            if start > state.latest_version:
                raise StreamError(
                    f"Stream {self.name}: start_at version {start} is beyond the latest version "
                    f"{state.latest_version} of {self.source}."
                )
        epoch = int(row["epoch"]) if row is not None else 0
        self._log_offset(epoch, state.table_id, None, start, None, "")
        return Position(epoch, start, state.table_id)

    def _log_offset(
        self, epoch: int, table_id: str | None, after: int | None, through: int, rows: int | None, target: str
    ) -> None:
        import pyarrow as pa

        from dbt_tablestream.embedded._delta import write_table
        from dbt_tablestream.embedded._status import OFFSETS_SCHEMA, OFFSETS_TABLE

        row = {
            "stream_name": self.name,
            "epoch": epoch,
            "stream_id": f"tablestream/{self.name}/{epoch}",
            "source": self.source,
            "source_table_id": table_id,
            "mode": self.mode,
            "from_version": after,
            "to_version": through,
            "target": target or f"python.{self.name}",
            "rows_written": rows,
            "invocation_id": f"pyspark-{uuid.uuid4()}",
            "committed_at": datetime.now(timezone.utc),
        }
        self.engine.catalog.create_schema(self.offsets_schema)
        write_table(self._offsets_path, pa.Table.from_pylist([row], schema=OFFSETS_SCHEMA), "append")
        self.engine.catalog.register_table(self.offsets_schema, OFFSETS_TABLE)

    def _marked_position(self) -> Position | None:
        from dbt_tablestream.embedded._log import target_marker

        if self.target is None:
            return None
        schema, _, name = self.target.partition(".")
        marker = target_marker(str(self.engine.catalog.table_path(schema, name)), self.name)
        if marker is None:
            return None
        return Position(int(marker["epoch"]), int(marker["to"]), marker.get("source_table_id"))

    @property
    def offset(self) -> int:
        """The last source version this stream has consumed."""
        return self._position().offset

    # ----- reading ----------------------------------------------------------------------------
    def read(self) -> DataFrame:
        """The pending changes as a DataFrame: the source's columns, then __change_type
        (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE), __commit_version and __commit_timestamp.
        Reading does not advance the stream."""
        return self._open_window().dataframe

    def _open_window(self) -> StreamWindow:
        from dbt_tablestream.embedded._log import source_state

        position = self._position()
        latest = source_state(self._source_path, self.source, self.name).latest_version
        view = None
        if latest > position.offset:
            view = f"__tablestream_pystream__{self.name}__{position.epoch}__{position.offset}__{latest}"
            directive = {
                "op": "stream_window",
                "schema": self.source_schema,
                "name": self.source_table,
                "source": self.source,
                "stream": self.name,
                "view": view,
                "model": self.name,
                "remedy": self._remedy(),
                "kind": "changes",
                "after": position.offset,
                "through": latest,
                "table_id": position.table_id,
                "timestamp": None,
            }
            self.engine.run_directive(directive, "")
        return StreamWindow(self, position, latest, view)

    def _window_sql(self, view: str | None) -> str:
        fields = self.engine.columns_of(self.source_schema, self.source_table)
        if fields is None:
            raise StreamError(f"Stream {self.name}: the source {self.source} does not exist.")
        columns = "".join(f"`{field.name}`, " for field in fields.fields)
        if view is None:
            return (
                f"select {columns}cast(null as string) as __change_type, cast(null as bigint) as __commit_version, "
                f"cast(null as timestamp) as __commit_timestamp from `{self.source_schema}`.`{self.source_table}` where 1 = 0"
            )
        cases = " ".join(f"when '{raw}' then '{name}'" for raw, name in CHANGE_TYPES.items())
        where = " where _change_type = 'insert'" if self.mode == "append_only" else ""
        return (
            f"select {columns}case _change_type {cases} end as __change_type, _commit_version as __commit_version, "
            f"_commit_timestamp as __commit_timestamp from `{view}`{where}"
        )

    # ----- consuming --------------------------------------------------------------------------
    def consume(self, fn: Callable[[DataFrame], T] | None = None) -> Any:
        """``consume(fn)``: call ``fn`` with the pending changes; when it returns, advance the stream
        and return its result. If it raises, the stream stays where it was.

        ``consume()``: a context manager yielding a :class:`StreamWindow`; the stream advances when
        the block completes without an exception."""
        if fn is None:
            return Consumption(self)
        window = self._open_window()
        result = fn(window.dataframe)
        self._advance(window)
        return result

    def _advance(self, window: StreamWindow) -> None:
        if window.is_empty:
            return
        current = self._position()
        # window.through is this consume's own marker on the target, already committed.
        if current.offset not in (window.after, window.through):
            raise StreamError(
                f"Stream {self.name} is being consumed by another process: it moved from version {window.after} "
                f"to {current.offset} while this consume ran. Its offset was left at {current.offset}."
            )
        self._log_offset(
            window.position.epoch,
            window.position.table_id,
            window.after,
            window.through,
            window.rows_written,
            window.target or self.target or "",
        )

    def _append(self, schema: str, name: str, sql: str, window: StreamWindow) -> int:
        epoch = window.position.epoch
        metadata = {
            "tablestream.stream": self.name,
            "tablestream.stream_id": f"tablestream/{self.name}/{epoch}",
            "tablestream.epoch": epoch,
            "tablestream.from": window.after,
            "tablestream.to": window.through,
            "tablestream.source": self.source,
            "tablestream.source_table_id": window.position.table_id,
        }
        marker = {
            "app_id": f"tablestream/{self.name}/{epoch}",
            "version": window.through,
            "after": window.after,
            "metadata": metadata,
        }
        metadata["userMetadata"] = json.dumps(metadata)
        result = self.engine.run_directive(
            {"op": "write", "schema": schema, "name": name, "mode": "append", "marker": marker}, sql
        )
        return 0 if result.skipped else max(result.rows_affected, 0)


def open_stream(
    *,
    source: str,
    name: str,
    offsets_schema: str,
    warehouse: str | Path,
    mode: str = "standard",
    start_at: str | Mapping[str, int] = "latest",
    target: str | None = None,
) -> TableStream:
    """Open (creating on first use) the stream ``name`` over the Delta table ``source``.

    ``warehouse`` is the directory of a `type: tablestream` profile; the stream reads through
    that embedded engine's SparkSession. ``start_at``: 'latest' (changes committed after the
    stream is created, as a Zettapark stream), 'earliest' or ``{'version': N}`` (changes after N).
    ``target``: the table ``window.append_to`` writes; given, the stream also recovers its position
    from the target's commit marker after a crash between the write and the offset.
    """
    from dbt_tablestream.embedded import get_engine

    return TableStream(
        get_engine(warehouse),
        source=source,
        name=name,
        offsets_schema=offsets_schema,
        mode=mode,
        start_at=start_at,
        target=target,
    )

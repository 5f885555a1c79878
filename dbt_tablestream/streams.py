"""Table streams from PySpark, modelled on Zettapark's table streams (seed 000).

    from dbt_tablestream.streams import open_stream

    stream = open_stream(spark=spark, source="app.orders", name="orders_sync",
                         offsets_schema="analytics")
    stream.read().show()                 # the pending changes; reading does not advance
    with stream.consume() as window:     # advances only if the block completes
        window.append_to("analytics.orders_log")

A stream here is the same cursor the dbt materializations keep: its position is the latest row
for its name in ``<offsets_schema>.tablestream_offsets``, so ``tablestream status`` shows
streams from both. The offset moves only after the consuming write has committed. It runs on any
SparkSession with delta-spark (the local profile's, a cluster's, Databricks').
``window.append_to`` writes with the stream's commit marker (exactly once: a crash between the
write and the offset is recovered from the marker); a write of your own inside ``consume`` is
applied at least once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from dbt_tablestream._documents import StreamMode
from dbt_tablestream._macros import render
from dbt_tablestream._offsets import OFFSETS_TABLE
from dbt_tablestream.exceptions import StreamError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

T = TypeVar("T")


@dataclass(frozen=True)
class Position:
    epoch: int
    offset: int
    table_id: str | None


class StreamWindow:
    """The changes ``(after, through]`` of one consume: read them, write them, and the offset moves."""

    def __init__(self, stream: TableStream, position: Position, window: dict[str, Any]) -> None:
        self.stream = stream
        self.position = position
        # The window as the macros pinned it (_stream_input, cut by _stream_window_parts).
        self.window = window
        self.after = position.offset
        self.through: int = window["through"]
        self.view: str | None = window["view"]
        # Its rows in the stream column contract; append_to writes this same SELECT.
        self.sql = stream._window_sql(window)
        self.dataframe: DataFrame = stream.spark.sql(self.sql)
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
        carrying the stream's marker; creates the table on first use. An existing table keeps its
        columns, as a table_stream under on_schema_change 'ignore': a column the source gained is
        left out, and a window without one of the table's columns is refused. Returns rows written
        (0 when a previous, interrupted consume had already written this window)."""
        schema, _, name = table.partition(".")
        if not name:
            raise StreamError(f"{self.stream.subject}: append_to takes a qualified `schema.table`, got {table!r}.")
        written = self.stream._append(schema.lower(), name.lower(), columns, self)
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
    """A stream over a Delta source on a SparkSession with delta-spark. Use :func:`open_stream`."""

    def __init__(
        self,
        spark: SparkSession,
        subject: str,
        name: str,
        parts: list[str],
        offsets_schema: str,
        settings: dict[str, Any],
        target: str | None,
    ) -> None:
        """The stream ``name`` over the source named by ``parts``, with the settings
        _settings_from_configs gave it: open_stream checks its arguments and builds it."""
        self.subject = subject
        # Delta's txn settings that mark a write are session-wide: this stream's own session keeps
        # them away from the caller's.
        self.spark = spark.newSession()
        self.name = name
        # The catalog, when named, stays in every name the stream records (Unity Catalog's three parts).
        self.source = ".".join(parts)
        self.relation = ".".join(render("_sql_identifier", part) for part in parts)
        self.offsets_schema = offsets_schema.lower()
        self.offsets_relation = ".".join(
            render("_sql_identifier", part) for part in (self.offsets_schema, OFFSETS_TABLE)
        )
        self.settings: dict[str, Any] = settings
        self.mode: StreamMode = settings["stream_mode"]
        self.start_at: str | Mapping[str, int] = settings["start_at"]
        self.target = target.lower() if target else None
        self._position()  # creates the stream: its start is logged now, so later changes are pending

    # ----- where the stream stands ------------------------------------------------------------
    def _remedy(self) -> str:
        return (
            f"Reset the stream with `tablestream reset {self.name} --schema {self.offsets_schema} --to-version <v>` "
            "(a version whose changes can still be read), or open it again under a new name."
        )

    def _source_state(self, with_history: bool = False) -> dict[str, Any]:
        """The source's state (_stream_source_state_of): latest version, table id, tracking, and
        with ``with_history`` the earliest readable change version."""
        if not self.spark.catalog.tableExists(self.source):
            raise StreamError(f"{self.subject}: the source {self.source} does not exist.")
        detail = self.spark.sql(render("describe_detail_sql", self.relation)).collect()[0].asDict()
        latest = self.spark.sql(render("describe_history_sql", self.relation, 1)).collect()[0].asDict()
        properties_sql = render("table_properties_sql", self.relation)
        properties = {row[0]: row[1] for row in self.spark.sql(properties_sql).collect()}
        history = (
            [row.asDict() for row in self.spark.sql(render("describe_history_sql", self.relation, None)).collect()]
            if with_history
            else []
        )
        read = self.settings["stream_read"]
        state: dict[str, Any] = render(
            "_stream_source_state_of", self.name, self.source, detail, latest, properties, history, read
        )
        if not state["tracked"]:
            raise StreamError(
                render(
                    "_stream_untracked_message", render("_stream_subject", self.name), self.source, read, False, False
                )
            )
        return state

    def _logged(self) -> dict[str, Any] | None:
        if not self.spark.catalog.tableExists(f"{self.offsets_schema}.{OFFSETS_TABLE}"):
            return None
        rows = self.spark.sql(render("read_stream_offset_sql", self.offsets_relation, self.name)).collect()
        return rows[0].asDict() if rows else None

    def _position(self) -> Position:
        """Where the stream stands (_stream_position): its log row, or its target's marker when a
        consume wrote the target but died before logging its offset. A new stream, or one reset
        back to its start, logs where it starts (_stream_start_after), so later changes are pending."""
        position = render("_stream_position", self._logged(), self._marker(), True, False)
        if not position["restart"]:
            return Position(int(position["epoch"]), int(position["after"]), position["table_id"])
        state = self._source_state(with_history=self.start_at == "earliest")
        start = int(render("_stream_start_after", self.start_at, state, self.name, self.source))
        self._log_offset(int(position["epoch"]), state["table_id"], None, start, None, "")
        return Position(int(position["epoch"]), start, state["table_id"])

    def _log_offset(
        self, epoch: int, table_id: str | None, after: int | None, through: int, rows: int | None, target: str
    ) -> None:
        values = {
            "stream_name": self.name,
            "epoch": epoch,
            "stream_id": render("_stream_app_id", [self.name], [epoch]),
            "source": self.source,
            "source_table_id": table_id,
            "mode": self.mode,
            "from_version": after,
            "to_version": through,
            "target": target or f"python.{self.name}",
            "rows_written": rows,
        }
        row_sql = render("offsets_values_sql", values, invocation_id=f"pyspark-{uuid.uuid4()}")
        self.spark.sql(f"create schema if not exists {render('_sql_identifier', self.offsets_schema)}")
        self.spark.sql(render("offsets_log_create_sql", self.offsets_relation, row_sql))
        # Named columns: the log may have gained dbt runs' `note` column (_offsets_columns).
        columns = render("_offsets_columns")
        self.spark.sql(render("offsets_log_append_sql", self.offsets_relation, row_sql, columns))

    def _marker(self) -> dict[str, Any] | None:
        """This stream's newest marker on its target (_find_marker), from commitInfo.userMetadata."""
        if self.target is None or not self.spark.catalog.tableExists(self.target):
            return None
        history = [row.asDict() for row in self.spark.sql(render("describe_history_sql", self.target, 50)).collect()]
        marker: dict[str, Any] | None = render("_find_marker", history, self.name)
        return marker

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
        """The window from the stream's offset to the source's latest version, cut and checked by
        the rules resolve_stream applies (_stream_window_parts, _window_problem)."""
        position = self._position()
        state = self._source_state()
        fields = {
            "stream": self.name,
            "epoch": position.epoch,
            "source": self.source,
            "source_table_id": state["table_id"],
            "after": position.offset,
            "through": state["latest_version"],
            "latest": state["latest_version"],
            "file_retention": state["file_retention"],
            "remedy": self._remedy(),
        }
        window: dict[str, Any] = render("_stream_input", self.settings, fields)
        commits = (
            self._history_since(position.offset + 1, window["through"]) if position.offset < window["through"] else None
        )
        parts = render("_stream_window_parts", window, position.table_id, commits)
        recreated = parts.pop("recreated")
        window = render("_stream_input_with", window, parts)
        if window["after"] < window["through"] or recreated:
            retained_from = None
            if commits is not None:
                retained_from = self.spark.sql(render("retained_from_sql", window["file_retention"])).collect()[0][0]
            problem = render("_window_problem", self.source, window, position.table_id, commits, retained_from)
            if problem is not None:
                raise StreamError(problem["message"])
        if window["after"] < window["through"]:
            window = render("_stream_input_with", window, {"view": render("window_relation_sql", self.source, window)})
        return StreamWindow(self, position, window)

    def _history_since(self, first: int, through: int) -> list[dict[str, Any]]:
        """The source's commits from version ``first`` on (history_since, driven from Python)."""
        limit: int | None = through - first + 2
        rows: list[dict[str, Any]] = []
        while limit is not None:
            statement = render("describe_history_sql", self.relation, limit)
            rows = [row.asDict() for row in self.spark.sql(statement).collect()]
            limit = render("_history_limit_to_reach", rows, first, limit)
        return rows

    def _window_sql(self, window: dict[str, Any]) -> str:
        """The window's rows in the stream column contract (change_rows_sql, as source_stream()),
        read with the source's columns at the window's schema version."""
        read = render("_window_schema_relation", self.relation, window)
        columns = self.spark.sql(f"select * from {read} limit 0").schema.fields
        rows_sql: str = render("change_rows_sql", window, self.relation, columns)
        return "select * from " + rows_sql

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
                f"{self.subject} is being consumed by another process: it moved from version {window.after} "
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

    def _append(self, schema: str, name: str, columns: list[str] | None, window: StreamWindow) -> int:
        """One INSERT (or the CREATE of a new table) carrying the stream's marker, set and reset with
        the statements the materializations use: Delta skips it when a previous consume already
        recorded this window for the stream's app id."""
        relation = ".".join(render("_sql_identifier", part) for part in (schema, name))
        exists = self.spark.catalog.tableExists(f"{schema}.{name}")
        if exists and columns is None:
            columns = self.spark.table(f"{schema}.{name}").columns
            available = {field.lower() for field in window.dataframe.columns}
            missing = [column for column in columns if column.lower() not in available]
            if missing:
                raise StreamError(
                    f"{self.subject}: the window ({window.after}, {window.through}] of {self.source} has no column "
                    f"{', '.join(missing)} of {schema}.{name}"
                    + (
                        f" (the window starts at the schema change {window.window['schema_change']})"
                        if window.window["schema_change"]
                        else ""
                    )
                    + ". Nothing was written and the stream did not move. Append to a new table, or pass the "
                    "columns to write with append_to(..., columns=[...])."
                )
        select = ", ".join(render("_sql_identifier", column) for column in columns) if columns else "*"
        sql = f"select {select} from ({window.sql}) as __tablestream_window"
        stream = render("_stream_group", [window.window])
        invocation_id = f"pyspark-{uuid.uuid4()}"
        try:
            # No clearing (clear=False): the finally resets what the open sets, and a reset of the
            # layout keys it does not set would drop the caller's own (an autoCompact they turned on).
            for statement in render("stream_commit_open_sql", stream, {}, False, invocation_id=invocation_id):
                self.spark.sql(statement)
            if exists:
                named = f" ({select})" if columns else ""
                self.spark.sql(f"insert into {relation}{named} {sql}")
            else:
                self.spark.sql(f"create table {relation} using delta as {sql}")
        finally:
            for statement in render("stream_commit_close_sql"):
                self.spark.sql(statement)
        history = [row.asDict() for row in self.spark.sql(render("describe_history_sql", relation, 50)).collect()]
        own = render("_own_commit", history, stream, invocation_id=invocation_id)
        if own is None:
            return 0  # skipped by Delta: a previous consume already recorded this window
        return int(render("_commit_output_rows", history, own["commit_version"]) or 0)


def open_stream(
    *,
    spark: SparkSession,
    source: str,
    name: str,
    offsets_schema: str,
    mode: StreamMode | None = None,
    start_at: str | Mapping[str, int] | None = None,
    target: str | None = None,
) -> TableStream:
    """Open (creating on first use) the stream ``name`` over the Delta table ``source``.

    ``spark`` is a SparkSession with delta-spark. ``mode``: the stream_mode (standard or
    append_only). ``start_at``: 'latest' (changes committed after the stream is created, as a
    Zettapark stream), 'earliest' or ``{'version': N}`` (changes after N). Unset, each takes its
    default from the package's settings (``_stream_config_spec``: standard, latest).
    ``target``: the table ``window.append_to`` writes; given, the stream also recovers its position
    from the target's commit marker after a crash between the write and the offset.
    """
    # How every refusal names the stream, spelled once, by the macros.
    subject = render("_stream_subject", name)
    settings = render("_settings_from_configs", {"stream_mode": mode, "start_at": start_at}, subject, "pyspark")
    parts = source.lower().split(".")
    if len(parts) not in (2, 3) or not all(parts):
        raise StreamError(
            f"{subject}: source must be a qualified `schema.table` or `catalog.schema.table`, got {source!r}."
        )
    return TableStream(spark, subject, name, parts, offsets_schema, settings, target)

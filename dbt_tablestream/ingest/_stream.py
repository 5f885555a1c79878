"""Realtime streams: rows are buffered, and each flushed buffer is one Delta commit."""

from __future__ import annotations

import atexit
import gc
import logging
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from dbt_tablestream.exceptions import IngestError
from dbt_tablestream.ingest._options import FlushMode, RealtimeOperation, RealtimeOptions, RowOperator
from dbt_tablestream.ingest._targets import CHANGE_OPERATION, DELETE, PRIMARY_KEY_PROPERTY, UPSERT, SparkTarget, Target
from dbt_tablestream.ingest._types import Check, ValueRejected, value_check

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger("dbt_tablestream.ingest")

ALLOWED_ROWS = {
    RealtimeOperation.APPEND_ONLY: (RowOperator.INSERT,),
    RealtimeOperation.CDC: (RowOperator.UPSERT, RowOperator.DELETE_IGNORE),
}
# Rough per-value overhead in a buffer, so that mutation_buffer_space bounds memory.
VALUE_OVERHEAD_BYTES = 16


class Row:
    """One row for a realtime stream; create it with :meth:`RealtimeStream.create_row`."""

    def __init__(self, stream: RealtimeStream, operator: RowOperator) -> None:
        self.stream = stream
        self.operator = operator
        self.values: dict[str, Any] = {}

    def set_value(self, column: str, value: Any) -> Row:
        """Set a column; a value the column cannot take is refused here, naming the column."""
        name = self.stream._column_name(column)
        try:
            self.values[name] = self.stream._checks[name](value)
        except ValueRejected as error:
            raise IngestError(f"{self.stream.table}: column {name} {error}. The row was not changed.") from None
        return self

    def __repr__(self) -> str:
        return f"Row({self.operator.name}, {self.values!r})"


@dataclass
class _Batch:
    sequence: int
    rows: list[tuple[RowOperator, dict[str, Any]]]


@dataclass
class StreamStats:
    """What a realtime stream has done so far."""

    rows_applied: int = 0
    rows_committed: int = 0
    commits: int = 0
    retries: int = 0


class RealtimeStream:
    """Buffers rows and commits each buffer as one Delta commit (see the module docstring)."""

    def __init__(
        self,
        target: Target,
        operate: RealtimeOperation,
        options: RealtimeOptions,
        primary_key: Sequence[str] | None,
    ) -> None:
        if not isinstance(operate, RealtimeOperation):
            accepted = ", ".join(f"RealtimeOperation.{op.name}" for op in RealtimeOperation)
            raise IngestError(f"{target.display}: operate takes {accepted}; got {operate!r}.")
        self.target = target
        self.table = target.display
        self.operate = operate
        schema = target.arrow_schema()
        self.schema = pa.schema([field.with_nullable(True) for field in schema])
        self._checks: dict[str, Check] = {f.name: value_check(f.type, f.nullable) for f in schema}
        self._required = [f.name for f in schema if not f.nullable]
        self.primary_key = self._resolve_key(primary_key)
        self.options = self._resolve_options(options)
        self.writer_id = f"tablestream-ingest/{self.table}/{uuid.uuid4()}"
        self.stats = StreamStats()
        self._buffer: list[tuple[RowOperator, dict[str, Any]]] = []
        self._buffer_bytes = 0
        self._buffer_started = 0.0
        self._sealed: deque[_Batch] = deque()
        self._next_sequence = 0
        self._condition = threading.Condition()
        self._commit_lock = threading.Lock()
        self._error: IngestError | None = None
        self._closed = False
        self._worker: threading.Thread | None = None
        _track(self)
        if self.options.flush_mode is FlushMode.AUTO_FLUSH_BACKGROUND:
            self._worker = threading.Thread(
                target=self._background, name=f"tablestream-ingest-{self.table}", daemon=True
            )
            self._worker.start()

    # ----- setup -----------------------------------------------------------------------------
    def _resolve_key(self, primary_key: Sequence[str] | None) -> list[str] | None:
        declared = self.target.properties().get(PRIMARY_KEY_PROPERTY)
        from_table = [part.strip() for part in declared.split(",") if part.strip()] if declared else None
        keys = [self._column_name(key) for key in primary_key] if primary_key else None
        if keys and from_table and [k.lower() for k in keys] != [k.lower() for k in from_table]:
            raise IngestError(
                f"{self.table}: primary_key={keys} differs from the table's {PRIMARY_KEY_PROPERTY} property "
                f"({declared}). Pass the table's key, or leave primary_key out."
            )
        keys = keys or ([self._column_name(key) for key in from_table] if from_table else None)
        if self.operate is RealtimeOperation.CDC and not keys:
            raise IngestError(
                f"{self.table}: a CDC stream needs a primary key, and Delta tables have none. Pass "
                f"primary_key=[...] to get_realtime_stream, or set the table property {PRIMARY_KEY_PROPERTY} "
                "(for example 'id' or 'id,region')."
            )
        if self.operate is RealtimeOperation.APPEND_ONLY and keys:
            raise IngestError(
                f"{self.table}: the table is keyed by {', '.join(keys)}, and keyed tables take "
                "operate=RealtimeOperation.CDC with UPSERT and DELETE_IGNORE rows."
            )
        return keys

    def _resolve_options(self, options: RealtimeOptions) -> RealtimeOptions:
        if self.primary_key and options.flush_mode is not FlushMode.AUTO_FLUSH_SYNC:
            from dataclasses import replace

            logger.warning(
                "%s: keyed tables flush synchronously, so that changes to a key commit in order; "
                "flush mode %s is reset to AUTO_FLUSH_SYNC.",
                self.table,
                options.flush_mode.name,
            )
            return replace(options, flush_mode=FlushMode.AUTO_FLUSH_SYNC)
        return options

    def _column_name(self, column: str) -> str:
        if column in self._checks:
            return column
        for name in self._checks:
            if name.lower() == str(column).lower():
                return name
        raise IngestError(f"{self.table} has no column {column!r}; its columns: {', '.join(self._checks)}.")

    # ----- rows ------------------------------------------------------------------------------
    def create_row(self, operator: RowOperator = RowOperator.INSERT) -> Row:
        self._check_operator(operator)
        return Row(self, operator)

    def _check_operator(self, operator: Any) -> None:
        allowed = ALLOWED_ROWS[self.operate]
        if operator not in allowed:
            names = ", ".join(f"RowOperator.{op.name}" for op in allowed)
            raise IngestError(
                f"{self.table}: a {self.operate.name} stream takes {names} rows; got {operator!r}."
                + (
                    " Open the stream with operate=RealtimeOperation.CDC for keyed changes."
                    if self.operate is RealtimeOperation.APPEND_ONLY
                    else ""
                )
            )

    def apply(self, *rows: Row) -> None:
        """Buffer rows; a full buffer is committed as the flush mode says."""
        for row in rows:
            self._check_row(row)
        self._raise_pending()
        for row in rows:
            values = (
                {key: row.values[key] for key in self.primary_key}
                if row.operator is RowOperator.DELETE_IGNORE and self.primary_key
                else dict(row.values)
            )
            with self._condition:
                self._await_room()
                if not self._buffer:
                    self._buffer_started = time.monotonic()
                self._buffer.append((row.operator, values))
                self._buffer_bytes += sum(_value_size(value) for value in values.values())
                self.stats.rows_applied += 1
                full = (
                    len(self._buffer) >= self.options.mutation_buffer_lines_num
                    or self._buffer_bytes >= self.options.mutation_buffer_space
                )
                if full:
                    self._seal()
            if full and self.options.flush_mode is FlushMode.AUTO_FLUSH_SYNC:
                self._commit_sealed()
        if self.options.flush_mode is FlushMode.AUTO_FLUSH_SYNC and self._buffer and self._interval_elapsed():
            self.flush()

    def _check_row(self, row: Row) -> None:
        if self._closed:
            raise IngestError(f"{self.table}: the realtime stream is closed; open a new one with get_realtime_stream.")
        if not isinstance(row, Row) or row.stream is not self:
            raise IngestError(f"{self.table}: apply() takes rows made by this stream's create_row().")
        self._check_operator(row.operator)
        for key in self.primary_key or []:
            if row.values.get(key) is None:
                raise IngestError(
                    f"{self.table}: a {row.operator.name} row needs its primary key column {key} set (not None). "
                    "The row was not applied."
                )
        if row.operator is not RowOperator.DELETE_IGNORE:
            unset = [name for name in self._required if row.values.get(name) is None]
            if unset:
                raise IngestError(
                    f"{self.table}: column {', '.join(unset)} is NOT NULL; set it before apply(). The row was not applied."
                )

    # ----- buffers -----------------------------------------------------------------------------
    def _await_room(self) -> None:
        """Called holding the condition: room for one more sealed buffer, or an error."""
        limit = self.options.mutation_buffer_max_num
        if self.options.flush_mode is FlushMode.MANUAL_FLUSH and len(self._sealed) >= limit:
            raise IngestError(
                f"{self.table}: {len(self._sealed)} full buffers wait for flush() (with_mutation_buffer_max_num="
                f"{limit}). Call flush(), or raise the limit. The row was not applied."
            )
        while self.options.flush_mode is FlushMode.AUTO_FLUSH_BACKGROUND and len(self._sealed) >= limit:
            if self._error is not None:
                raise self._error
            self._condition.wait(0.1)

    def _seal(self) -> None:
        """Called holding the condition: the current buffer becomes the next commit."""
        if self._buffer:
            self._sealed.append(_Batch(self._next_sequence, self._buffer))
            self._next_sequence += 1
            self._buffer, self._buffer_bytes = [], 0
            self._condition.notify_all()

    def _interval_elapsed(self) -> bool:
        return time.monotonic() - self._buffer_started >= self.options.flush_interval_ms / 1000

    def flush(self) -> None:
        """Commit every buffered row now; returns when they are committed (one commit per buffer)."""
        self._raise_pending()
        with self._condition:
            self._seal()
        if self._worker is None:
            self._commit_sealed()
            return
        with self._condition:
            while self._sealed and self._error is None and self._worker.is_alive():
                self._condition.wait(0.1)
        self._raise_pending()

    def _commit_sealed(self) -> None:
        while True:
            with self._condition:
                if not self._sealed:
                    return
                batch = self._sealed[0]
            self._commit(batch)
            with self._condition:
                self._sealed.popleft()
                self._condition.notify_all()

    def _background(self) -> None:
        while True:
            with self._condition:
                while not self._sealed and not self._closed:
                    if self._buffer and self._interval_elapsed():
                        self._seal()
                        break
                    self._condition.wait(min(0.05, self.options.flush_interval_ms / 1000))
                if not self._sealed and self._closed:
                    return
            try:
                self._commit_sealed()
            except IngestError as error:
                with self._condition:
                    self._error = error
                    self._condition.notify_all()
                return

    def _raise_pending(self) -> None:
        if self._error is not None:
            raise self._error

    # ----- commits ---------------------------------------------------------------------------
    def _commit(self, batch: _Batch) -> None:
        data = self._batch_table(batch)
        options = self.options
        delay = options.request_failed_retry_internal_ms / 1000
        with self._commit_lock:
            for attempt in range(options.request_failed_retry_times + 1):
                try:
                    if attempt > 0:
                        done = self.target.committed_sequence(self.writer_id)
                        if done is not None and done >= batch.sequence:
                            break  # the failed attempt had committed after all
                    if self.primary_key:
                        self.target.apply_changes(data, self.primary_key, self.writer_id, batch.sequence)
                    else:
                        self.target.append(data, self.writer_id, batch.sequence)
                    break
                except Exception as error:
                    status = self.target.retry_status(error)
                    retryable = options.request_failed_retry_enable and status in options.request_failed_retry_status
                    if not retryable or attempt == options.request_failed_retry_times:
                        tried = f" after {attempt} retries" if attempt else ""
                        raise IngestError(
                            f"{self.table}: a flush of {len(batch.rows)} rows failed{tried}: {error}. Those rows "
                            "were not committed, and the stream accepts no more rows; open a new one and "
                            "apply them again."
                        ) from error
                    self.stats.retries += 1
                    log = logger.debug if options.request_failed_retry_log_debug_enable else logger.info
                    log(
                        "%s: flush %d failed (%s), retry %d in %.2fs",
                        self.table,
                        batch.sequence,
                        status,
                        attempt + 1,
                        delay,
                    )
                    time.sleep(delay)
                    delay *= 2
        self.stats.commits += 1
        self.stats.rows_committed += len(batch.rows)

    def _batch_table(self, batch: _Batch) -> pa.Table:
        if not self.primary_key:
            return pa.Table.from_pylist([values for _, values in batch.rows], schema=self.schema)
        # One MERGE cannot take two changes to one key; applied in order, the last one wins.
        latest: dict[tuple[Any, ...], tuple[RowOperator, dict[str, Any]]] = {}
        for operator, values in batch.rows:
            latest[tuple(values[key] for key in self.primary_key)] = (operator, values)
        rows = [
            {**values, CHANGE_OPERATION: DELETE if operator is RowOperator.DELETE_IGNORE else UPSERT}
            for operator, values in latest.values()
        ]
        return pa.Table.from_pylist(rows, schema=self.schema.append(pa.field(CHANGE_OPERATION, pa.string())))

    # ----- lifetime --------------------------------------------------------------------------
    def close(self) -> None:
        """Flush what is buffered and stop; the stream takes no more rows."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            with self._condition:
                self._closed = True
                self._condition.notify_all()
            if self._worker is not None:
                self._worker.join()
            logger.info(
                "realtime stream %s: %d rows in %d commits (%d retries)",
                self.table,
                self.stats.rows_committed,
                self.stats.commits,
                self.stats.retries,
            )

    def _stop_at_exit(self) -> None:
        """Stop the writer thread at interpreter exit, after the commits already sealed; what is
        still buffered was never flushed, so it is reported, not committed behind the caller's back."""
        if self._closed:
            return
        with self._condition:
            unflushed = len(self._buffer)
            self._closed = True
            self._condition.notify_all()
        if self._worker is not None:
            self._worker.join()
        if unflushed:
            logger.warning(
                "realtime stream %s: %d buffered rows were not committed: the process exited without close()",
                self.table,
                unflushed,
            )

    def __enter__(self) -> RealtimeStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _value_size(value: Any) -> int:
    if isinstance(value, (str, bytes)):
        return len(value) + VALUE_OVERHEAD_BYTES
    if isinstance(value, (list, tuple, dict)):
        return sum(_value_size(item) for item in value) + VALUE_OVERHEAD_BYTES
    return 8 + VALUE_OVERHEAD_BYTES


# Streams not yet closed, stopped at interpreter exit while pyarrow and delta-rs are still whole
# (docs/architecture.md, "Exiting without an abort").
_LIVE_STREAMS: weakref.WeakSet[RealtimeStream] = weakref.WeakSet()
_EXIT_HOOK: list[bool] = []


def _track(stream: RealtimeStream) -> None:
    if not _EXIT_HOOK:
        atexit.register(_stop_live_streams)
        _EXIT_HOOK.append(True)
    _LIVE_STREAMS.add(stream)


def _stop_live_streams() -> None:
    for stream in list(_LIVE_STREAMS):
        stream._stop_at_exit()
    gc.collect()


class Connection:
    """A connection to a warehouse or a SparkSession; opens realtime streams on its tables."""

    def __init__(self, warehouse: Path | None = None, spark: SparkSession | None = None) -> None:
        self.warehouse = warehouse
        self.spark = spark
        self._streams: list[RealtimeStream] = []

    def get_realtime_stream(
        self,
        schema: str,
        table: str,
        operate: RealtimeOperation = RealtimeOperation.APPEND_ONLY,
        options: RealtimeOptions | None = None,
        primary_key: Sequence[str] | None = None,
    ) -> RealtimeStream:
        """A realtime stream on an existing table ``schema.table``."""
        if isinstance(primary_key, str):
            primary_key = [primary_key]
        target: Target
        if self.spark is not None:
            target = SparkTarget(self.spark, schema, table)
        else:
            from dbt_tablestream.ingest._delta_target import DeltaTarget

            assert self.warehouse is not None
            target = DeltaTarget(self.warehouse, schema, table)
        stream = RealtimeStream(target, operate, options or RealtimeOptions(), primary_key)
        self._streams.append(stream)
        return stream

    def close(self) -> None:
        """Close (and so flush) every stream this connection opened."""
        errors = []
        for stream in self._streams:
            try:
                stream.close()
            except IngestError as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def connect(*, warehouse: str | Path | None = None, spark: SparkSession | None = None) -> Connection:
    """Connect to a local warehouse folder (delta-rs, no JVM), or to a SparkSession with delta-spark."""
    if (warehouse is None) == (spark is None):
        raise IngestError(
            "connect() takes one of warehouse= (the directory of a `type: tablestream` profile) or spark= "
            "(a SparkSession with Delta)."
        )
    if warehouse is not None:
        path = Path(warehouse).expanduser().resolve()
        if not path.is_dir():
            raise IngestError(
                f"The warehouse {path} is not a directory; pass the warehouse of your tablestream profile."
            )
        return Connection(warehouse=path)
    return Connection(spark=spark)

"""The embedded engine: one local SparkSession per process, bridged to Delta tables via delta-rs.

SQL runs in Spark. Statements that change storage are issued by this project's macros as
*directives*: a ``/* tablestream:{json} */`` comment naming the operation, followed by the
query whose result the operation writes. A directive is carried out here with delta-rs as one
Delta commit, so every write can carry a commit marker (SetTransaction + commitInfo).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deltalake import DeltaTable

from dbt_tablestream import exceptions
from dbt_tablestream.embedded._catalog import WarehouseCatalog, qualified, quote, target_lock
from dbt_tablestream.embedded._delta import (
    CommitMarker,
    MergeSpec,
    add_columns,
    delete_rows,
    is_delta_table,
    merge_table,
    set_properties,
    write_table,
)
from dbt_tablestream.embedded._directory import local_location, sync_directory
from dbt_tablestream.embedded._log import check_window, source_state, target_marker
from dbt_tablestream.embedded._netting import net_merge_source
from dbt_tablestream.embedded._session import check_warehouse, start_spark
from dbt_tablestream.embedded._sources import change_rows, open_change_feed, table_changes_class
from dbt_tablestream.embedded._status import OFFSET_ROW_DDL, latest_offset_row, stream_status
from dbt_tablestream.embedded._streams import WINDOW_SOURCE, WindowSource, window_schema
from dbt_tablestream.exceptions import DirectiveError, StreamError, TablestreamError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

DIRECTIVE = re.compile(r"/\*\s*tablestream:(\{.*?\})\s*\*/", re.DOTALL)
# A MERGE source that asks the engine to net the model's changes per key first.
NET_CHANGES = re.compile(r"\s*/\*\s*tablestream:net\s+(\{.*?\})\s*\*/", re.DOTALL)
NOT_FOUND_MARKERS = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND")
# Spark turns an Arrow table into a local relation up to spark.sql.execution.arrow.localRelationThreshold
# (48 MiB by default); a window up to this size is read once, on the driver.
LOCAL_WINDOW_BYTES = 32 * 1024 * 1024


@dataclass
class StatementResult:
    """What a statement returned: a Spark DataFrame for queries, or a count for directives."""

    dataframe: DataFrame | None = None
    rows_affected: int = -1
    # A marked write whose window a concurrent run already applied: nothing was written.
    skipped: bool = False


def parse_directive(sql: str) -> tuple[dict[str, Any], str] | None:
    """Split ``sql`` into (directive, body) when it carries a tablestream directive."""
    match = DIRECTIVE.search(sql)
    if match is None:
        return None
    try:
        directive = json.loads(match.group(1))
    except json.JSONDecodeError as error:
        raise DirectiveError(f"Malformed tablestream directive {match.group(1)!r}: {error}") from error
    if not isinstance(directive, dict) or "op" not in directive:
        raise DirectiveError(f"A tablestream directive needs an 'op': {match.group(1)!r}")
    body = sql[match.end() :].strip().rstrip(";").strip()
    return directive, body


class Engine:
    """Runs SQL and directives against one warehouse. Use :func:`get_engine`, not the constructor."""

    def __init__(self, spark: SparkSession, warehouse: Path) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self.catalog = WarehouseCatalog(spark, warehouse)
        self.spark.udtf.register("table_changes", _table_changes_udtf(str(warehouse)))
        self.spark.dataSource.register(WindowSource)
        self._window_views: dict[str, str] = {}

    # ----- statements ----------------------------------------------------------------------
    def execute(self, sql: str) -> StatementResult:
        parsed = parse_directive(sql)
        if parsed is not None:
            directive, body = parsed
            return self.run_directive(directive, body)
        return StatementResult(dataframe=self.sql(sql))

    def sql(self, sql: str) -> DataFrame:
        """Run Spark SQL; when it names a relation another process created since, sync and retry once."""
        from pyspark.errors import AnalysisException

        try:
            try:
                return self.spark.sql(sql)
            except AnalysisException as error:
                if not any(marker in str(error) for marker in NOT_FOUND_MARKERS):
                    raise
                self.catalog.sync()
                return self.spark.sql(sql)
        except AnalysisException as error:
            own = own_error(error)
            if own is None:
                raise
            raise own from error

    def sql_arrow(self, sql: str) -> pa.Table:
        """Run a query to an Arrow table; errors our Python code raised inside Spark come out unwrapped."""
        from pyspark.errors import PySparkException

        frame = self.sql(sql)
        try:
            return frame.toArrow()
        except PySparkException as error:
            own = own_error(error)
            if own is None:
                raise
            raise own from error

    def columns_of(self, schema: str | None, name: str) -> StructType | None:
        """The Spark schema of a relation, or None when it does not exist."""
        from pyspark.errors import AnalysisException

        if schema:
            known = self.catalog.table_schema(schema, name)
            if known is not None:
                return known
        target = qualified(schema, name) if schema else quote(name)
        try:
            return self.sql(f"SELECT * FROM {target}").schema
        except AnalysisException as error:
            if any(marker in str(error) for marker in NOT_FOUND_MARKERS):
                return None
            raise

    def query_arrow(self, body: str) -> pa.Table:
        if not body:
            raise DirectiveError("This tablestream directive needs a query after it")
        return self.sql_arrow(body)

    # ----- directives ----------------------------------------------------------------------
    def run_directive(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        operation = directive["op"]
        handler = getattr(self, f"_op_{operation}", None)
        if handler is None:
            accepted = sorted(name[4:] for name in dir(self) if name.startswith("_op_"))
            raise DirectiveError(f"Unknown tablestream directive {operation!r}; accepted: {', '.join(accepted)}")
        result: StatementResult = handler(directive, body)
        return result

    def _relation(self, directive: Mapping[str, Any], prefix: str = "") -> tuple[str, str]:
        try:
            return str(directive[f"{prefix}schema"]).lower(), str(directive[f"{prefix}name"]).lower()
        except KeyError as error:
            raise DirectiveError(f"Directive {directive.get('op')!r} needs {error.args[0]!r}") from error

    def _path(self, directive: Mapping[str, Any]) -> str:
        return str(self.catalog.table_path(*self._relation(directive)))

    @staticmethod
    def _marker(directive: Mapping[str, Any]) -> CommitMarker:
        raw = directive.get("marker") or {}
        return CommitMarker(
            app_id=raw.get("app_id"),
            version=raw.get("version"),
            metadata={str(k): str(v) for k, v in (raw.get("metadata") or {}).items()},
        )

    def _op_create_schema(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        self.catalog.create_schema(str(directive["schema"]))
        return StatementResult()

    def _op_drop_schema(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        self.catalog.drop_schema(str(directive["schema"]))
        return StatementResult()

    def _op_write(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        schema, name = self._relation(directive)
        mode = directive.get("mode", "overwrite")
        if mode not in ("overwrite", "append"):
            raise DirectiveError(f"write mode must be 'overwrite' or 'append', got {mode!r}")
        data = self.query_arrow(body)

        def write() -> StatementResult:
            self._make_room_for_table(schema, name)
            write_table(
                self._path(directive),
                data,
                mode,
                partition_by=directive.get("partition_by"),
                properties=directive.get("properties"),
                marker=self._marker(directive),
            )
            return StatementResult(rows_affected=data.num_rows)

        result = self._once_per_marker(directive, write)
        self.catalog.register_table(schema, name)
        return result

    def _make_room_for_table(self, schema: str, name: str) -> None:
        """A table is about to be written at ``schema.name``: its schema exists, and no view is there."""
        if self.catalog.relation_kind(schema, name) == "view":
            self.catalog.drop_relation(schema, name)
        self.catalog.create_schema(schema)

    def _op_merge(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        schema, name = self._relation(directive)
        net = NET_CHANGES.match(body)
        if net is None:
            source = self.query_arrow(body)
        else:
            wanted = json.loads(net.group(1))
            source = net_merge_source(
                self.query_arrow(body[net.end() :]), list(wanted["keys"]), list(wanted["data_columns"])
            )
        spec = MergeSpec(
            keys=list(directive["keys"]),
            update_columns=directive.get("update_columns"),
            update=directive.get("update", True),
            insert=directive.get("insert", True),
            update_when=directive.get("update_when"),
            insert_when=directive.get("insert_when"),
            delete_when=directive.get("delete_when"),
            soft_delete_when=directive.get("soft_delete_when"),
            soft_delete_set=directive.get("soft_delete_set") or {},
            extra_set=directive.get("extra_set") or {},
        )

        def merge() -> StatementResult:
            metrics = merge_table(self._path(directive), source, spec, marker=self._marker(directive))
            affected = sum(
                metrics.get(k, 0)
                for k in ("num_target_rows_inserted", "num_target_rows_updated", "num_target_rows_deleted")
            )
            return StatementResult(rows_affected=affected)

        result = self._once_per_marker(directive, merge)
        self.catalog.register_table(schema, name)
        return result

    def _once_per_marker(self, directive: Mapping[str, Any], write: Callable[[], StatementResult]) -> StatementResult:
        """Run a marked write at most once per window, also across processes.

        Under an exclusive lock on the target, the target's SetTransaction version for the
        stream says what is applied: the whole window (a concurrent run won: no-op), part of what
        this window starts from (the window is stale: refuse), or nothing of it (write).
        """
        marker = self._marker(directive)
        if marker.app_id is None:
            return write()
        schema, name = self._relation(directive)
        with target_lock(self.warehouse, schema, name):
            path = self._path(directive)
            applied = DeltaTable(path).transaction_version(marker.app_id) if is_delta_table(path) else None
            after = (directive.get("marker") or {}).get("after")
            if applied is not None and marker.version is not None and applied >= marker.version:
                return StatementResult(rows_affected=0, skipped=True)
            if applied is not None and after is not None and applied > int(after):
                stream = marker.metadata.get("tablestream.stream", marker.app_id)
                raise StreamError(
                    f"Stream {stream} is being consumed by another run: it applied the source up to version "
                    f"{applied} after this run read from version {after}. Nothing was written; run again to "
                    "apply what is left."
                )
            return write()

    def _op_truncate(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        delete_rows(self._path(directive), marker=self._marker(directive))
        return StatementResult()

    def _op_create_view(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        schema, name = self._relation(directive)
        self.catalog.create_view(schema, name, body)
        return StatementResult()

    def _op_drop(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        self.catalog.drop_relation(*self._relation(directive))
        return StatementResult()

    def _op_rename(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        self.catalog.rename_relation(*self._relation(directive), *self._relation(directive, "to_"))
        return StatementResult()

    def _op_set_properties(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        schema, name = self._relation(directive)
        if self.catalog.relation_kind(schema, name) != "table":
            raise DirectiveError(f"{schema}.{name} is not a Delta table under {self.warehouse}; nothing to alter.")
        properties = {str(k): str(v) for k, v in (directive.get("properties") or {}).items()}
        set_properties(self._path(directive), properties)
        return StatementResult()

    # ----- streams -------------------------------------------------------------------------
    def _rows(self, rows: list[dict[str, Any]], ddl: str) -> StatementResult:
        """A directive's answer as a DataFrame. Built from Arrow, Spark keeps it a local relation
        that it collects on the driver; from Python rows it would run a job (about 0.1 s)."""
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType, _parse_datatype_string

        schema = _parse_datatype_string(ddl)
        assert isinstance(schema, StructType)
        table = pa.Table.from_pylist(rows, schema=to_arrow_schema(schema))
        return StatementResult(dataframe=self.spark.createDataFrame(table, schema))

    def _op_source_state(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        state = source_state(
            self._path(directive),
            str(directive["source"]),
            str(directive["stream"]),
            at_timestamp=directive.get("at_timestamp"),
            want_earliest=bool(directive.get("want_earliest")),
        )
        row = {
            "latest_version": state.latest_version,
            "table_id": state.table_id,
            "latest_timestamp": state.latest_timestamp.isoformat(),
            "change_feed_enabled": state.change_feed_enabled,
            "earliest_change_version": state.earliest_change_version,
            "version_at_timestamp": state.version_at_timestamp,
        }
        return self._rows(
            [row],
            "latest_version bigint, table_id string, latest_timestamp string, change_feed_enabled boolean, "
            "earliest_change_version bigint, version_at_timestamp bigint",
        )

    def _op_stream_health(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """A stream's position and health from its latest offsets row (see stream_health)."""
        status = stream_status(self.catalog.warehouse, dict(directive["row"]))
        health = {
            key: value
            for key, value in status.as_json().items()
            if key in ("offset_time", "source_version", "source_time", "stale", "problem", "at_risk_from")
        }
        return self._rows([{"health": json.dumps(health)}], "health string")

    def _op_key_counts(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """How many rows the query returns, and how many of them have a NULL in a key column."""
        import pyarrow.compute as pc

        keys = [str(key) for key in directive["keys"]]
        projected = self.query_arrow(
            f"select {', '.join(quote(key) for key in keys)} from ({body}) as __tablestream_keys"
        )
        null_keys = 0
        if projected.num_rows and keys:
            any_null = pc.is_null(projected.column(0))
            for index in range(1, len(keys)):
                any_null = pc.or_(any_null, pc.is_null(projected.column(index)))
            null_keys = pc.sum(any_null.cast("int64")).as_py() or 0
        return self._rows(
            [{"rows_read": projected.num_rows, "null_keys": null_keys}], "rows_read bigint, null_keys bigint"
        )

    def _op_stream_offset(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """A stream's latest offsets-log row, read with delta-rs: a Spark read of the log costs more
        than the rest of an empty-window run."""
        row = latest_offset_row(self._path(directive), str(directive["stream"]))
        return self._rows([row] if row else [], OFFSET_ROW_DDL)

    def _op_target_marker(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        marker = target_marker(self._path(directive), str(directive["stream"])) or {}
        return self._rows(
            [{"marker": json.dumps(marker)}] if marker else [],
            "marker string",
        )

    def _op_stream_window(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """Check a window and register its raw changes (or a snapshot) as a temporary view."""
        path = self._path(directive)
        after, through = int(directive["after"]), int(directive["through"])
        kind = str(directive["kind"])
        if kind == "changes":
            check_window(
                path,
                str(directive["source"]),
                str(directive["stream"]),
                after,
                through,
                directive.get("table_id"),
                model=str(directive.get("model", "<model>")),
                remedy=directive.get("remedy"),
            )
        frame = self._local_window(path, after + 1, through) if kind == "changes" else None
        if frame is None:
            reader = self.spark.read.format(WINDOW_SOURCE).options(
                path=path, kind=kind, start=str(after + 1), end=str(through), timestamp=str(directive.get("timestamp"))
            )
            frame = reader.load()
        view = str(directive["view"])
        frame.createOrReplaceTempView(view)
        # A stream's previous window view is done with; a local one holds its rows in the driver.
        previous = self._window_views.get(str(directive["stream"]))
        if previous is not None and previous != view:
            self.spark.catalog.dropTempView(previous)
        self._window_views[str(directive["stream"])] = view
        return StatementResult()

    def _local_window(self, path: str, start: int, end: int) -> DataFrame | None:
        """A window's change rows read once on the driver into a local relation, when they are small.

        Every later query of the run (output columns, the NULL-key count, the MERGE source) then
        runs in the JVM instead of calling back into a Python data source. Larger windows return
        None, having read no more than the bound, and are read by the data source, batch by batch,
        on each query.
        """
        import pyarrow as pa

        feed = open_change_feed(path, path, start, end)
        batches, size = [], 0
        for batch in feed:
            size += batch.nbytes
            if size > LOCAL_WINDOW_BYTES:
                return None
            batches.append(batch)
        changes = change_rows(pa.Table.from_batches(batches, schema=feed.schema))
        schema = window_schema(path, end)
        return self.spark.createDataFrame(changes.select(schema.names), schema)

    def _op_directory_sync(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """List a location and apply the difference to its directory table in at most one commit."""
        schema, name = self._relation(directive)
        self._make_room_for_table(schema, name)
        synced = sync_directory(
            self._path(directive),
            local_location(str(directive["location"]), directive.get("project_dir")),
            recursive=bool(directive.get("recursive", True)),
            include=list(directive.get("include") or []),
            exclude=list(directive.get("exclude") or []),
            rebuild=bool(directive.get("rebuild")),
            properties={str(k): str(v) for k, v in (directive.get("properties") or {}).items()},
        )
        self.catalog.register_table(schema, name)
        row = {
            "files": synced.files,
            "inserted": synced.inserted,
            "updated": synced.updated,
            "deleted": synced.deleted,
            "version": synced.version,
        }
        return self._rows([row], "files bigint, inserted bigint, updated bigint, deleted bigint, version bigint")

    def _op_pause(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """Test-only: hold this run at a named step so that concurrent runs line up there."""
        time.sleep(float(directive.get("seconds", 0)))
        return StatementResult()

    def _op_fault(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        """Test-only: die at once, as a crash would, at a named step of the commit protocol."""
        os.kill(os.getpid(), signal.SIGKILL)
        return StatementResult()

    def _op_add_columns(self, directive: Mapping[str, Any], body: str) -> StatementResult:
        schema, name = self._relation(directive)
        columns = [(str(column), str(data_type)) for column, data_type in directive["columns"]]
        if not columns:
            return StatementResult()
        probe = ", ".join(f"cast(null as {data_type}) as `{column}`" for column, data_type in columns)
        arrow_schema = self.spark.sql(f"select {probe}").limit(0).toArrow().schema
        add_columns(self._path(directive), [(field.name, field.type) for field in arrow_schema])
        self.catalog.register_table(schema, name)
        return StatementResult()


_OWN_ERROR = re.compile(r"dbt_tablestream\.exceptions\.(\w+): (.*?)(?:\s+SQLSTATE: \w+.*)?$", re.DOTALL)


def own_error(error: Exception) -> TablestreamError | None:
    """Spark wraps an error raised in our UDTF or data source in a Python traceback; take ours out."""
    match = _OWN_ERROR.search(str(error))
    if match is None:
        return None
    error_class = getattr(exceptions, match.group(1), TablestreamError)
    if not (isinstance(error_class, type) and issubclass(error_class, TablestreamError)):
        error_class = TablestreamError
    return error_class(match.group(2).strip())


def _table_changes_udtf(warehouse: str) -> Any:
    from pyspark.sql.functions import udtf

    return udtf(table_changes_class(warehouse), useArrow=True)


_engine: Engine | None = None
_engine_lock = threading.Lock()


def _stop_spark(spark: SparkSession) -> None:
    """Stop Spark before the interpreter tears down, so no JVM gateway or worker thread outlives it."""
    with contextlib.suppress(Exception):
        spark.stop()


def get_engine(warehouse: str | Path, spark_config: Mapping[str, str] | None = None) -> Engine:
    """The process's engine for ``warehouse``: starts Spark on first use, syncs the catalog each call.

    One process has one SparkSession. Asking for another warehouse re-points the engine: the
    Spark catalog of the previous warehouse is forgotten (only Spark's scratch entries are
    dropped; nothing under a schema directory is touched).
    """
    global _engine
    with _engine_lock:
        path = Path(warehouse).expanduser().resolve()
        if _engine is None or _engine.warehouse != path:
            path = check_warehouse(path)
        if _engine is None or _engine.spark._jsc is None:
            _engine = Engine(start_spark(path, spark_config or {}), path)
            atexit.register(_stop_spark, _engine.spark)
        elif _engine.warehouse != path:
            _engine.catalog.forget()
            _engine = Engine(_engine.spark, path)
        _engine.catalog.sync()
        return _engine

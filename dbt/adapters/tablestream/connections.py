"""Profile and connections of `type: tablestream`: dbt-spark's session method on the local
SparkSession of `_session`, one Spark session per dbt thread."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.exceptions.connection import FailedToConnectError
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionMethod, SparkCredentials
from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.tablestream._session import LocalSpark
from dbt_tablestream._macros import render
from dbt_tablestream._warehouse import DEFAULT_WAREHOUSE, warehouse_path
from dbt_tablestream.exceptions import TablestreamError

ADAPTER_TYPE = "tablestream"
ANSI_SETTING = "spark.sql.ansi.enabled"
PROFILE_KEYS = ("schema", "database", "warehouse", "server_side_parameters", "emulate_sql_warehouse")
# Keys dbt itself puts in every profile target, besides the adapter's own fields.
_DBT_PROFILE_KEYS = frozenset({"type", "threads", "retries"})
# The only parameters a Databricks SQL warehouse lets a session SET ("Configuration parameters" in
# the Databricks SQL reference); it refuses every other key, Spark's and Delta's included.
SQL_WAREHOUSE_PARAMETERS = frozenset(
    {
        "ansi_mode",
        "legacy_time_parser_policy",
        "max_file_partition_bytes",
        "statement_timeout",
        "timezone",
        "use_cached_result",
    }
)
# SET or RESET of a key: `SET key = value`, `SET key`, `RESET key`. The warehouse's own statements
# (SET TIME ZONE, SET VARIABLE, SET QUERY_TAGS) and a bare SET are not settings.
# dbt puts its query comment before each statement.
_SETTING_STATEMENT = re.compile(
    r"^(?:\s*(?:/\*.*?\*/|--[^\n]*\n))*\s*(set|reset)\s+(?!time\s+zone\b|var\b|variable\b|query_tags\b)`?([^\s=`;]+)",
    re.IGNORECASE | re.DOTALL,
)
# `SET <key> = <value>` and `RESET <key>` of a runtime SQL setting, after dbt's query comment: the
# commit protocol sends four of each around every marked write (docs/architecture.md, "Cost").
_SESSION_SETTING = re.compile(
    r"^(?:\s*(?:/\*.*?\*/|--[^\n]*\n))*\s*(set|reset)\s+((?:spark\.sql|spark\.databricks)\.[A-Za-z0-9_.\-]+)"
    r"(?:\s*=\s*(.*?))?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
STATEMENT_LOG = "sql_warehouse_statements.log"


@dataclass
class TablestreamCredentials(SparkCredentials):
    """A warehouse directory, a default schema and optional Spark settings."""

    method: SparkConnectionMethod = SparkConnectionMethod.SESSION
    host: str | None = "localhost"
    warehouse: str = DEFAULT_WAREHOUSE
    server_side_parameters: dict[str, str] = field(default_factory=dict)
    # Refuse, as a Databricks SQL warehouse does, every SET of a key outside its short list, and
    # log each statement: the tests' stand-in for a warehouse (docs/cluster-engine.md).
    emulate_sql_warehouse: bool = False

    @classmethod
    def validate(cls, data: Any) -> None:
        if isinstance(data, dict):
            # dbt validates the profile with every field filled in, dbt-spark's included.
            known = {item.name for item in fields(cls)} | _DBT_PROFILE_KEYS
            unknown = sorted(set(data) - known)
            if unknown:
                raise DbtRuntimeError(
                    f"Unknown key(s) in the tablestream profile: {', '.join(unknown)}. "
                    f"Accepted keys: {', '.join(sorted({*PROFILE_KEYS, 'threads'}))}. "
                    "Spark settings go under `server_side_parameters:`; for a Spark cluster use `type: spark`."
                )
        super().validate(data)

    def __post_init__(self) -> None:
        if not self.schema:
            raise DbtRuntimeError("The tablestream profile needs `schema:` (the default schema for models).")
        if not isinstance(self.server_side_parameters, dict):
            raise DbtRuntimeError(
                "`server_side_parameters` in the tablestream profile must be a mapping of Spark settings."
            )
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"The tablestream profile runs a local Spark session; method {self.method!r} is for a cluster: "
                "use `type: spark` with that method (docs/clusters.md)."
            )
        ansi = self.server_side_parameters.get(ANSI_SETTING)
        super().__post_init__()
        # dbt-spark turns ANSI mode off on every profile; Databricks SQL and Spark 4 clusters run
        # with it on. A tablestream profile that asks for it gets it, to run models as they will run there.
        if ansi is not None:
            self.server_side_parameters[ANSI_SETTING] = str(ansi).lower()

    @property
    def type(self) -> str:
        return ADAPTER_TYPE

    @property
    def unique_field(self) -> str:
        return self.warehouse

    def _connection_keys(self) -> tuple[str, ...]:
        return ("warehouse", "schema", "server_side_parameters", "emulate_sql_warehouse")

    def warehouse_path(self, project_root: str | None = None) -> Path:
        return warehouse_path(self.warehouse, project_root or None)


def session_setting(sql: str) -> tuple[str, str | None] | None:
    """The key and value of `SET <key> = <value>` (value None for `RESET <key>`) of a
    `spark.sql.` or `spark.databricks.` setting, as Spark's parser reads them (a backquoted value
    unquoted); None for any other statement."""
    found = _SESSION_SETTING.match(sql)
    if found is None:
        return None
    verb, key, value = found.group(1).lower(), found.group(2), found.group(3)
    if (verb == "set") == (value is None):
        return None
    if value is not None and len(value) >= 2 and value.startswith("`") and value.endswith("`"):
        value = value[1:-1].replace("``", "`")
    return key, value


def refused_setting(sql: str) -> str | None:
    """The key a SQL warehouse refuses to SET or RESET in `sql`, or None."""
    found = _SETTING_STATEMENT.match(sql)
    if found is None or found.group(2).lower() in SQL_WAREHOUSE_PARAMETERS:
        return None
    return found.group(2)


class NodeSettings:
    """The runtime settings one dbt node's connection SET on its thread's session, each with the
    value the session held before: a node's settings end with it (restore), as a Thrift server's
    end with the connection that made them. A write that fails inside Delta would otherwise leave
    Delta's idempotent-write settings to mark, or skip, every later write on the thread
    (docs/architecture.md, "A failed write")."""

    def __init__(self) -> None:
        self._before: dict[str, tuple[Any, str | None]] = {}

    def record(self, session: Any, key: str) -> None:
        if key not in self._before:
            self._before[key] = (session, session.conf.get(key, None))

    def restore(self) -> None:
        before, self._before = self._before, {}
        for key, (session, value) in before.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


class ThreadSessionCursor(Cursor):
    """dbt-spark's session cursor, on the calling thread's own Spark session. A statement that
    fails first restores every setting its node made (NodeSettings)."""

    def __init__(
        self,
        warehouse: Path,
        settings: dict[str, str],
        emulate_sql_warehouse: bool = False,
        node_settings: NodeSettings | None = None,
    ) -> None:
        super().__init__(server_side_parameters=settings)
        self.warehouse = warehouse
        self.emulate_sql_warehouse = emulate_sql_warehouse
        self.node_settings = node_settings or NodeSettings()

    def execute(self, sql: str, *parameters: Any) -> None:
        if parameters:
            sql = sql % parameters
        if self.emulate_sql_warehouse:
            self._as_a_sql_warehouse(sql)
        session = LocalSpark.session(self.warehouse, self.server_side_parameters)
        if self._set_directly(session, sql):
            return
        with self._failing_restores():
            self._df = session.sql(sql)

    def fetchall(self) -> list[Any] | None:
        with self._failing_restores():
            return super().fetchall()

    def fetchone(self) -> Any:
        with self._failing_restores():
            return super().fetchone()

    @contextmanager
    def _failing_restores(self) -> Iterator[None]:
        """A statement that fails (when run, or when its rows are fetched) restores its node's
        settings, then raises Spark's or Delta's error to dbt with their own message."""
        try:
            yield
        except BaseException as error:
            self.node_settings.restore()
            converted = _spark_error(error)
            if converted is None:
                raise
            raise converted[0] from converted[1]

    def _set_directly(self, session: Any, sql: str) -> bool:
        """Runs a SET or RESET of a runtime SQL setting through the session's RuntimeConfig, as
        Spark's SetCommand and ResetCommand do, without parsing and planning a statement: a
        statement costs 100-250 ms here on a busy machine, the call about a millisecond. False
        (nothing done) for any other statement, which Spark then runs itself."""
        setting = session_setting(sql)
        if setting is None:
            return False
        key, value = setting
        try:
            if not session.conf.isModifiable(key):
                return False
            self.node_settings.record(session, key)
            if value is not None:
                session.conf.set(key, value)
            else:
                # RESET restores the value the session started with, if it had one.
                initial = session.sparkContext.getConf().get(key, None)
                if initial is None:
                    session.conf.unset(key)
                else:
                    session.conf.set(key, initial)
        except Exception:  # a value Spark refuses: its SetCommand says why, in its own words
            return False
        self._df = None
        self._rows = []
        return True

    def _as_a_sql_warehouse(self, sql: str) -> None:
        self.warehouse.mkdir(parents=True, exist_ok=True)
        with (self.warehouse / STATEMENT_LOG).open("a", encoding="utf-8") as log:
            log.write(sql.strip() + "\n;\n")
        key = refused_setting(sql)
        if key is not None:
            # A warehouse's own words (SQLSTATE 42K0I), so errors read as they would there.
            raise DbtRuntimeError(
                f"[CONFIG_NOT_AVAILABLE] Configuration {key} is not available. SQLSTATE: 42K0I "
                "(emulate_sql_warehouse: a Databricks SQL warehouse refuses to set it)"
            )


def _spark_error(error: BaseException) -> tuple[DbtRuntimeError, BaseException] | None:
    """The error dbt gets for a failed statement, and its cause: Spark's and Delta's analysis
    errors as dbt's runtime error with their own message; None to raise `error` as it is."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException

    if isinstance(error, AnalysisException):
        return DbtRuntimeError(str(error)), error
    if isinstance(error, Py4JJavaError):
        # pyspark, converting Delta's AnalysisException, asks Spark for the message of its error
        # class (to log it); Spark does not know Delta's DELTA_* classes, and that call fails
        # with "[INTERNAL_ERROR] Cannot find main error class". The Java exception the query
        # raised is the one being handled then: its message is Delta's.
        raised = error.__context__
        if isinstance(raised, Py4JJavaError):
            return DbtRuntimeError(str(raised.java_exception.getMessage())), raised
    return None


class ThreadSessionConnection:
    """One dbt node's connection (dbt opens one per node and closes it after): its cursors run on
    the thread's session and share the node's NodeSettings."""

    def __init__(self, warehouse: Path, settings: dict[str, str], emulate_sql_warehouse: bool = False) -> None:
        self.warehouse = warehouse
        self.settings = settings
        self.emulate_sql_warehouse = emulate_sql_warehouse
        self.node_settings = NodeSettings()

    def cursor(self) -> ThreadSessionCursor:
        return ThreadSessionCursor(self.warehouse, self.settings, self.emulate_sql_warehouse, self.node_settings)


class ThreadSessionConnectionWrapper(SessionConnectionWrapper):
    handle: ThreadSessionConnection  # type: ignore[assignment]

    def close(self) -> None:
        """dbt closes a node's connection when the node ends, whatever its outcome: the settings
        it made end too, as a failed statement's do at once."""
        super().close()
        self.handle.node_settings.restore()

    @classmethod
    def _fix_binding(cls, value: Any) -> str | float:
        """Seed values as SQL literals, written as the package writes every literal (its
        `_sql_string`). dbt-spark's session method quotes strings without escaping them and renders
        None as 'None'; a seed with an apostrophe or an empty cell failed."""
        if value is None:
            return "NULL"
        if isinstance(value, str):
            return str(render("_sql_string", value))
        return super()._fix_binding(value)


class TablestreamConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE
    project_root: ClassVar[str | None] = None

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        credentials: TablestreamCredentials = connection.credentials
        warehouse = credentials.warehouse_path(cls.project_root)
        settings = {key: str(value) for key, value in credentials.server_side_parameters.items()}
        try:
            LocalSpark.root(warehouse, settings)
        except TablestreamError as error:
            connection.state = ConnectionState.FAIL
            raise FailedToConnectError(str(error)) from error
        connection.handle = ThreadSessionConnectionWrapper(
            ThreadSessionConnection(warehouse, settings, bool(credentials.emulate_sql_warehouse))  # type: ignore[arg-type]
        )
        connection.state = ConnectionState.OPEN
        return connection

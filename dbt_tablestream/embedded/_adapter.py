"""The dbt adapter of `type: tablestream`: dbt-spark's adapter, connected to the embedded engine."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

from dbt.adapters.base.meta import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState, Credentials
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from dbt_common.exceptions import DbtRuntimeError

from dbt_tablestream.exceptions import TablestreamError

logger = AdapterLogger("Tablestream")

ADAPTER_TYPE = "tablestream"
# Keys dbt itself puts in every profile target, besides the adapter's own fields.
_DBT_PROFILE_KEYS = frozenset({"type", "threads", "retries"})


@dataclass
class TablestreamCredentials(Credentials):
    """Profile of the embedded engine: a warehouse directory and a default schema."""

    schema: str = ""  # type: ignore[assignment]
    database: str | None = None  # type: ignore[assignment]
    warehouse: str = "./warehouse"
    spark_config: dict[str, str] = field(default_factory=dict)

    _ALIASES: ClassVar[dict[str, str]] = {}

    @classmethod
    def validate(cls, data: Any) -> None:
        if isinstance(data, dict):
            accepted = {f.name for f in fields(cls) if not f.name.startswith("_")} | _DBT_PROFILE_KEYS
            unknown = sorted(set(data) - accepted)
            if unknown:
                raise DbtRuntimeError(
                    f"Unknown key(s) in the tablestream profile: {', '.join(unknown)}. "
                    f"Accepted keys: {', '.join(sorted(accepted - {'type'}))}. "
                    "Spark settings go under `spark_config:`."
                )
        super().validate(data)

    def __post_init__(self) -> None:
        if not self.schema:
            raise DbtRuntimeError("The tablestream profile needs `schema:` (the default schema for models).")
        if self.database is not None and self.database != self.schema:
            raise DbtRuntimeError(
                f"On tablestream, as on Spark, `database` must be omitted or equal `schema` "
                f"(got database {self.database!r}, schema {self.schema!r})."
            )
        self.database = None
        if not isinstance(self.spark_config, dict):
            raise DbtRuntimeError("`spark_config` in the tablestream profile must be a mapping of Spark settings.")

    @property
    def type(self) -> str:
        return ADAPTER_TYPE

    @property
    def unique_field(self) -> str:
        return self.warehouse

    def _connection_keys(self) -> tuple[str, ...]:
        return ("warehouse", "schema", "spark_config")

    def warehouse_path(self, project_root: str | None = None) -> Path:
        path = Path(self.warehouse).expanduser()
        if not path.is_absolute() and project_root:
            path = Path(project_root) / path
        return path.resolve()


def sql_literal(value: Any) -> str:
    """Render a Python value as a Spark SQL literal (seed rows arrive as bindings)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"CAST('{value}' AS DOUBLE)"
        return repr(value)
    if isinstance(value, Decimal):
        return f"{value}BD" if value == value.to_integral_value() else str(value)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


class EngineCursor:
    """A DB-API-like cursor over the engine, as dbt-spark's connection manager expects."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._result: Any = None
        self._rows: list[Any] | None = None

    def execute(self, sql: str, bindings: Sequence[Any] | None = None) -> None:
        sql = sql.strip()
        if sql.endswith(";"):
            sql = sql[:-1]
        if bindings:
            sql = sql % tuple(sql_literal(value) for value in bindings)
        self._rows = None
        try:
            self._result = self.engine.execute(sql)
        except TablestreamError as error:
            raise DbtRuntimeError(str(error)) from error

    def fetchall(self) -> list[Any]:
        if self._rows is None:
            frame = None if self._result is None else self._result.dataframe
            self._rows = [] if frame is None else frame.collect()
        return self._rows

    def fetchone(self) -> Any:
        rows = self.fetchall()
        return rows.pop(0) if rows else None

    @property
    def description(self) -> list[tuple[Any, ...]]:
        frame = None if self._result is None else self._result.dataframe
        if frame is None:
            return []
        return [(f.name, f.dataType.simpleString(), None, None, None, None, f.nullable) for f in frame.schema.fields]

    @property
    def rows_affected(self) -> int:
        return -1 if self._result is None else self._result.rows_affected

    @property
    def skipped(self) -> bool:
        return bool(self._result is not None and self._result.skipped)

    def close(self) -> None:
        self._result = None
        self._rows = None


class EngineConnection:
    """The connection handle: hands out cursors; the engine has no transactions to manage."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._cursor: EngineCursor | None = None

    def cursor(self) -> EngineCursor:
        self._cursor = EngineCursor(self.engine)
        return self._cursor

    def cancel(self) -> None:
        logger.debug("tablestream: cancel is not supported by the local engine")

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        logger.debug("tablestream: no transactions to roll back")


class TablestreamConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE
    project_root: ClassVar[str | None] = None

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        from dbt_tablestream.embedded._engine import get_engine

        credentials: TablestreamCredentials = connection.credentials  # type: ignore[assignment]
        try:
            engine = get_engine(credentials.warehouse_path(cls.project_root), credentials.spark_config)
        except TablestreamError as error:
            connection.state = ConnectionState.FAIL  # type: ignore[assignment]
            raise FailedToConnectError(str(error)) from error
        connection.handle = EngineConnection(engine)
        connection.state = ConnectionState.OPEN  # type: ignore[assignment]
        return connection

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        rows = getattr(cursor, "rows_affected", -1)
        if getattr(cursor, "skipped", False):
            return AdapterResponse(_message="SKIPPED already applied", code="SKIPPED", rows_affected=0)
        return AdapterResponse(_message="OK", rows_affected=rows if rows >= 0 else None)


@dataclass
class TablestreamConfig(SparkConfig):
    file_format: str = "delta"


class TablestreamAdapter(SparkAdapter):
    ConnectionManager = TablestreamConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = TablestreamConfig  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # A relative `warehouse` is relative to the dbt project, not to the shell's directory.
        TablestreamConnectionManager.project_root = getattr(config, "project_root", None)

    @classmethod
    def type(cls) -> str:
        return ADAPTER_TYPE

    @available
    def project_root(self) -> str | None:
        """The dbt project's directory: relative paths in configs (a directory table's location)
        are taken from it, as dbt takes its own paths."""
        root = getattr(self.config, "project_root", None)
        return str(root) if root else None

    def _engine(self) -> Any:
        connection = self.connections.get_thread_connection()
        connection = self.connections.open(connection)
        return connection.handle.engine

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        if not schema_relation.schema:
            return []
        relations: list[BaseRelation] = []
        for info in self._engine().catalog.relations(schema_relation.schema):
            information = describe_information(info)
            relations.append(
                self.Relation.create(
                    schema=info.schema,
                    identifier=info.name,
                    type=RelationType.View if info.kind == "view" else RelationType.Table,
                    information=information,
                    is_delta=info.kind == "table",
                    is_iceberg=False,
                    is_hudi=False,
                )
            )
        return relations

    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        """Columns from the catalog's Delta schema (no Spark job); temporary views ask Spark."""
        # dbt's temporary relations keep a schema but render without it: they are temp views.
        schema = relation.schema if relation.include_policy.schema else None
        spark_schema = self._engine().columns_of(schema, relation.identifier)
        if spark_schema is None:
            return []
        return [
            SparkColumn(
                table_database=None,
                table_schema=relation.schema,
                table_name=relation.identifier,
                table_type=relation.type,
                table_owner=None,
                table_stats=None,
                column=f.name,
                column_index=index,
                dtype=f.dataType.simpleString(),
            )
            for index, f in enumerate(spark_schema.fields)
        ]

    @classmethod
    def _get_adapter_specific_run_info(cls, config: Any) -> dict[str, Any]:
        return {"adapter_type": ADAPTER_TYPE, "table_format": "delta"}


def describe_information(info: Any) -> str:
    """The `information` text dbt-spark parses from SHOW TABLE EXTENDED, built from our catalog."""
    lines = [f"Database: {info.schema}", f"Table: {info.name}"]
    if info.kind == "view":
        lines += ["Type: VIEW"]
    else:
        lines += ["Type: MANAGED", "Provider: delta"]
        if info.spark_schema is not None:
            lines.append("Schema: root")
            lines += [
                f" |-- {f.name}: {f.dataType.simpleString()} (nullable = {str(f.nullable).lower()})"
                for f in info.spark_schema.fields
            ]
    return "\n".join(lines) + "\n"

"""Where a realtime stream commits: what every target offers, and a Delta table of a SparkSession
with delta-spark. A table of a warehouse folder, written by path with delta-rs so that no JVM
starts, is `dbt_tablestream.ingest._delta_target.DeltaTarget`.

Every commit carries a SetTransaction (the writer's id, the flush's sequence number), so a
retried flush whose first attempt did commit is recognised and not written twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from dbt_tablestream._macros import render
from dbt_tablestream.exceptions import IngestError
from dbt_tablestream.ingest._options import RetryStatus

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

PRIMARY_KEY_PROPERTY = "tablestream.primary_key"

# A flush of keyed changes carries one operation per key in this column: UPSERT or DELETE.
CHANGE_OPERATION = "__tablestream_op"
UPSERT, DELETE = "UPSERT", "DELETE"

# Delta's idempotent DML settings: a write whose txnVersion for the txnAppId is not above the one
# the table has recorded is skipped. They are SQL settings of a session, not options of a statement.
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"


class Target(Protocol):
    display: str

    def arrow_schema(self) -> pa.Schema: ...

    def properties(self) -> dict[str, str]: ...

    def committed_sequence(self, writer_id: str) -> int | None: ...

    def append(self, rows: pa.Table, writer_id: str, sequence: int) -> None: ...

    def apply_changes(self, rows: pa.Table, keys: list[str], writer_id: str, sequence: int) -> None:
        """MERGE rows with an CHANGE_OPERATION (UPSERT or DELETE), at most one per key."""

    def retry_status(self, error: BaseException) -> RetryStatus | None: ...


def quoted(name: str) -> str:
    """A name in Spark SQL, quoted as the package's macros quote one (docs/architecture.md, "Quoting")."""
    return str(render("_sql_identifier", name))


def missing_table(display: str, where: str) -> IngestError:
    return IngestError(
        f"No table {display} {where}. Create it first (a dbt model or seed, CREATE TABLE, or "
        "deltalake.write_deltalake with its schema); the realtime writer does not create tables."
    )


class SparkTarget:
    """A Delta table of a SparkSession with delta-spark (or Databricks).

    Each commit is one INSERT or MERGE with Delta's idempotent-write settings (txnAppId,
    txnVersion), so Delta itself skips a retried flush that already committed.
    """

    def __init__(self, spark: SparkSession, schema: str, table: str) -> None:
        self.display = f"{schema}.{table}"
        self.relation = f"{quoted(schema)}.{quoted(table)}"
        if not spark.catalog.tableExists(f"{schema}.{table}"):
            raise missing_table(self.display, "in the Spark catalog")
        # The txn settings hold for every statement of a session until unset. On a session of the
        # writer's own (same SparkContext and catalog, its own SQL settings and temporary views),
        # a statement the caller runs meanwhile, from any thread, is never taken for this flush
        # and skipped by Delta. Spark Connect (Databricks Connect, serverless) has no newSession():
        # there the caller's session is used, and the settings hold only while a flush runs.
        new_session = getattr(spark, "newSession", None)
        self.spark: SparkSession = new_session() if new_session is not None else spark
        self.columns: StructType = self.spark.table(self.relation).schema

    def arrow_schema(self) -> pa.Schema:
        from pyspark.sql.pandas.types import to_arrow_schema

        # A TIMESTAMP column holds instants; in Arrow an instant needs a zone, and UTC keeps the
        # stored value. TIMESTAMP_NTZ stays without one.
        return to_arrow_schema(self.columns, timezone="UTC")

    def properties(self) -> dict[str, str]:
        rows = self.spark.sql(f"SHOW TBLPROPERTIES {self.relation}").collect()
        return {str(row[0]): str(row[1]) for row in rows}

    def committed_sequence(self, writer_id: str) -> int | None:
        # Spark SQL does not expose the table's SetTransactions, and none is needed: a repeated
        # flush carries the same txnVersion, so Delta skips it (see _commit).
        return None

    def _frame_schema(self, rows: pa.Table) -> StructType:
        """The buffer's Spark schema, from the table's own columns. Inferred from Arrow instead, a
        naive timestamp would become a TIMESTAMP (Spark's default type) and shift on the way in by
        the session's zone. Nullable: a DELETE carries only its key."""
        from pyspark.sql.types import StringType, StructField, StructType

        columns = {field.name: field for field in self.columns.fields}
        fields = [
            StructField(name, StringType()) if name == CHANGE_OPERATION else StructField(name, columns[name].dataType)
            for name in rows.column_names
        ]
        return StructType(fields)

    def _commit(self, rows: pa.Table, statement: Callable[[str], str], writer_id: str, sequence: int) -> None:
        """Runs ``statement(view)`` over the rows as the temporary view ``view``."""
        view = f"__tablestream_ingest_{uuid.uuid4().hex}"
        self.spark.createDataFrame(rows, schema=self._frame_schema(rows)).createOrReplaceTempView(view)
        try:
            self.spark.conf.set(TXN_APP_ID, writer_id)
            self.spark.conf.set(TXN_VERSION, str(sequence))
            self.spark.sql(statement(view))
        finally:
            # Delta does not reset them after a write: left set, the next statement on this
            # session would carry this flush's version and be skipped as a repeat.
            self.spark.conf.unset(TXN_APP_ID)
            self.spark.conf.unset(TXN_VERSION)
            self.spark.catalog.dropTempView(view)

    def append(self, rows: pa.Table, writer_id: str, sequence: int) -> None:
        columns = ", ".join(quoted(name) for name in rows.column_names)
        self._commit(
            rows,
            lambda view: f"INSERT INTO {self.relation} ({columns}) SELECT {columns} FROM {view}",
            writer_id,
            sequence,
        )

    def apply_changes(self, rows: pa.Table, keys: list[str], writer_id: str, sequence: int) -> None:
        columns = [name for name in rows.column_names if name != CHANGE_OPERATION]
        on = " AND ".join(f"t.{quoted(key)} = s.{quoted(key)}" for key in keys)
        updates = ", ".join(f"t.{quoted(name)} = s.{quoted(name)}" for name in columns)
        names = ", ".join(quoted(name) for name in columns)
        values = ", ".join(f"s.{quoted(name)}" for name in columns)
        operation = f"s.{quoted(CHANGE_OPERATION)}"
        self._commit(
            rows,
            lambda view: (
                f"MERGE INTO {self.relation} AS t USING {view} AS s ON {on} "
                f"WHEN MATCHED AND {operation} = {render('_sql_string', DELETE)} THEN DELETE "
                f"WHEN MATCHED THEN UPDATE SET {updates} "
                f"WHEN NOT MATCHED AND {operation} = {render('_sql_string', UPSERT)} THEN INSERT ({names}) VALUES ({values})"
            ),
            writer_id,
            sequence,
        )

    def retry_status(self, error: BaseException) -> RetryStatus | None:
        text = f"{type(error).__name__}: {error}"
        if "Concurrent" in text or "DELTA_CONCURRENT" in text:
            return RetryStatus.FAILED
        if isinstance(error, OSError):
            return RetryStatus.INTERNAL_ERROR
        return None

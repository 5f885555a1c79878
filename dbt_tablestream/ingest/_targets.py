"""Where a realtime stream commits: what every target offers, and the cluster engine's target, a
Delta table through a SparkSession with delta-spark. The embedded engine's target (delta-rs) is
`dbt_tablestream.embedded._ingest.DeltaTarget`.

Every commit carries a SetTransaction (the writer's id, the flush's sequence number), so a
retried flush whose first attempt did commit is recognised and not written twice.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from dbt_tablestream.embedded._delta import CHANGE_OPERATION, DELETE, UPSERT
from dbt_tablestream.exceptions import IngestError
from dbt_tablestream.ingest._options import RetryStatus

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRIMARY_KEY_PROPERTY = "tablestream.primary_key"


class Target(Protocol):
    display: str

    def arrow_schema(self) -> pa.Schema: ...

    def properties(self) -> dict[str, str]: ...

    def committed_sequence(self, writer_id: str) -> int | None: ...

    def append(self, rows: pa.Table, writer_id: str, sequence: int) -> None: ...

    def apply_changes(self, rows: pa.Table, keys: list[str], writer_id: str, sequence: int) -> None:
        """MERGE rows with an CHANGE_OPERATION (UPSERT or DELETE), at most one per key."""

    def retry_status(self, error: BaseException) -> RetryStatus | None: ...


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
        self.spark = spark
        self.display = f"{schema}.{table}"
        self.relation = f"`{schema}`.`{table}`"
        if not spark.catalog.tableExists(f"{schema}.{table}"):
            raise missing_table(self.display, "in the Spark catalog")

    def arrow_schema(self) -> pa.Schema:
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(self.spark.table(self.relation).schema)

    def properties(self) -> dict[str, str]:
        rows = self.spark.sql(f"SHOW TBLPROPERTIES {self.relation}").collect()
        return {str(row[0]): str(row[1]) for row in rows}

    def committed_sequence(self, writer_id: str) -> int | None:
        # Delta records txnAppId/txnVersion but Spark SQL does not expose them; Delta skips the
        # repeated write on its own (see _commit).
        return None

    def _commit(self, rows: pa.Table, statement: str, writer_id: str, sequence: int) -> None:
        view = f"__tablestream_ingest_{uuid.uuid4().hex}"
        self.spark.createDataFrame(rows).createOrReplaceTempView(view)
        settings = {
            "spark.databricks.delta.write.txnAppId": writer_id,
            "spark.databricks.delta.write.txnVersion": str(sequence),
        }
        try:
            for key, value in settings.items():
                self.spark.conf.set(key, value)
            self.spark.sql(statement.format(source=view))
        finally:
            for key in settings:
                self.spark.conf.unset(key)
            self.spark.catalog.dropTempView(view)

    def append(self, rows: pa.Table, writer_id: str, sequence: int) -> None:
        columns = ", ".join(f"`{name}`" for name in rows.column_names)
        self._commit(
            rows, f"INSERT INTO {self.relation} ({columns}) SELECT {columns} FROM {{source}}", writer_id, sequence
        )

    def apply_changes(self, rows: pa.Table, keys: list[str], writer_id: str, sequence: int) -> None:
        columns = [name for name in rows.column_names if name != CHANGE_OPERATION]
        on = " AND ".join(f"t.`{key}` = s.`{key}`" for key in keys)
        updates = ", ".join(f"t.`{name}` = s.`{name}`" for name in columns)
        names = ", ".join(f"`{name}`" for name in columns)
        values = ", ".join(f"s.`{name}`" for name in columns)
        statement = (
            f"MERGE INTO {self.relation} AS t USING {{source}} AS s ON {on} "
            f"WHEN MATCHED AND s.`{CHANGE_OPERATION}` = '{DELETE}' THEN DELETE "
            f"WHEN MATCHED THEN UPDATE SET {updates} "
            f"WHEN NOT MATCHED AND s.`{CHANGE_OPERATION}` = '{UPSERT}' THEN INSERT ({names}) VALUES ({values})"
        )
        self._commit(rows, statement, writer_id, sequence)

    def retry_status(self, error: BaseException) -> RetryStatus | None:
        text = f"{type(error).__name__}: {error}"
        if "Concurrent" in text or "DELTA_CONCURRENT" in text:
            return RetryStatus.FAILED
        if isinstance(error, OSError):
            return RetryStatus.INTERNAL_ERROR
        return None

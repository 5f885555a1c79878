"""The engines stream scenarios run on: `tablestream` (embedded, always) and `spark` (dbt-spark's
session method on a local SparkSession with delta-spark, when its jars are available).

The spark engine needs the delta-spark jars on the JVM's classpath when the JVM starts, so it
runs in a pytest process of its own (one JVM per process):

    TABLESTREAM_DELTA_SPARK_JARS=/path/to/jars pytest -m engines -k spark

where the directory holds delta-spark_2.13-<v>.jar and delta-storage-<v>.jar (Delta >= 4.0 for
Spark 4), or, with access to Maven Central, TABLESTREAM_DELTA_SPARK_PACKAGES=io.delta:delta-spark_2.13:4.0.0.
Sources are written with delta-rs as on the embedded engine and registered as external tables;
targets are managed tables under the same warehouse directory, so every assertion reads the same
Delta tables the same way on both engines.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

JARS_VARIABLE = "TABLESTREAM_DELTA_SPARK_JARS"
PACKAGES_VARIABLE = "TABLESTREAM_DELTA_SPARK_PACKAGES"
NO_JARS = (
    "spark engine: delta-spark jars are not available here (Maven Central is unreachable). Set "
    f"{JARS_VARIABLE}=<directory with delta-spark_2.13 and delta-storage jars> or "
    f"{PACKAGES_VARIABLE}=io.delta:delta-spark_2.13:<version>, then run `pytest -m engines -k spark` "
    "(docs/cluster-engine.md)"
)
OWN_PROCESS = (
    "spark engine: it needs a JVM started with the delta-spark jars, and this process already runs the "
    "embedded engine's; run it on its own: `pytest -m engines -k spark` (docs/cluster-engine.md)"
)
EMBEDDED_AFTER_SPARK = "tablestream engine: this process runs the delta-spark session; run it without -k spark"


class StreamEngine(Protocol):
    name: str

    def profile(self, warehouse: Path) -> dict[str, Any]: ...

    def sync(self, warehouse: Path) -> None: ...

    def crash(self, project_root: Path, point: str) -> str: ...


class EmbeddedEngine:
    """`type: tablestream`: nothing to register; a crash is a SIGKILL of a real `dbt run` process."""

    name = "tablestream"

    def profile(self, warehouse: Path) -> dict[str, Any]:
        return {"type": "tablestream", "schema": "analytics", "warehouse": str(warehouse), "threads": 1}

    def sync(self, warehouse: Path) -> None:
        return None

    def crash(self, project_root: Path, point: str) -> str:
        process = dbt_process(project_root, {"DBT_TABLESTREAM_FAULT": point})
        output, _ = process.communicate(timeout=600)
        assert process.returncode == -9, output
        return output


class DeltaSparkEngine:
    """`type: spark` (session method) on a local SparkSession with delta-spark and an in-memory
    catalog. Each run first registers the warehouse's Delta tables: sources as external tables,
    and schemas located in the warehouse so that targets land where the assertions read them.
    A crash is the fault point raising in-process: the JVM holds the catalog, so the run cannot
    be a separate process, and what matters for the protocol is that nothing after the point runs.
    """

    name = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def profile(self, warehouse: Path) -> dict[str, Any]:
        return {"type": "spark", "method": "session", "host": "NA", "schema": "analytics", "threads": 1}

    def sync(self, warehouse: Path) -> None:
        for schema in ("app", "analytics"):
            location = (warehouse / f"{schema}.db").resolve()
            location.mkdir(parents=True, exist_ok=True)
            if self.spark.sql(f"show schemas like '{schema}'").collect():
                described = {row[0]: row[1] for row in self.spark.sql(f"describe schema {schema}").collect()}
                if Path(str(described.get("Location", "")).removeprefix("file:")).resolve() != location:
                    # A schema left by an earlier scenario: forget it without deleting its files.
                    for table in self.spark.sql(f"show tables in {schema}").collect():
                        self.spark.sql(f"drop table if exists {schema}.`{table.tableName}`")
                    self.spark.sql(f"alter schema {schema} set location '{location}'")
            else:
                self.spark.sql(f"create schema {schema} location '{location}'")
        registered = {row.tableName for row in self.spark.sql("show tables in app").collect()}
        for table in sorted((warehouse / "app.db").iterdir()):
            exists = (table / "_delta_log").is_dir()
            if table.name in registered and not exists:
                self.spark.sql(f"drop table app.`{table.name}`")
            elif exists and table.name not in registered:
                self.spark.sql(f"create table app.`{table.name}` using delta location '{table.resolve()}'")
        for name in registered:
            if not (warehouse / "app.db" / name / "_delta_log").is_dir():
                self.spark.sql(f"drop table if exists app.`{name}`")

    def crash(self, project_root: Path, point: str) -> str:
        from dbt.cli.main import dbtRunner

        os.environ["DBT_TABLESTREAM_FAULT"] = point
        try:
            result = dbtRunner().invoke(
                ["run", "--project-dir", str(project_root), "--profiles-dir", str(project_root)]
            )
        finally:
            del os.environ["DBT_TABLESTREAM_FAULT"]
        message = str(result.exception or [r.message for r in result.result.results])
        assert not result.success and f"tablestream test fault at {point}" in message, message
        return message


def dbt_process(project_root: Path, env_extra: dict[str, str]) -> subprocess.Popen[str]:
    """`dbt run` in a process of its own, without the test hooks of this process's environment."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DBT_TABLESTREAM_")}
    env.update(env_extra)
    dbt = Path(sys.executable).with_name("dbt")
    root = str(project_root)
    return subprocess.Popen(
        [str(dbt), "run", "--project-dir", root, "--profiles-dir", root],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def delta_spark_session(warehouse: Path) -> Any:
    """A local SparkSession with delta-spark, or None when the jars are not configured."""
    jars_dir = os.environ.get(JARS_VARIABLE)
    packages = os.environ.get(PACKAGES_VARIABLE)
    if not jars_dir and not packages:
        return None
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("tablestream-engines")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
    )
    if jars_dir:
        jars = sorted(str(path) for path in Path(jars_dir).glob("*.jar"))
        assert jars, f"{JARS_VARIABLE}={jars_dir} holds no .jar files"
        builder = builder.config("spark.jars", ",".join(jars))
    else:
        builder = builder.config("spark.jars.packages", packages)
    spark = builder.getOrCreate()
    probe = warehouse / "delta_probe"
    shutil.rmtree(probe, ignore_errors=True)
    spark.sql(f"create table delta.`{probe}` (id int) using delta")  # fails loudly if Delta did not load
    return spark

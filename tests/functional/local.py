"""The local delta-spark session the functional tests share, and dbt in a process of its own.

One SparkSession (the `tablestream` adapter's own, started once per pytest process) serves every
in-process dbt invocation. Its Hive metastore is embedded Derby, which one process opens at a
time, so a dbt run that must be killed (a SIGKILL at a protocol step) is a subprocess on the test's
warehouse with a metastore of its own (StreamBench.crash).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_SHARED: dict[str, Any] = {}

# Every test JVM collects garbage with the throughput collector: on two busy cores G1's concurrent
# work competes with the statements (CONTRIBUTING.md, "Settings the tests' sessions use").
THROUGHPUT_GC = "-XX:+UseParallelGC"
# A dbt process of a test (a crash, a second client) lives for a minute, most of it in code run for
# the first time: with the C1 JIT only its JVM started and ran its first Delta statements about 7 s
# sooner here. The shared session lives for the whole run, where C2's faster code pays for itself.
# C1 alone gets a 48 MB code cache, which three models running at once filled ("Out of space in
# CodeCache"): it gets the tiered JIT's 240 MB.
SHORT_LIVED_JVM = {
    "spark.driver.extraJavaOptions": f"{THROUGHPUT_GC} -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
}
# Its class archive is off: pytest-xdist ends its workers during the dump their session would
# write at exit (a cut 185 MB file each), so the archive only cost the suite that dump's work.
# The dbt processes of the tests (SHORT_LIVED_JVM) map it; tests/functional/test_install.py
# tests the archive itself.
LONG_LIVED_JVM = {"spark.driver.extraJavaOptions": THROUGHPUT_GC, "spark.tablestream.classArchive": "false"}


def shared_warehouse() -> Path:
    if "warehouse" not in _SHARED:
        import tempfile

        _SHARED["warehouse"] = Path(tempfile.mkdtemp(prefix="tablestream-warehouse-"))
    return _SHARED["warehouse"]


def shared_spark() -> Any:
    """The adapter's root session, started on first use with the profile's defaults."""
    if "spark" not in _SHARED:
        from dbt.adapters.tablestream._session import LocalSpark

        _SHARED["spark"] = LocalSpark.root(shared_warehouse(), LONG_LIVED_JVM)
    return _SHARED["spark"]


def local_profile(warehouse: Path | None = None, **extra: Any) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "type": "tablestream",
        "schema": "analytics",
        "warehouse": str(warehouse or shared_warehouse()),
        "threads": 1,
        "server_side_parameters": dict(SHORT_LIVED_JVM),
    }
    profile["server_side_parameters"].update(extra.pop("server_side_parameters", {}))
    profile.update(extra)
    return profile


def sql_path(path: Path) -> str:
    return str(path.resolve()).replace("'", "\\'")


def relocate_schemas(warehouse: Path, schemas: tuple[str, ...] = ("app", "analytics")) -> None:
    """Point the shared catalog's schemas at this test's warehouse folder, forgetting the last test's."""
    spark = shared_spark()
    for schema in schemas:
        location = warehouse / f"{schema}.db"
        location.mkdir(parents=True, exist_ok=True)
        spark.sql(f"drop schema if exists {schema} cascade")
        spark.sql(f"create schema {schema} location '{sql_path(location)}'")


def register_tables(warehouse: Path, schema: str = "app") -> None:
    """Register the Delta tables written by path (delta-rs) under `<schema>.db`, and forget
    registered tables whose folder is gone: the catalog then says what the files say."""
    spark = shared_spark()
    folder = warehouse / f"{schema}.db"
    registered = {row.tableName for row in spark.sql(f"show tables in {schema}").collect() if not row.isTemporary}
    present = set(delta_tables(warehouse, schema))
    for name in sorted(registered - present):
        spark.sql(f"drop table if exists {schema}.`{name}`")
    for name in sorted(present - registered):
        spark.sql(f"create table {schema}.`{name}` using delta location '{sql_path(folder / name)}'")


def delta_tables(warehouse: Path, schema: str = "app") -> tuple[str, ...]:
    """The Delta tables in the warehouse's `<schema>.db` folder, by folder name."""
    folder = warehouse / f"{schema}.db"
    if not folder.is_dir():
        return ()
    return tuple(sorted(entry.name for entry in folder.iterdir() if (entry / "_delta_log").is_dir()))


def register_tables_hook(warehouse: Path, tables: tuple[str, ...], schema: str = "app") -> list[str]:
    """The same registration as `on-run-start` statements, for dbt runs in a process of their own."""
    folder = warehouse / f"{schema}.db"
    statements = [f"create schema if not exists {schema} location '{sql_path(folder)}'"]
    statements += [
        f"create table if not exists {schema}.`{name}` using delta location '{sql_path(folder / name)}'"
        for name in tables
    ]
    return statements


def python_without_java(code: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    """`python -c code` where no JVM can start: no JAVA_HOME and an empty PATH (the interpreter
    runs by its full path), so a command that reached for Spark, Java or another program fails
    instead of only taking longer."""
    env = {key: value for key, value in os.environ.items() if key not in ("JAVA_HOME", "PATH")}
    env["PATH"] = ""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


def dbt_process(project_root: Path, env_extra: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """`dbt run` (or `args`) in a process of its own, without this process's test hooks."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DBT_TABLESTREAM_")}
    env.update(env_extra)
    dbt = Path(sys.executable).with_name("dbt")
    root = str(project_root)
    return subprocess.Popen(
        [str(dbt), *(args or ("run",)), "--project-dir", root, "--profiles-dir", root],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def release_pause(directory: Path, model: str) -> None:
    """Ends the pause of `model` in every dbt process whose DBT_TABLESTREAM_RELEASE is `directory`
    (macros/streams/fault_points.sql)."""
    (directory / model).write_text(model + "\n")

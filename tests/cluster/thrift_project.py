"""A dbt project on the local cluster's Thrift profile, its source tables, and dbt as a process of
its own (for tests that run two at once or kill one), for the Thrift tests."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from tests.cluster.local_cluster import LocalCluster
from tests.functional.dbt_project_helper import DbtProject
from tests.functional.local import dbt_process
from tests.functional.streams import sources_yml


def project(
    tmp_path: Path,
    cluster: LocalCluster,
    schema: str,
    models: dict[str, str],
    *,
    sources: tuple[str, ...] = ("t",),
    threads: int = 1,
) -> DbtProject:
    """Models in schema `schema`, reading the sources in `<schema>_app`."""
    listed = sources_yml(*sources).replace("- name: app", f"- name: app\n    schema: {schema}_app")
    files = {"sources.yml": listed, **{f"{name}.sql": sql for name, sql in models.items()}}
    profile = cluster.profile(schema=schema, threads=threads)
    return DbtProject(tmp_path / "project", cluster.warehouse, models=files, profile=profile)


def source_with_rows(cluster: LocalCluster, rows: str, tables: tuple[str, ...] = ("t",)) -> str:
    """A fresh schema `<s>_app` holding the sources `tables` (id int, name string) with the change
    feed on, each given `rows` (a VALUES list) in one commit; returns `<s>`, the targets' schema."""
    schema = f"t{uuid.uuid4().hex[:8]}"
    cluster.sql(f"create schema {schema}_app")
    for table in tables:
        cluster.sql(
            f"create table {schema}_app.{table} (id int, name string) using delta "
            "tblproperties ('delta.enableChangeDataFeed' = 'true')"
        )
        cluster.sql(f"insert into {schema}_app.{table} values {rows}")
    return schema


def start_dbt(dbt: DbtProject, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`dbt run` (or `args`) on the Thrift profile, in a process of its own; its output on stdout."""
    dbt.install_packages()
    return dbt_process(dbt.root, env or {}, *(args or ("run",)))


def wait_for_line(process: subprocess.Popen[str], fragment: str) -> list[str]:
    """Reads the process's output up to the first line holding `fragment`; the lines read."""
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line)
        if fragment in line:
            return lines
    process.wait()
    raise AssertionError(f"dbt ended (exit {process.returncode}) without logging {fragment!r}:\n" + "".join(lines))

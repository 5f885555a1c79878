"""Stream scenarios on the Thrift profile: stock dbt-spark `method: thrift` against the local
cluster, where each connection is a Spark session of its own on the server.

The subset run here: a table_stream that starts at `latest` and appends each window, and a
stream_merge that mirrors a keyed source through inserts, updates and deletes.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.cluster.local_cluster import LocalCluster
from tests.functional.dbt_project_helper import DbtProject
from tests.functional.streams import sources_yml


def project(tmp_path: Path, cluster: LocalCluster, schema: str, models: dict[str, str]) -> DbtProject:
    files = {"sources.yml": sources_yml("t").replace("- name: app", f"- name: app\n    schema: {schema}_app"), **models}
    files = {name if name.endswith(".yml") else f"{name}.sql": sql for name, sql in files.items()}
    return DbtProject(tmp_path / "project", cluster.warehouse, models=files, profile=cluster.profile(schema=schema))


def source_with_rows(cluster: LocalCluster, rows: str) -> str:
    """A fresh schema `<s>_app` holding the source `t` (id, name) with the change feed on and `rows`
    (a VALUES list) in one commit; returns `<s>`, the schema of the project's targets."""
    schema = f"t{uuid.uuid4().hex[:8]}"
    cluster.sql(f"create schema {schema}_app")
    cluster.sql(
        f"create table {schema}_app.t (id int, name string) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    cluster.sql(f"insert into {schema}_app.t values {rows}")
    return schema


def test_table_stream_appends_each_window_once(tmp_path: Path, thrift_cluster: LocalCluster) -> None:
    schema = source_with_rows(thrift_cluster, "(1, 'a'), (2, 'b')")
    log = (
        "{{ config(materialized='table_stream', start_at='latest') }}\n"
        "select id, name, __change_type from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    dbt = project(tmp_path, thrift_cluster, schema, {"log": log})
    dbt.run_ok("run")
    assert thrift_cluster.sql(f"select count(*) from {schema}.log") == [(0,)]

    thrift_cluster.sql(f"insert into {schema}_app.t values (3, 'c')")
    thrift_cluster.sql(f"update {schema}_app.t set name = 'B' where id = 2")
    dbt.run_ok("run")
    dbt.run_ok("run")  # an empty window: nothing appended twice
    rows = sorted(thrift_cluster.sql(f"select id, name, __change_type from {schema}.log"))
    assert rows == [(2, "B", "UPDATE_AFTER"), (2, "b", "UPDATE_BEFORE"), (3, "c", "INSERT")]
    offsets = thrift_cluster.sql(
        f"select from_version, to_version from {schema}.tablestream_offsets order by to_version"
    )
    assert [offset[1] for offset in offsets][-1] == 3


def test_stream_merge_mirrors_a_keyed_source(tmp_path: Path, thrift_cluster: LocalCluster) -> None:
    schema = source_with_rows(thrift_cluster, "(1, 'a'), (2, 'b'), (3, 'c')")
    current = (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        "select id, name, __change_type, __commit_version from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    dbt = project(tmp_path, thrift_cluster, schema, {"current": current})
    dbt.run_ok("run")
    for statement in (
        f"insert into {schema}_app.t values (4, 'd')",
        f"update {schema}_app.t set name = 'A' where id = 1",
        f"delete from {schema}_app.t where id = 2",
    ):
        thrift_cluster.sql(statement)
        dbt.run_ok("run")
        assert sorted(thrift_cluster.sql(f"select id, name from {schema}.current")) == sorted(
            thrift_cluster.sql(f"select id, name from {schema}_app.t")
        )

"""Bad input gets a clear error that says what to do, and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from tests.functional.dbt_project_helper import DbtProject
from tests.functional.local import local_profile, register_tables, relocate_schemas

MODEL = {"m.sql": "{{ config(materialized='table') }} select 1 as id"}


def error_text(result) -> str:
    if result.exception is not None:
        return str(result.exception)
    return "\n".join(str(r.message) for r in result.result or [])


def test_unknown_profile_key_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    project = DbtProject(tmp_path / "p", warehouse, models=MODEL, profile_extra={"warehose": "./typo"})
    result = project.invoke("run")
    assert not result.success
    message = error_text(result)
    assert "Unknown key(s) in the tablestream profile: warehose" in message
    assert "Accepted keys:" in message and "warehouse" in message
    assert not warehouse.exists()


@pytest.mark.parametrize("layout", ["file", "under_file"])
def test_warehouse_that_is_not_a_writable_directory(tmp_path: Path, layout: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    warehouse = blocker if layout == "file" else blocker / "warehouse"
    # The warehouse matters when dbt starts the Spark session: a process of its own.
    project = DbtProject(tmp_path / "p", warehouse, models=MODEL, profile=local_profile(warehouse))
    completed = run_dbt_subprocess(project, dict(os.environ))
    assert completed.returncode != 0
    message = completed.stdout + completed.stderr
    assert str(warehouse) in message
    assert "Point the profile's `warehouse` at a directory you can write" in message
    assert blocker.read_text() == "not a directory"


def run_dbt_subprocess(project: DbtProject, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    project.install_packages()
    dbt = Path(sys.executable).with_name("dbt")
    return subprocess.run(
        [str(dbt), "run", "--project-dir", str(project.root), "--profiles-dir", str(project.root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_java_missing(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    project = DbtProject(tmp_path / "p", warehouse, models=MODEL, profile=local_profile(warehouse))
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv's bin only: no java there
    completed = run_dbt_subprocess(project, env)
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0
    assert "no `java` was found on PATH" in output
    assert "Java runtime 17 or newer" in output
    assert not (warehouse / "analytics.db").exists()


def test_java_too_old(tmp_path: Path) -> None:
    fake_home = tmp_path / "jdk11"
    (fake_home / "bin").mkdir(parents=True)
    java = fake_home / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.20\" 2023-07-18' >&2\n")
    java.chmod(0o755)
    warehouse = tmp_path / "warehouse"
    project = DbtProject(tmp_path / "p", warehouse, models=MODEL, profile=local_profile(warehouse))
    env = dict(os.environ, JAVA_HOME=str(fake_home))
    completed = run_dbt_subprocess(project, env)
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0
    assert "needs Java 17 or newer" in output and "is Java 11" in output
    assert not (warehouse / "analytics.db").exists()


def plain_orders(path: Path, *, change_feed: bool) -> None:
    config = {"delta.enableChangeDataFeed": "true"} if change_feed else None
    write_deltalake(str(path), pa.table({"id": pa.array([1, 2], pa.int64())}), configuration=config)


def test_file_format_other_than_delta_lists_accepted_values(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    relocate_schemas(warehouse)
    plain_orders(warehouse / "app.db" / "orders", change_feed=True)
    register_tables(warehouse)
    project = DbtProject(
        tmp_path / "p",
        warehouse,
        models={
            "sources.yml": "version: 2\nsources:\n  - name: app\n    tables:\n      - name: orders\n",
            "m.sql": "{{ config(materialized='table_stream', file_format='parquet') }}\n"
            "select * from {{ dbt_tablestream.source_stream('app', 'orders') }}",
        },
    )
    result = project.invoke("run")
    assert not result.success
    message = error_text(result)
    assert "file_format 'parquet'" in message and "Accepted values: delta" in message
    assert not (warehouse / "analytics.db" / "m").exists()


def test_enable_change_tracking_then_table_changes_reads_new_changes(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    source = warehouse / "app.db" / "orders"
    relocate_schemas(warehouse)
    plain_orders(source, change_feed=False)
    register_tables(warehouse)
    project = DbtProject(tmp_path / "p", warehouse)
    project.run_ok("run-operation", "dbt_tablestream.enable_change_tracking", "--args", "{relation: app.orders}")
    table = DeltaTable(str(source))
    assert table.metadata().configuration["delta.enableChangeDataFeed"] == "true"
    enabled_at = table.version()
    write_deltalake(str(source), pa.table({"id": pa.array([3], pa.int64())}), mode="append")
    result = project.run_ok(
        "show", "--inline", f"select id, _change_type from table_changes('app.orders', {enabled_at + 1})"
    )
    rows = [tuple(row) for row in result.result.results[0].agate_table.rows]
    assert rows == [(3, "insert")]
    # Enabling again is a no-op: no new commit.
    project.run_ok("run-operation", "dbt_tablestream.enable_change_tracking", "--args", "{relation: app.orders}")
    assert DeltaTable(str(source)).version() == enabled_at + 1


def test_the_test_hooks_do_nothing_unless_the_project_arms_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DBT_TABLESTREAM_FAULT and DBT_TABLESTREAM_PAUSE in the environment of a project that does
    not set `tablestream_test_hooks` change nothing: the run neither pauses nor dies, and the
    adapter refuses to kill its process when asked directly."""
    from tests.functional.streams import StreamBench, stream_model

    bench = StreamBench(tmp_path, {"log": stream_model()}, project_vars={"tablestream_test_hooks": False})
    (bench.project.root / "macros").mkdir(exist_ok=True)
    (bench.project.root / "macros" / "kill_now.sql").write_text(KILL_NOW)
    bench.create_source([(1, "a", 1)])
    monkeypatch.setenv("DBT_TABLESTREAM_PAUSE", "window_pinned:0.01")
    monkeypatch.setenv("DBT_TABLESTREAM_FAULT", "before_target_commit")
    capsys.readouterr()
    bench.run()
    assert "tablestream test pause" not in capsys.readouterr().out
    assert bench.target_rows("log")
    killed = bench.invoke("run-operation", "kill_now")
    assert not killed.success
    assert "the test hooks are not armed in this project" in capsys.readouterr().out


KILL_NOW = "{% macro kill_now() %}{% do adapter.kill_for_test_fault('before_target_commit') %}{% endmacro %}\n"

"""The `tablestream` command on the local profile: status and history from the Delta logs, no JVM."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbt_tablestream.cli import main as tablestream
from tests.functional.local import relocate_schemas
from tests.functional.streams import StreamBench, stream_model

STREAM = "log__app_t"


def established(tmp_path: Path) -> StreamBench:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")})
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    return bench


def test_status_and_history_json_and_lag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = established(tmp_path)
    root = str(bench.project.root)
    capsys.readouterr()
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["stream"] == STREAM and entry["lag_versions"] == 0 and entry["offset_version"] == 0

    bench.append([(3, "c", 3)])
    bench.append([(4, "d", 4)])
    capsys.readouterr()
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["lag_versions"] == 2 and entry["source_version"] == bench.source().version()
    assert entry["lag_seconds"] is not None and entry["lag_seconds"] >= 0

    bench.run()
    capsys.readouterr()
    assert tablestream(["history", STREAM, "--project-dir", root, "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [(row["from_version"], row["to_version"]) for row in history] == [(0, 0), (0, 2)]
    assert tablestream(["history", "nope", "--project-dir", root]) == 1


def test_status_reads_delta_directly_without_spark(tmp_path: Path) -> None:
    bench = established(tmp_path)
    probe = (
        "import sys, time; from dbt_tablestream.cli import main; started = time.monotonic(); "
        f"code = main(['status', '--project-dir', {str(bench.project.root)!r}]); "
        "print('elapsed', time.monotonic() - started); "
        "assert code == 0 and 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)"
    )
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    assert completed.returncode == 0, completed.stderr
    assert STREAM in completed.stdout and "lag" in completed.stdout
    # Interpreter start and imports included; Spark alone takes longer than this to start.
    assert elapsed < 5, elapsed


def test_json_is_alone_on_stdout_on_a_stock_session_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On stock dbt-spark (`method: session`) the command asks dbt; with --json, stdout holds the
    JSON alone: dbt's own log lines do not reach it. So does `pending`'s list."""
    profile = {"type": "spark", "method": "session", "host": "localhost", "schema": "analytics", "threads": 1}
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}, profile=profile)
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.append([(2, "b", 2)])
    bench.append([(3, "c", 3)])
    root = str(bench.project.root)
    capsys.readouterr()
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["stream_name"] == STREAM and entry["lag_versions"] == 2 and entry["stale"] is False
    assert tablestream(["history", STREAM, "--project-dir", root, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["from_version"], row["to_version"], row["mode"]) == (0, 0, "standard")
    # pending asks the run-operation on such a profile: its selectors alone on stdout, and the exit code.
    assert tablestream(["pending", "--project-dir", root, "--exit-code"]) == 0
    assert capsys.readouterr().out.split() == ["log+"]


def test_streams_by_model_in_every_schema_describe_drop_and_a_dry_run_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stream model in a custom schema (its own offsets log) is found without --schema; a model
    names its stream; describe, drop and reset --dry-run run dbt's operations."""
    side = "{{ config(materialized='table_stream', schema='side', start_at='latest') }}\n" + (
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'"), "side": side})
    relocate_schemas(bench.warehouse, ("analytics_side",))
    bench.create_source([(1, "a", 1)])
    bench.run()
    root = str(bench.project.root)
    capsys.readouterr()
    assert tablestream(["status", "--project-dir", root, "--output", "json"]) == 0
    assert sorted(entry["stream"] for entry in json.loads(capsys.readouterr().out)) == [STREAM, "side__app_t"]
    assert tablestream(["history", "side", "--project-dir", root, "--json"]) == 0, "a model names its stream"
    assert [row["stream_name"] for row in json.loads(capsys.readouterr().out)] == ["side__app_t"]

    logged = bench.offsets()
    assert tablestream(["reset", "log", "--project-dir", root, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"Stream {STREAM} would be reset (dry run: nothing written)" in out, out
    assert bench.offsets() == logged, "a dry run writes nothing"
    assert tablestream(["describe", "side", "--project-dir", root]) == 0
    out = capsys.readouterr().out
    assert "side__app_t (epoch 0" in out and "analytics_side.side" in out, out
    assert tablestream(["drop", "side", "--project-dir", root]) == 0
    assert "Stream side__app_t dropped; analytics_side.side is kept." in capsys.readouterr().out
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    assert [entry["stream"] for entry in json.loads(capsys.readouterr().out)] == [STREAM]
    assert tablestream(["reset", "log", "--project-dir", root]) == 0
    assert [row["mode"] for row in bench.offsets() if row["stream_name"] == STREAM][-1] == "reset"

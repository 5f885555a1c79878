"""The `tablestream` command: status and history from the Delta logs without a JVM on the local
profile, the same documents through dbt's run-operation, JSON on every subcommand (errors
included) and its exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbt_tablestream.cli import main as tablestream
from tests.functional.local import python_without_java, relocate_schemas
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
    assert entry["stream_name"] == STREAM and entry["lag_versions"] == 0 and entry["to_version"] == 0

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
    assert [(row["from_version"], row["to_version"]) for row in history] == [(0, 2), (0, 0)], "newest first"
    assert tablestream(["history", "nope", "--project-dir", root]) == 1


def test_status_reads_delta_directly_without_spark(tmp_path: Path) -> None:
    """In a process where no JVM can start (tests/functional/local.py), and without importing pyspark."""
    bench = established(tmp_path)
    probe = (
        "import sys; from dbt_tablestream.cli import main; "
        f"code = main(['status', '--project-dir', {str(bench.project.root)!r}]); "
        "assert code == 0 and 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)"
    )
    completed = python_without_java(probe)
    assert completed.returncode == 0, completed.stderr
    assert STREAM in completed.stdout and "lag" in completed.stdout


def test_json_is_alone_on_stdout_on_a_stock_session_profile(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """On stock dbt-spark (`method: session`) the command asks dbt; with --json, stdout holds the
    one JSON document alone, errors too: dbt's own log lines (and the JVM's) do not reach it. So
    does `pending`'s list."""
    profile = {"type": "spark", "method": "session", "host": "localhost", "schema": "analytics", "threads": 1}
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}, profile=profile)
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.append([(2, "b", 2)])
    bench.append([(3, "c", 3)])
    root = str(bench.project.root)
    capfd.readouterr()
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    (entry,) = json.loads(capfd.readouterr().out)
    assert entry["stream_name"] == STREAM and entry["lag_versions"] == 2 and entry["stale"] is False
    assert tablestream(["history", STREAM, "--project-dir", root, "--json"]) == 0
    (row,) = json.loads(capfd.readouterr().out)
    assert (row["from_version"], row["to_version"], row["mode"]) == (0, 0, "standard")
    # No such stream: exit 1 on this path too, its error the one document.
    for command in (["history", "nope"], ["describe", "nope"], ["drop", "nope", "--dry-run"], ["reset", "nope"]):
        assert tablestream([*command, "--project-dir", root, "--json"]) == 1, command
        captured = capfd.readouterr()
        error = json.loads(captured.out)
        assert error["exit_code"] == 1 and error["error"].startswith("No stream or stream model nope in "), error
        assert "Compilation Error" not in error["error"] and "Compilation Error" in captured.err
    # Another error exits 2; in text mode dbt's log says it on stdout as before, and the command on stderr.
    assert tablestream(["vacuum", "app.missing", "--project-dir", root, "--json"]) == 2
    error = json.loads(capfd.readouterr().out)
    assert error == {"error": error["error"], "exit_code": 2} and "no table app.missing" in error["error"], error
    assert tablestream(["reset", STREAM, "--to-version", "99", "--project-dir", root]) == 2
    assert "to_version must be a version of app.t from 0 to 2, got 99" in capfd.readouterr().err
    # pending asks the run-operation on such a profile: its selectors alone on stdout, and the exit code.
    assert tablestream(["pending", "--project-dir", root, "--exit-code"]) == 0
    assert capfd.readouterr().out.split() == ["log+"]
    assert tablestream(["pending", "--project-dir", root, "--exit-code", "--json"]) == 0
    (pending,) = json.loads(capfd.readouterr().out)
    assert (pending["selector"], pending["offset_version"], pending["source_version"]) == ("log+", 0, 2)


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
    assert sorted(entry["stream_name"] for entry in json.loads(capsys.readouterr().out)) == [STREAM, "side__app_t"]
    assert tablestream(["history", "side", "--project-dir", root, "--json"]) == 0, "a model names its stream"
    assert [row["stream_name"] for row in json.loads(capsys.readouterr().out)] == ["side__app_t"]

    logged = bench.offsets()
    assert tablestream(["reset", "log", "--project-dir", root, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"Stream {STREAM} would be reset (dry run: nothing written)" in out, out
    assert tablestream(["reset", "log", "--project-dir", root, "--dry-run", "--json"]) == 0
    (move,) = json.loads(capsys.readouterr().out)
    assert (move["stream_name"], move["epoch"], move["from_version"], move["to_version"], move["dry_run"]) == (
        STREAM,
        1,
        0,
        None,
        True,
    )
    assert bench.offsets() == logged, "a dry run writes nothing"
    assert tablestream(["describe", "side", "--project-dir", root]) == 0
    out = capsys.readouterr().out
    assert "side__app_t (epoch 0" in out and "analytics_side.side" in out, out
    assert tablestream(["describe", "side", "--project-dir", root, "--json"]) == 0
    (described,) = json.loads(capsys.readouterr().out)
    assert (described["stream_name"], described["target"], described["stale"]) == (
        "side__app_t",
        "analytics_side.side",
        False,
    )
    assert [(run["mode"], run["to_version"]) for run in described["history"]] == [("standard", 0)]

    # drop --dry-run says what it would drop and writes nothing; drop drops.
    assert tablestream(["drop", "side", "--project-dir", root, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Stream side__app_t would be dropped (dry run: nothing written); analytics_side.side would be kept." in out
    assert tablestream(["drop", "side", "--project-dir", root, "--dry-run", "--json"]) == 0
    (would,) = json.loads(capsys.readouterr().out)
    assert (would["stream_name"], would["dropped"], would["dry_run"]) == ("side__app_t", False, True)
    assert bench.offsets() == logged, "a dry run writes nothing"
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    assert sorted(entry["stream_name"] for entry in json.loads(capsys.readouterr().out)) == [STREAM, "side__app_t"]
    assert tablestream(["drop", "side", "--project-dir", root, "--json"]) == 0
    (dropped,) = json.loads(capsys.readouterr().out)
    assert (dropped["stream_name"], dropped["dropped"], dropped["epoch"]) == ("side__app_t", True, 1)
    assert dropped["message"] == "Stream side__app_t dropped; analytics_side.side is kept."
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    assert [entry["stream_name"] for entry in json.loads(capsys.readouterr().out)] == [STREAM]
    assert tablestream(["reset", "log", "--project-dir", root]) == 0
    assert [row["mode"] for row in bench.offsets() if row["stream_name"] == STREAM][-1] == "reset"


def printed_by(bench: StreamBench, macro: str, macro_args: dict[str, Any]) -> list[str]:
    """What `dbt run-operation dbt_tablestream.<macro>` prints (dbt's PrintEvent), in order."""
    printed: list[str] = []

    def collect(event: Any) -> None:
        if event.info.name == "PrintEvent":
            printed.append(event.data.msg)

    result = bench.invoke(
        "run-operation", f"dbt_tablestream.{macro}", "--args", json.dumps(macro_args), callbacks=[collect]
    )
    assert result.success, result.exception
    return printed


# What only Spark's check of the next window says: None on the delta-rs path ("not checked").
CHECKED_ONLY = ("stale", "refusal", "at_risk_from", "at_risk_in_seconds")


def test_status_and_history_are_one_document_on_both_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The delta-rs path (local `status`, `history`) and dbt's run-operation (`status --check`,
    `stream_history`) report the same keys in the same order, of the same types, with the same
    values, for a stream behind its source, one caught up and one reset."""
    models = {"log": stream_model("start_at='latest'"), "merged": stream_model(), "again": stream_model()}
    bench = StreamBench(tmp_path, models)
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.append([(3, "c", 3)])
    bench.run("-s", "merged", "again")
    bench.append([(4, "d", 4)])
    root = str(bench.project.root)
    capsys.readouterr()
    assert tablestream(["reset", "again", "--project-dir", root]) == 0
    capsys.readouterr()

    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert tablestream(["status", "--check", "--project-dir", root, "--json"]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert [entry["stream_name"] for entry in fast] == ["again__app_t", "log__app_t", "merged__app_t"]
    assert [entry["stream_name"] for entry in checked] == [entry["stream_name"] for entry in fast]
    by_name = {entry["stream_name"]: entry for entry in fast}
    assert (by_name["log__app_t"]["lag_versions"], by_name["merged__app_t"]["lag_versions"]) == (2, 1)
    assert by_name["again__app_t"]["to_version"] is None and by_name["again__app_t"]["mode"] == "reset"
    for quick, slow in zip(fast, checked, strict=True):
        assert list(quick) == list(slow), "the same keys in the same order"
        assert {key: quick[key] for key in CHECKED_ONLY} == dict.fromkeys(CHECKED_ONLY)
        assert slow["stale"] is False
        differing = {
            key: (quick[key], slow[key]) for key in quick if key not in CHECKED_ONLY and quick[key] != slow[key]
        }
        assert differing == {}, (quick["stream_name"], differing)

    for name in ("log", "again__app_t"):
        capsys.readouterr()
        assert tablestream(["history", name, "--project-dir", root, "--json"]) == 0
        local = json.loads(capsys.readouterr().out)
        printed = printed_by(bench, "stream_history", {"stream_name": name, "format": "json"})
        assert local == json.loads(printed[-1]), name
        assert [row["mode"] for row in local] == (
            ["standard"] if name == "log" else ["reset", "standard", "standard"]
        ), local

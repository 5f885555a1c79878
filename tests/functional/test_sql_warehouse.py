"""Streams where the session may not SET Delta's settings, as on a Databricks SQL warehouse: the
local profile's `emulate_sql_warehouse` refuses every SET a warehouse refuses and logs each
statement, and the package then runs the reapply protocol (docs/architecture.md, "Exactly once
without session settings").

- What the protocol cannot apply exactly once is refused before anything is written, and so is the
  marked protocol when a project forces it there (the emulation refuses its settings).
- Two runs that pinned one window both write it: the targets hold it once and the offsets log
  names it once; also when one run applies and logs a window another run committed but has not
  logged yet.

The property tests on the emulated warehouse are in test_stream_properties.py, test_cdc_events.py
and test_history.py; the kill at every step in test_kills.py.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from dbt.adapters.tablestream.connections import STATEMENT_LOG, refused_setting
from tests.functional.local import dbt_process, delta_tables, local_profile, register_tables_hook, release_pause
from tests.functional.streams import StreamBench, assert_no_refused_setting, stream_model

MIRROR = (
    "{{ config(materialized='stream_merge', unique_key='id') }}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
)
LOG = stream_model(columns="id, name, age, __change_type, __commit_version")


def warehouse_bench(tmp_path: Path, models: dict[str, str], **options: object) -> StreamBench:
    profile = local_profile(tmp_path / "warehouse", emulate_sql_warehouse=True)
    return StreamBench(tmp_path, models, profile=profile, **options)  # type: ignore[arg-type]


def test_what_cannot_be_applied_exactly_once_without_settings_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    bench = warehouse_bench(
        tmp_path,
        {
            "bound": MIRROR.replace("unique_key='id'", "unique_key='id', max_rows_per_file=1000"),
            "netted": stream_model("unique_key='id'"),
            "versionless": stream_model(columns="id, name, __change_type"),
            "changelog": MIRROR.replace("unique_key='id'", "unique_key='id', stream_read='changelog'"),
            "log": LOG,
        },
    )
    bench.create_source([(1, "a", 1)])
    # The refusals say which protocol runs and why it was chosen (_stream_commit_protocol's reason).
    reapply = "commit protocol reapply: the local profile's emulate_sql_warehouse refuses session settings"
    bench.refused("bound", "Model bound", reapply, "max_rows_per_file", "delta.targetFileSize", "Nothing was written")
    bench.refused("netted", "Model netted", reapply, "net_changes: false", "Nothing was written")
    bench.refused("versionless", "Model versionless", "lacks __commit_version", "Nothing was written")
    bench.refused("changelog", "stream_read: changelog", reapply, "stream_read: table_changes", "Nothing was written")
    # The marked protocol forced where settings are refused: the emulation refuses its first SET.
    bench.refused(
        "log",
        "[CONFIG_NOT_AVAILABLE]",
        "spark.databricks.delta.write.txnAppId",
        args=("--vars", "{tablestream_commit_protocol: marked}"),
    )
    bench.refused(
        "log",
        "invalid tablestream_commit_protocol 'sometimes' (a project var; nothing was written)",
        "Accepted values: auto",
        args=("--vars", "{tablestream_commit_protocol: sometimes}"),
    )
    bench.run_ok("run", "-s", "log")
    # The one refused statement sent: the forced marked protocol's first.
    statements = (tmp_path / "warehouse" / STATEMENT_LOG).read_text().split("\n;\n")
    refused = [refused_setting(sql) for sql in statements if refused_setting(sql)]
    assert refused == ["spark.databricks.delta.write.txnAppId"], refused


def two_warehouses(tmp_path: Path) -> tuple[StreamBench, int]:
    """A mirror and a log of one source, run once; then changes to apply. A second profile target
    reads the same tables through a metastore of its own, so two dbt processes can run at once.
    Returns the bench and the source's latest version."""
    bench = warehouse_bench(tmp_path, {"current": MIRROR, "log": LOG}, processes=True)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    bench.append([(4, "d", 4)])
    bench.source().update(updates={"name": "'B'"}, predicate="id = 2")
    bench.source().delete("id = 3")
    second = local_profile(tmp_path / "second_warehouse", emulate_sql_warehouse=True)
    profiles = yaml.safe_load((bench.project.root / "profiles.yml").read_text())
    profiles["probe"]["outputs"]["second"] = second
    (bench.project.root / "profiles.yml").write_text(yaml.safe_dump(profiles))
    hooks = [
        statement
        for schema in ("app", "analytics")
        for statement in register_tables_hook(bench.warehouse, delta_tables(bench.warehouse, schema), schema)
    ]
    bench.project.set_on_run_start(hooks)
    bench.project.install_packages()
    return bench, bench.source().version()


def read_until_paused(run: subprocess.Popen[str], lines: list[str]) -> str:
    """Reads the run's output into `lines` until it pauses at a fault point; returns the model."""
    assert run.stdout is not None
    for line in run.stdout:
        lines.append(line)
        paused = re.search(r"tablestream test pause at \w+ in (\w+)", line)
        if paused:
            return paused.group(1)
    raise AssertionError("the run ended without pausing:\n" + "".join(lines))


def assert_applied_and_logged_once(bench: StreamBench, tmp_path: Path, latest: int, texts: list[str]) -> None:
    """The mirror equals the source, the log has every change once, and each stream's offsets log
    has each window once and ends at the source's latest version; no refused setting was sent."""
    bench.project.set_on_run_start([])
    rows = {row[0]: row[:3] for row in bench.target_rows("current")}
    assert Counter(rows.values()) == Counter([(1, "a", 1), (2, "B", 2), (4, "d", 4)]), texts
    log = Counter(row[:4] for row in bench.target_rows("log").elements())
    assert log == Counter(
        [
            *[(1, "a", 1, "INSERT"), (2, "b", 2, "INSERT"), (3, "c", 3, "INSERT"), (4, "d", 4, "INSERT")],
            *[(2, "b", 2, "UPDATE_BEFORE"), (2, "B", 2, "UPDATE_AFTER"), (3, "c", 3, "DELETE")],
        ]
    ), texts
    for stream in ("current__app_t", "log__app_t"):
        offsets = [row for row in bench.offsets() if row["stream_name"] == stream]
        assert offsets[-1]["to_version"] == latest, (stream, offsets)
        windows = [(row["from_version"], row["to_version"]) for row in offsets]
        assert len(windows) == len(set(windows)), f"{stream} logged a window twice: {windows}\n" + "\n".join(texts)
    for warehouse in (bench.warehouse, tmp_path / "second_warehouse"):
        assert_no_refused_setting(warehouse)


@pytest.mark.extended
def test_two_runs_that_pinned_one_window_on_a_sql_warehouse_apply_it_once(tmp_path: Path) -> None:
    """For each model in turn both runs hold at window_pinned until each has pinned the window,
    then both write it (each on its own metastore over the same tables): the targets hold every
    change once and the offsets log each window once, or a run is refused as consuming a stream
    another run consumes."""
    bench, latest = two_warehouses(tmp_path)
    released = tmp_path / "released"
    released.mkdir()
    barrier = {"DBT_TABLESTREAM_PAUSE": "window_pinned:300", "DBT_TABLESTREAM_RELEASE": str(released)}
    # dbt fills its relation cache before on-run-start registers the tables: without it, it asks.
    runs = [
        dbt_process(bench.project.root, barrier, "run", "--no-populate-cache"),
        dbt_process(bench.project.root, barrier, "run", "--no-populate-cache", "--target", "second"),
    ]
    outputs: list[list[str]] = [[], []]
    for _ in ("current", "log"):
        paused = {read_until_paused(run, lines) for run, lines in zip(runs, outputs, strict=True)}
        assert len(paused) == 1, f"the runs paused in different models: {paused}"
        release_pause(released, paused.pop())
    texts = ["".join(lines) + run.communicate(timeout=600)[0] for lines, run in zip(outputs, runs, strict=True)]
    for run, text in zip(runs, texts, strict=True):
        assert run.returncode == 0 or "being consumed by another run" in text, text
    assert_applied_and_logged_once(bench, tmp_path, latest, texts)


@pytest.mark.extended
def test_a_window_committed_but_not_yet_logged_by_one_run_and_applied_again_by_another_is_logged_once(
    tmp_path: Path,
) -> None:
    """The interleaving a race of two runs once showed, for a stream_merge and a table_stream in
    turn: run A commits the window and holds before its offsets row; run B finds the log unmoved,
    applies the window again (which changes nothing) and logs it; A's row then finds the window
    logged and is not appended."""
    bench, latest = two_warehouses(tmp_path)
    released = tmp_path / "released"
    released.mkdir()
    held = {"DBT_TABLESTREAM_PAUSE": "after_target_commit:300", "DBT_TABLESTREAM_RELEASE": str(released)}
    first = dbt_process(bench.project.root, held, "run", "--no-populate-cache")
    first_lines: list[str] = []
    texts = []
    for _ in ("current", "log"):
        model = read_until_paused(first, first_lines)
        second = dbt_process(bench.project.root, {}, "run", "--no-populate-cache", "--target", "second", "-s", model)
        texts.append(second.communicate(timeout=600)[0])
        assert second.returncode == 0, texts[-1]
        release_pause(released, model)
    texts.insert(0, "".join(first_lines) + first.communicate(timeout=600)[0])
    assert first.returncode == 0, texts[0]
    assert_applied_and_logged_once(bench, tmp_path, latest, texts)
    reapplied = "was applied and logged by a concurrent run while this run applied it again"
    assert texts[0].count(reapplied) == 2, texts[0]

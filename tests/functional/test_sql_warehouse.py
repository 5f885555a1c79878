"""Streams where the session may not SET Delta's settings, as on a Databricks SQL warehouse: the
local profile's `emulate_sql_warehouse` refuses every SET a warehouse refuses and logs each
statement, and the package then runs the reapply protocol (docs/architecture.md, "Exactly once
without session settings").

- What the protocol cannot apply exactly once is refused before anything is written, and so is the
  marked protocol when a project forces it there (the emulation refuses its settings).
- Two runs that pinned one window both write it: the targets hold it once (opt in, `-m soak`: the
  offsets log can still name it twice).

The property tests on the emulated warehouse are in test_stream_properties.py, test_cdc_events.py
and test_history.py; the kill at every step in test_kills.py.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from dbt.adapters.tablestream.connections import STATEMENT_LOG, refused_setting
from tests.functional.local import dbt_process, delta_tables, local_profile, register_tables_hook
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
    reapply = "commit protocol reapply"
    bench.refused("bound", "Model bound", reapply, "max_rows_per_file", "delta.targetFileSize", "Nothing was written")
    bench.refused("netted", "Model netted", reapply, "net_changes: false", "Nothing was written")
    bench.refused("versionless", "Model versionless", "lacks __commit_version", "Nothing was written")
    bench.refused("changelog", "stream_read: changelog", "stream_read: table_changes", "Nothing was written")
    # The marked protocol forced where settings are refused: the emulation refuses its first SET.
    bench.refused(
        "log",
        "[CONFIG_NOT_AVAILABLE]",
        "spark.databricks.delta.write.txnAppId",
        args=("--vars", "{tablestream_commit_protocol: marked}"),
    )
    bench.refused(
        "log",
        "tablestream_commit_protocol is 'sometimes'",
        "Accepted values: auto",
        args=("--vars", "{tablestream_commit_protocol: sometimes}"),
    )
    bench.run_ok("run", "-s", "log")
    # The one refused statement sent: the forced marked protocol's first.
    statements = (tmp_path / "warehouse" / STATEMENT_LOG).read_text().split("\n;\n")
    refused = [refused_setting(sql) for sql in statements if refused_setting(sql)]
    assert refused == ["spark.databricks.delta.write.txnAppId"], refused


# Opt in (`-m soak`) until the offsets log can refuse a second row for one window: when the second
# run's write follows the first's commit but precedes the first's offsets row, both log the window
# (the second wrote 0 rows; the targets are right). Seen on a fresh clone, 2026-11-27.
@pytest.mark.soak
def test_two_runs_that_pinned_one_window_on_a_sql_warehouse_apply_it_once(tmp_path: Path) -> None:
    """Both runs hold at window_pinned until each has pinned the window, then both write it (each
    on its own metastore over the same tables): the mirror equals the source, the log has every
    change once, and the offsets log has the window once and ends at the source's latest version."""
    bench = warehouse_bench(tmp_path, {"current": MIRROR, "log": LOG}, processes=True)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    bench.append([(4, "d", 4)])
    bench.source().update(updates={"name": "'B'"}, predicate="id = 2")
    bench.source().delete("id = 3")
    latest = bench.source().version()
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
    barrier = {"DBT_TABLESTREAM_PAUSE": "window_pinned:60"}
    # dbt fills its relation cache before on-run-start registers the tables: without it, it asks.
    runs = [
        dbt_process(bench.project.root, barrier, "run", "--no-populate-cache"),
        dbt_process(bench.project.root, barrier, "run", "--no-populate-cache", "--target", "second"),
    ]
    outputs: list[list[str]] = []
    for run in runs:
        assert run.stdout is not None
        lines = []
        for line in run.stdout:
            lines.append(line)
            if "tablestream test pause at window_pinned" in line:
                break
        outputs.append(lines)
        if len(outputs) == 1:
            first_paused = time.monotonic()
    assert time.monotonic() - first_paused < 55, "the runs did not meet at the barrier"
    texts = ["".join(lines) + run.communicate(timeout=600)[0] for lines, run in zip(outputs, runs, strict=True)]
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
    for run, text in zip(runs, texts, strict=True):
        assert run.returncode == 0 or "being consumed by another run" in text, text
    for warehouse in (bench.warehouse, tmp_path / "second_warehouse"):
        assert_no_refused_setting(warehouse)

"""Operating streams in production: `tablestream pending` for schedulers, a VACUUM that keeps what
live streams need, and the stale forecast as a warning in `dbt test`."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from dbt_tablestream.cli import main as tablestream
from tests.functional.local import local_profile, python_without_java, shared_spark
from tests.functional.streams import StreamBench, assert_no_refused_setting, stream_model

STALE_TESTS = """version: 2
models:
  - name: behind
    data_tests:
      - dbt_tablestream.stream_not_stale:
          name: behind_warns_within_two_days
          arguments: {warn_within: '2 days'}
      - dbt_tablestream.stream_not_stale:
          name: behind_within_an_hour
          arguments: {warn_within: 3600}
"""


def pending_in_a_fresh_process(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`tablestream pending` in a process where no JVM can start (tests/functional/local.py),
    which must not import pyspark."""
    probe = (
        "import sys; from dbt_tablestream.cli import main; "
        f"code = main(['pending', '--project-dir', {str(root)!r}, *{list(args)!r}]); "
        "assert 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m); sys.exit(code)"
    )
    return python_without_java(probe)


def printed_by(bench: StreamBench, *args: str) -> list[str]:
    """What a dbt command's macros print (dbt's PrintEvent), in order."""
    printed: list[str] = []

    def collect(event: Any) -> None:
        if event.info.name == "PrintEvent":
            printed.append(event.data.msg)

    result = bench.invoke(*args, callbacks=[collect])
    assert result.success, result.exception
    return printed


@pytest.mark.extended
def test_pending_lists_the_stream_behind_and_builds_it_with_its_downstream_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "behind": stream_model(),
            "caught_up": stream_model(source="u"),
            "downstream": "{{ config(materialized='table') }} select id, name from {{ ref('behind') }}",
            "unrelated": "{{ config(materialized='table') }} select 1 as id",
        },
        sources=("t", "u"),
    )
    (bench.project.root / "models" / "schema.yml").write_text(STALE_TESTS)
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.create_source([(1, "x", 1)], name="u")
    bench.append([(2, "y", 2)], name="u")  # two files, for the OPTIMIZE below to compact
    bench.run()
    root = bench.project.root

    bench.append([(3, "c", 3)])
    # A commit that changes no data (delta-spark's OPTIMIZE) leaves a stream with nothing to do.
    bench.register()
    spark = shared_spark()
    spark.sql("optimize app.u")
    assert DeltaTable(bench.source_path("u")).history(1)[0]["operation"] == "OPTIMIZE"
    spark.sql("alter table app.t set tblproperties ('delta.deletedFileRetentionDuration' = 'interval 1 day')")

    completed = pending_in_a_fresh_process(root, "--exit-code")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["behind+"]

    capsys.readouterr()
    assert tablestream(["pending", "--project-dir", str(root), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["model"] == "behind" and entry["stream"] == "behind__app_t" and entry["source"] == "app.t"
    assert (entry["offset_version"], entry["source_version"]) == (0, 2)
    assert entry["reason"] == "1 data commit in (0, 2]"

    # A cluster profile asks the same macro through run-operation: the same answer from Spark.
    assert printed_by(bench, "run-operation", "dbt_tablestream.pending_streams") == ["behind+"]

    # The stale forecast: the oldest unconsumed change passes the 1-day file retention within 2 days.
    tested = bench.invoke("test", "--select", "behind")
    statuses = {item.node.name: str(item.status) for item in tested.result.results if item.node.resource_type == "test"}
    assert statuses == {"behind_warns_within_two_days": "warn", "behind_within_an_hour": "pass"}, statuses
    (warning,) = [item for item in tested.result.results if str(item.status) == "warn"]
    assert warning.failures == 1

    built = bench.run_ok("build", "--select", completed.stdout.strip())
    assert {item.node.name for item in built.result.results if item.node.resource_type == "model"} == {
        "behind",
        "downstream",
    }
    assert {str(item.status) for item in built.result.results if item.node.resource_type == "test"} == {"pass"}
    assert Counter(row[:2] for row in bench.target_rows("downstream")) == Counter([(1, "a"), (2, "b"), (3, "c")])

    completed = pending_in_a_fresh_process(root, "--exit-code")
    assert (completed.returncode, completed.stdout) == (1, ""), completed.stderr
    assert tablestream(["pending", "--project-dir", str(root)]) == 0


def source_files(bench: StreamBench) -> set[str]:
    folder = Path(bench.source_path())
    return {str(path.relative_to(folder)) for path in folder.rglob("*.parquet")}


def plain_vacuum_would_delete(bench: StreamBench) -> set[str]:
    spark = shared_spark()
    spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = false")
    try:
        rows = spark.sql("vacuum app.t retain 0 hours dry run").collect()
    finally:
        spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = true")
    folder = Path(bench.source_path()).resolve()
    # Without its directories: VACUUM lists them too, and removes only the empty ones.
    return {
        str(Path(row["path"].removeprefix("file:")).relative_to(folder))
        for row in rows
        if row["path"].endswith(".parquet")
    }


@pytest.mark.extended
def test_vacuum_keeps_what_a_live_stream_needs_where_a_plain_vacuum_strands_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model()})
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    bench.register()
    spark = shared_spark()
    # Rewrites: the window's change files and the data files they replaced are no version's now.
    spark.sql("update app.t set age = age + 10 where id = 1")
    spark.sql("delete from app.t where id = 2")
    needed = plain_vacuum_would_delete(bench)
    assert any(name.startswith("_change_data/") for name in needed) and len(needed) >= 3, needed

    before = source_files(bench)
    capsys.readouterr()
    assert (
        tablestream(["vacuum", "app.t", "--project-dir", str(bench.project.root), "--retain-hours", "0", "--dry-run"])
        == 0
    )
    dry = capsys.readouterr().out
    assert source_files(bench) == before
    assert "kept " in dry and "for stream log__app_t, offset 0" in dry and "nothing was deleted" in dry, dry

    assert tablestream(["vacuum", "app.t", "--project-dir", str(bench.project.root), "--retain-hours", "0"]) == 0
    report = capsys.readouterr().out
    assert f"kept {len(needed)} files for stream log__app_t, offset 0" in report, report
    assert "(retention 2 hours instead of 0)" in report, report
    assert needed <= source_files(bench)
    appended = bench.run_appended("log")
    assert appended == Counter([(1, "a", 1, "UPDATE_BEFORE"), (1, "a", 11, "UPDATE_AFTER"), (2, "b", 2, "DELETE")])

    # The contrast: the same stream, behind again, and a plain zero-retention VACUUM.
    spark.sql("update app.t set age = age + 10 where id = 3")
    spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = false")
    try:
        spark.sql("vacuum app.t retain 0 hours")
    finally:
        spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = true")
    bench.refused("log", "Stream log__app_t is stale", "VACUUM")


def stream_behind_an_update(tmp_path: Path, **options: Any) -> StreamBench:
    """A stream that has run on app.t, and an UPDATE of app.t since: files its next window needs."""
    bench = StreamBench(tmp_path, {"log": stream_model()}, **options)
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.register()
    shared_spark().sql("update app.t set age = 2 where id = 1")
    return bench


def test_vacuum_refuses_bad_input_and_deletes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = stream_behind_an_update(tmp_path)
    before = source_files(bench)
    root = str(bench.project.root)
    # --force must be spelled out: no abbreviation reaches it.
    assert tablestream(["vacuum", "app.t", "--project-dir", root, "--forc"]) == 2
    assert "unrecognized arguments: --forc" in capsys.readouterr().err
    # Refusals are errors (exit 2), said on stderr; in JSON, the one document on stdout.
    assert tablestream(["vacuum", "app.t", "--project-dir", root, "--retain-hours", "-1"]) == 2
    assert tablestream(["vacuum", "app.missing", "--project-dir", root]) == 2
    err = capsys.readouterr().err
    assert "retain_hours must be a number of hours, 0 or more, got '-1.0'. Nothing was vacuumed." in err, err
    assert "tablestream: vacuum_source: no table app.missing." in err, err
    assert tablestream(["vacuum", "app.missing", "--project-dir", root, "--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {
        "error": "vacuum_source: no table app.missing. Pass the source as `schema.table`. Nothing was vacuumed.",
        "exit_code": 2,
    }
    assert source_files(bench) == before


def vacuums_sent(warehouse: Path) -> list[str]:
    """The VACUUM statements (dry runs included) dbt sent to an emulated SQL warehouse, which must
    have sent no setting a warehouse refuses."""
    return [sql for sql in assert_no_refused_setting(warehouse) if re.search(r"(^|\*/)\s*vacuum\s", sql, re.IGNORECASE)]


def test_vacuum_below_the_tables_retention_on_a_sql_warehouse_is_refused_and_deletes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A warehouse refuses to SET Delta's retention check, without which Delta refuses a VACUUM (a
    dry run too) below the table's retention: refused before any SET or VACUUM is sent."""
    warehouse = tmp_path / "warehouse"
    bench = stream_behind_an_update(tmp_path, profile=local_profile(warehouse, emulate_sql_warehouse=True))
    before = source_files(bench)
    root = str(bench.project.root)
    capsys.readouterr()
    for dry_run in ([], ["--dry-run"]):
        assert tablestream(["vacuum", "app.t", "--project-dir", root, "--retain-hours", "0", *dry_run]) == 2
    out = capsys.readouterr().err
    refusal = (
        "vacuum_source on app.t: retention 2 hours is below app.t's delta.deletedFileRetentionDuration (168.0 hours). "
        "Delta refuses such a VACUUM unless the session sets spark.databricks.delta.retentionDurationCheck.enabled to "
        "false, and this connection (a Databricks SQL warehouse) may not set it. Nothing was vacuumed. "
        "Pass retain_hours 168 or more, or run it from a cluster"
    )
    assert out.count(refusal) == 2, out
    assert source_files(bench) == before
    assert not vacuums_sent(warehouse)
    # At the table's own retention no setting is needed, and the warehouse runs the VACUUM.
    assert tablestream(["vacuum", "app.t", "--project-dir", root, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["relation"], report["retain_hours"], report["dry_run"]) == ("app.t", 168, False), report
    assert report["messages"][-1].startswith("vacuumed app.t with RETAIN 168 HOURS"), report
    assert vacuums_sent(warehouse)

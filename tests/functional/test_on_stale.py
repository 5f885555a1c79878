"""`on_stale`: what a stream does when its source went stale (VACUUM removed files of its window)
or was dropped and recreated: refuse (`fail`, the default), rebuild from a snapshot
(`resnapshot`), or move on (`skip_to_latest`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench


def merge_model(config: str = "") -> str:
    return (
        f"{{{{ config(materialized='stream_merge', unique_key='id'{', ' + config if config else ''}) }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )


def source_rows(bench: StreamBench) -> set[tuple[Any, ...]]:
    return {tuple(row.values()) for row in DeltaTable(bench.source_path()).to_pyarrow_table().to_pylist()}


def latest_row(bench: StreamBench, stream: str) -> dict[str, Any]:
    return [row for row in bench.offsets() if row["stream_name"] == stream][-1]


def run_logged(bench: StreamBench, *models: str) -> list[str]:
    logged: list[str] = []
    result = bench.invoke("run", "-s", *models, callbacks=[lambda event: logged.append(str(event.info.msg))])
    assert result.success, logged[-20:]
    return logged


@pytest.mark.extended
def test_on_stale_after_vacuum_and_after_the_source_is_recreated(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "held": merge_model(),
            "rebuilt": merge_model("on_stale='resnapshot'"),
            "skipping": merge_model("on_stale='skip_to_latest'"),
            "bad": merge_model("on_stale='bogus'"),
        },
    )
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run("-s", "held", "rebuilt", "skipping")
    first = source_rows(bench)

    bench.source().update(updates={"age": "10"}, predicate="id = 1")
    bench.source().delete("id = 2")
    bench.register()
    spark = shared_spark()
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql("vacuum app.t retain 0 hours")
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    bench.append([(4, "d", 4)])
    latest = bench.source().version()

    bench.refused("held", "Stream held__app_t is stale", "--full-refresh")

    logged = run_logged(bench, "rebuilt")
    assert any("(on_stale: resnapshot): the target is rebuilt from a snapshot of app.t" in line for line in logged)
    assert set(bench.target_rows("rebuilt")) == source_rows(bench)
    row = latest_row(bench, "rebuilt__app_t")
    assert (row["epoch"], row["to_version"]) == (1, latest)
    assert row["note"].startswith("resnapshot after: Stream rebuilt__app_t is stale"), row["note"]

    logged = run_logged(bench, "skipping")
    (warning,) = [line for line in logged if "(on_stale: skip_to_latest)" in line]
    assert f"skipped the versions (0, {latest}] of app.t" in warning, warning
    assert set(bench.target_rows("skipping")) == first, "skipped changes are not applied"
    row = latest_row(bench, "skipping__app_t")
    assert (row["epoch"], row["to_version"]) == (1, latest)
    assert row["note"].startswith("skip_to_latest after: Stream skipping__app_t is stale"), row["note"]

    # Both go on from their new offsets.
    bench.append([(5, "e", 5)])
    bench.run("-s", "rebuilt", "skipping")
    assert set(bench.target_rows("rebuilt")) == source_rows(bench)
    assert set(bench.target_rows("skipping")) == first | {(5, "e", 5)}

    bench.refused("bad", "invalid on_stale 'bogus'", "Accepted values: fail, resnapshot, skip_to_latest")

    # The source dropped and created again: a new table with versions of its own.
    shutil.rmtree(bench.source_path())
    bench.create_source([(7, "g", 7)])
    bench.append([(8, "h", 8)])
    bench.refused("held", "Stream held__app_t", "was dropped and recreated, or replaced")
    run_logged(bench, "rebuilt")
    assert set(bench.target_rows("rebuilt")) == source_rows(bench) == {(7, "g", 7), (8, "h", 8)}
    row = latest_row(bench, "rebuilt__app_t")
    assert row["epoch"] == 2 and "was dropped and recreated" in row["note"], row

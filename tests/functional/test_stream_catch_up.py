"""Bounded catch-up (`max_versions_per_run`) and a stream started where another stands
(`start_at: {stream: ...}`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from dbt_tablestream.cli import main as tablestream
from tests.functional.streams import StreamBench, as_row, stream_model

MIRROR = (
    "{{ config(materialized='stream_merge', unique_key='id', max_versions_per_run=20) }}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
)


def source_at(bench: StreamBench, version: int) -> Counter[tuple[Any, ...]]:
    table = DeltaTable(bench.source_path(), version=version)
    return Counter(as_row(row) for row in table.to_pyarrow_table().to_pylist())


@pytest.mark.extended
def test_a_stream_50_versions_behind_catches_up_in_3_bounded_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = StreamBench(
        tmp_path,
        {"mirror": MIRROR, "bad": stream_model("max_versions_per_run=0")},
    )
    bench.create_source([(key, f"n{key}", key) for key in range(60)])
    bench.run("-s", "mirror")
    assert bench.target_rows("mirror") == source_at(bench, 0)

    # 50 commits, each changing one row: an update, an insert or a delete.
    source = bench.source()
    for version in range(1, 51):
        if version % 3 == 0:
            source.update(updates={"age": "age + 1000"}, predicate=f"id = {version}")
        elif version % 3 == 1:
            bench.append([(100 + version, f"new{version}", version)])
        else:
            source.delete(f"id = {version}")
        source = bench.source()
    assert source.version() == 50

    root = str(bench.project.root)
    for reached, behind in [(20, 30), (40, 10), (50, 0)]:
        logged: list[str] = []
        result = bench.invoke(
            "run", "-s", "mirror", callbacks=[lambda event, into=logged: into.append(str(event.info.msg))]
        )
        assert result.success
        (summary,) = [line for line in logged if line.startswith("stream mirror__app_t: window")]
        assert f"window ({reached - 20 if reached < 50 else 40}, {reached}]" in summary, summary
        if behind:
            assert f"{behind} versions behind, caught up to {reached} of 50" in summary, summary
        else:
            assert "behind" not in summary, summary
        assert bench.target_rows("mirror") == source_at(bench, reached)
        capsys.readouterr()
        assert tablestream(["status", "--project-dir", root, "--json"]) == 0
        (entry,) = json.loads(capsys.readouterr().out)
        assert (entry["to_version"], entry["lag_versions"]) == (reached, behind)

    assert [(row["from_version"], row["to_version"]) for row in bench.offsets()] == [
        (0, 0),
        (0, 20),
        (20, 40),
        (40, 50),
    ]
    bench.refused("bad", "max_versions_per_run must be a whole number of source versions >= 1", "got 0")


def test_start_at_another_streams_offset(tmp_path: Path) -> None:
    second = stream_model("start_at={'stream': 'first__app_t'}")
    bench = StreamBench(
        tmp_path,
        {
            "first": stream_model("start_at='latest'"),
            "second": second,
            "unknown": stream_model("start_at={'stream': 'nope'}"),
            "other_source": stream_model("start_at={'stream': 'first__app_t'}", source="u"),
            "bad_name": stream_model("start_at={'stream': 'first-app'}"),
        },
        sources=("t", "u"),
    )
    bench.create_source([(1, "a", 1)])
    bench.create_source([(9, "z", 9)], name="u")
    bench.run("-s", "first")
    bench.append([(2, "b", 2)])
    bench.run("-s", "first")
    assert [row["to_version"] for row in bench.offsets()] == [0, 1]
    bench.append([(3, "c", 3)])

    appended = bench.run_appended("second")
    assert sorted(appended) == [(3, "c", 3, "INSERT")]
    (started,) = [row for row in bench.offsets() if row["stream_name"] == "second__app_t"]
    assert (started["from_version"], started["to_version"]) == (1, 2)

    bench.refused(
        "unknown", "Stream unknown__app_t", "start_at names the stream nope", "no row in analytics.tablestream_offsets"
    )
    bench.refused(
        "other_source",
        "Stream other_source__app_u",
        "start_at names the stream first__app_t",
        "which reads app.t, not app.u",
    )
    bench.refused("bad_name", "start_at stream must name a stream of the same source", "first-app")

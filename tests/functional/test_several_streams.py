"""Several streams in one model: a UNION of two sources merged by key, and a join of two streams
logged; one commit per run for all inputs, their offsets moving together, crashes at each step."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.streams import StreamBench

UNION = (
    "{{ config(materialized='stream_merge', unique_key='id') }}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 'a') }}\n"
    "union all\n"
    "select * from {{ dbt_tablestream.source_stream('app', 'b') }}"
)
JOIN = (
    "{{ config(materialized='table_stream') }}\n"
    "select c.id, c.name as c_name, d.name as d_name, c.__change_type as c_change, d.__change_type as d_change\n"
    "from {{ dbt_tablestream.source_stream('app', 'c') }} as c\n"
    "join {{ dbt_tablestream.source_stream('app', 'd') }} as d on c.id = d.id"
)
INPUTS = {"shards": ("a", "b"), "pairs": ("c", "d")}


def several_streams(tmp_path: Path, *, processes: bool = False) -> StreamBench:
    """Shards a (keys 1-49) and b (keys 50-99) under `shards`; c and d joined by key under `pairs`."""
    bench = StreamBench(tmp_path, {"shards": UNION, "pairs": JOIN}, sources=("a", "b", "c", "d"), processes=processes)
    bench.create_source([(1, "a1", 1), (2, "a2", 2)], name="a")
    bench.create_source([(50, "b50", 50), (51, "b51", 51)], name="b")
    bench.create_source([(1, "c1", 1)], name="c")
    bench.create_source([(1, "d1", 1)], name="d")
    return bench


def state(bench: StreamBench, name: str) -> Counter[tuple[Any, ...]]:
    return Counter(
        (row["id"], row["name"], row["age"])
        for row in DeltaTable(bench.source_path(name)).to_pyarrow_table().to_pylist()
    )


def shards_oracle(bench: StreamBench) -> Counter[tuple[Any, ...]]:
    return state(bench, "a") + state(bench, "b")


def shards_target(bench: StreamBench) -> Counter[tuple[Any, ...]]:
    return Counter(row[:3] for row in bench.target_rows("shards"))


def change_round(bench: StreamBench, round: int) -> tuple[int, str, str, str, str]:
    """Changes to every source: an update, a delete and inserts in the shards; a key inserted into
    both joined sources, and an update of c alone, which joins nothing. Returns the join's row."""
    bench.source("a").update(updates={"age": "age + 10"}, predicate="id = 1")
    bench.append([(10 + round, f"a{10 + round}", round)], name="a")
    bench.source("b").delete(f"id = {51 + round}")
    bench.append([(52 + round, f"b{52 + round}", round)], name="b")
    key = 100 + round
    bench.append([(key, f"c{key}", round)], name="c")
    bench.append([(key, f"d{key}", round)], name="d")
    bench.source("c").update(updates={"age": "age + 1"}, predicate="id = 1")
    return (key, f"c{key}", f"d{key}", "INSERT", "INSERT")


def latest_rows(bench: StreamBench, model: str) -> dict[str, dict[str, Any]]:
    """Each input stream's latest offsets row for the model."""
    rows = {}
    for source in INPUTS[model]:
        name = f"{model}__app_{source}"
        rows[name] = [row for row in bench.offsets() if row["stream_name"] == name][-1]
    return rows


def assert_inputs_moved_together(bench: StreamBench, model: str) -> None:
    """Every input's offset is at its source's latest version, written by one run in one INSERT,
    and no input applied a window twice."""
    latest = latest_rows(bench, model)
    for source, (name, row) in zip(INPUTS[model], latest.items(), strict=True):
        assert row["to_version"] == DeltaTable(bench.source_path(source)).version(), (name, row)
        windows = [
            (r["from_version"], r["to_version"])
            for r in bench.offsets()
            if r["stream_name"] == name and r["rows_written"]
        ]
        assert len(windows) == len(set(windows)), f"{name} applied a window twice: {windows}"
    assert len({(row["invocation_id"], row["committed_at"]) for row in latest.values()}) == 1, latest


def test_inputs_that_cannot_be_committed_together_are_refused_before_any_write(tmp_path: Path) -> None:
    bench = several_streams(tmp_path)
    (bench.project.root / "models" / "named.sql").write_text(
        UNION.replace("unique_key='id'", "unique_key='id', stream_name='orders'")
    )
    message = bench.refused(
        "named", "reads the stream orders more than once", "leave it out of a model that reads several sources"
    )
    assert "window (" in message and "of app.a" in message and "of app.b" in message
    assert bench.target_version("named") is None

    (bench.project.root / "models" / "named.sql").write_text(
        "{{ config(materialized='table_stream') }}\nselect 1 as id"
    )
    bench.refused("named", "must read a stream with dbt_tablestream.source_stream() or ref_stream(); it reads none")
    assert bench.target_version("named") is None

    # A model gains an input: the new stream would start over while the other continues.
    (bench.project.root / "models" / "named.sql").unlink()
    one = "{{ config(materialized='stream_merge', unique_key='id') }}\nselect * from {{ dbt_tablestream.source_stream('app', 'a') }}"
    (bench.project.root / "models" / "shards.sql").write_text(one)
    bench.run_ok("run", "-s", "shards")
    (bench.project.root / "models" / "shards.sql").write_text(UNION)
    bench.source("a").update(updates={"age": "age + 10"}, predicate="id = 1")
    bench.refused(
        "shards", "shards__app_b starts over", "shards__app_a (from version 0 of app.a) continues", "--full-refresh"
    )

    bench.run_ok("run", "-s", "shards", "--full-refresh")
    assert shards_target(bench) == shards_oracle(bench)
    assert_inputs_moved_together(bench, "shards")


# CI kills a several-streams model at every step in test_kills.py (the union); these kills of the
# union and the join, each followed by a check of both inputs' offsets, are in the soak (`-m soak`).
SEVERAL_STREAM_CRASHES = [
    pytest.param(["after_target_commit"], id="target-commit", marks=pytest.mark.soak),
    pytest.param(
        ["window_pinned", "before_target_commit", "after_offsets_append"], id="other-steps", marks=pytest.mark.soak
    ),
]


@pytest.mark.extended
@pytest.mark.parametrize("points", SEVERAL_STREAM_CRASHES)
def test_a_union_and_a_join_commit_their_inputs_together_through_a_kill_at_each_step(
    tmp_path: Path, points: list[str]
) -> None:
    """A `dbt run` SIGKILLed at a step of the commit protocol, for the union and for the join, then
    a normal run: the union equals its sources, the join holds each round's row once, and every
    input's offset moved with the other's."""
    bench = several_streams(tmp_path, processes=True)
    bench.run()
    assert shards_target(bench) == shards_oracle(bench)
    joined = Counter({(1, "c1", "d1", "INSERT", "INSERT"): 1})  # the snapshots joined
    assert bench.target_rows("pairs") == joined
    assert_inputs_moved_together(bench, "shards")
    assert_inputs_moved_together(bench, "pairs")

    for round, point in enumerate(points):
        joined[change_round(bench, round)] += 1
        before = (shards_target(bench), bench.target_rows("pairs"))
        for model in ("shards", "pairs"):
            bench.crash(point, "run", "-s", model)
        committed = point in ("after_target_commit", "after_offsets_append")
        assert (shards_target(bench) == shards_oracle(bench)) == committed, point
        assert (bench.target_rows("pairs") == joined) == committed, point
        if not committed:
            assert (shards_target(bench), bench.target_rows("pairs")) == before, point

        bench.run()
        assert shards_target(bench) == shards_oracle(bench), point
        assert bench.target_rows("pairs") == joined, point
        assert_inputs_moved_together(bench, "shards")
        assert_inputs_moved_together(bench, "pairs")

    # The last commit carries both inputs' markers; its SetTransaction names both.
    marker = json.loads(DeltaTable(str(bench.target_path("shards"))).history(1)[0]["userMetadata"])
    assert [entry["tablestream.stream"] for entry in marker["tablestream.inputs"]] == ["shards__app_a", "shards__app_b"]
    assert marker["tablestream.stream_id"] == "tablestream/shards__app_a+shards__app_b/0+0"

    # Only one input changed: the other's window is empty and its offset still moves with the run.
    bench.source("b").delete("id = 50")
    bench.run()
    assert shards_target(bench) == shards_oracle(bench)
    assert_inputs_moved_together(bench, "shards")
    assert bench.target_rows("pairs") == joined

"""Several dbt threads, one local session each: every stream commit carries its own marker.

dbt-spark's stock session method shares one SparkSession between threads, so there stream models
with threads > 1 are refused before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from tests.functional.streams import StreamBench

MODELS = {
    f"mirror_{source}_{copy}": (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        f"select * from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"
    )
    for source in ("t", "u")
    for copy in (1, 2)
}


def rows_of(table) -> list[tuple]:
    return sorted((row["id"], row["name"], row["age"]) for row in table.to_pyarrow_table().to_pylist())


@pytest.mark.extended
def test_four_threads_four_streams_five_rounds(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, MODELS, sources=("t", "u"))
    (bench.project.root / "profiles.yml").write_text(
        (bench.project.root / "profiles.yml").read_text().replace("threads: 1", "threads: 4")
    )
    for source in ("t", "u"):
        bench.create_source([(1, "a", 1), (2, "b", 2)], name=source)
    for round in range(5):
        if round:
            for source in ("t", "u"):
                bench.append([(10 + round, f"n{round}", round)], name=source)
                bench.source(source).update(updates={"age": f"age + {round}"}, predicate="id = 1")
                if round == 3:
                    bench.source(source).delete("id = 2")
        result = bench.run_ok("run")
        assert sorted(r.node.name for r in result.result.results if r.node.resource_type == "model") == sorted(MODELS)
        for model in MODELS:
            source = model.split("_")[1]
            assert rows_of(DeltaTable(str(bench.target_path(model)))) == rows_of(bench.source(source)), (round, model)
        latest = {source: bench.source(source).version() for source in ("t", "u")}
        positions = {row["stream_name"]: row["to_version"] for row in bench.offsets()}
        assert positions == {f"{model}__app_{model.split('_')[1]}": latest[model.split("_")[1]] for model in MODELS}


def test_stock_session_method_with_threads_is_refused_before_any_write(tmp_path: Path) -> None:
    profile = {"type": "spark", "method": "session", "host": "localhost", "schema": "analytics", "threads": 4}
    bench = StreamBench(tmp_path, MODELS, sources=("t", "u"), profile=profile)
    for source in ("t", "u"):
        bench.create_source([(1, "a", 1)], name=source)
    result = bench.invoke("run")
    assert not result.success
    messages = [str(item.message) for item in result.result.results if item.node.resource_type == "model"]
    assert len(messages) == 4
    for message in messages:
        assert "shares one SparkSession between its 4 threads" in message, message
        assert "`type: tablestream`" in message and "`threads: 1`" in message
    assert not any(bench.target_path(model).exists() for model in MODELS)
    assert bench.offsets() == []

"""A stream model whose target write fails inside Delta leaves nothing on the session: the plain
models and the stream model after it on the same dbt thread are written, and none of their commits
carries the failed stream's marker or SetTransaction (docs/architecture.md, "A failed write").
tests/cluster/test_thrift_failed_write.py runs the same check on the Thrift profile."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deltalake import write_deltalake

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench, model_results, people

# dbt runs independent models on one thread in the order of their names, so the failing stream
# model runs first. Each plain model reads the source `other`, which gains a row before each run.
MODELS = {
    "a_failing": "{{ config(materialized='stream_merge', unique_key='id') }}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 't') }}",
    "b_plain_table": "{{ config(materialized='table', file_format='delta') }}\nselect * from {{ source('app', 'other') }}",
    "c_plain_incremental": "{{ config(materialized='incremental', file_format='delta', incremental_strategy='merge', "
    "unique_key='id') }}\nselect * from {{ source('app', 'other') }}",
    "d_stream": "{{ config(materialized='stream_merge', unique_key='id') }}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 'other') }}",
}
# A CHECK constraint the failing stream's next source row breaks.
CONSTRAINT = "alter table {schema}.a_failing add constraint age_below_100 check (id < 100)"
BREAKING_ID = 150


def commits(table: Path, since: int = 0) -> list[dict[str, Any]]:
    """Each commit of a Delta table from `since` (ms) on: its commitInfo's operation, timestamp and
    userMetadata, and its SetTransactions."""
    found = []
    for entry in sorted((table / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in entry.read_text().splitlines() if line.strip()]
        info = next((action["commitInfo"] for action in actions if "commitInfo" in action), {})
        if info.get("timestamp", 0) >= since:
            found.append(
                {
                    "version": int(entry.stem),
                    "operation": info.get("operation"),
                    "userMetadata": info.get("userMetadata"),
                    "txn": [action["txn"] for action in actions if "txn" in action],
                }
            )
    return found


def assert_failed_write_leaves_nothing(
    add_row: Callable[[int], None],
    invoke: Callable[[], Any],
    table: Callable[[str], Path],
    keys: Callable[[str], set[int]],
) -> None:
    """Two invocations in a row with the same failing window: in both the failing stream model
    alone fails; the plain models and the other stream model are written with the invocation's new
    row of `other`; no commit of theirs carries the failed stream; the plain models' commits carry
    no marker and no SetTransaction, the other stream model's its own only."""
    for run in (1, 2):
        key = 100 + run
        add_row(key)
        started = int(time.time() * 1000)
        result = invoke()
        assert not result.success
        statuses = {item.node.name: str(item.status) for item in model_results(result)}
        assert statuses == {name: "error" if name == "a_failing" else "success" for name in MODELS}, statuses
        assert "age_below_100" in str([item.message for item in model_results(result)])
        assert commits(table("a_failing"), started) == []
        for model in ("b_plain_table", "c_plain_incremental", "d_stream"):
            made = commits(table(model), started)
            assert made, f"run {run}: {model} was not written"
            assert key in keys(model), f"run {run}: {model} lacks the run's row {key}: {sorted(keys(model))}"
            assert "a_failing" not in json.dumps(made), f"run {run}: {model} carries the failed stream: {made}"
            if model != "d_stream":
                assert [(c["txn"], c["userMetadata"]) for c in made] == [([], None)] * len(made), (run, model, made)
        app_ids = [txn["appId"] for commit in commits(table("d_stream"), started) for txn in commit["txn"]]
        assert app_ids == ["tablestream/d_stream__app_other/0"], app_ids


def failing_bench(tmp_path: Path, profile: dict[str, Any] | None = None) -> StreamBench:
    """The four models built once on the local warehouse, then the constraint the next row breaks."""
    bench = StreamBench(tmp_path, MODELS, sources=("t", "other"), profile=profile)
    bench.create_source([(1, "a", 10)])
    bench.create_source([(1, "x", 1)], name="other")
    bench.run()
    shared_spark().sql(CONSTRAINT.format(schema="analytics"))
    bench.append([(BREAKING_ID, "b", 15)])
    return bench


def test_a_failed_stream_write_leaves_nothing_for_the_models_after_it(tmp_path: Path) -> None:
    bench = failing_bench(tmp_path)
    assert_failed_write_leaves_nothing(
        lambda key: write_deltalake(bench.source_path("other"), people([(key, "new", key)]), mode="append"),
        lambda: bench.invoke("run"),
        bench.target_path,
        lambda model: {row[0] for row in bench.target_rows(model)},
    )


def test_on_a_shared_session_the_invocation_fails_naming_the_models_after_the_failure(tmp_path: Path) -> None:
    """dbt-spark's own session method runs every model and hook on one SparkSession, whose
    settings the package cannot reset after a failed statement: the invocation's end resets them
    and fails, naming each model that ran on the session after the failure."""
    profile = {"type": "spark", "method": "session", "host": "localhost", "schema": "analytics", "threads": 1}
    bench = failing_bench(tmp_path, profile)
    for run in (1, 2):
        write_deltalake(bench.source_path("other"), people([(100 + run, "new", run)]), mode="append")
        started = int(time.time() * 1000)
        result = bench.invoke("run")
        assert not result.success
        # The end hook's error ends the invocation: dbt returns it as the invocation's exception.
        message = str(result.exception)
        assert "the write of stream a_failing__app_t to analytics.a_failing" in message, message
        assert "Failed: a_failing." in message, message
        assert "b_plain_table, c_plain_incremental, d_stream." in message, message
        held = [row[0] for row in shared_spark().sql("set").collect()]
        left = [
            key for key in held if key.startswith(("spark.databricks.delta.write.", "spark.tablestream.openWrite."))
        ]
        assert not left and "spark.databricks.delta.commitInfo.userMetadata" not in held, left
        # The stream model after the failure clears the failed write's settings before it sets its own.
        app_ids = [txn["appId"] for commit in commits(bench.target_path("d_stream"), started) for txn in commit["txn"]]
        assert app_ids == ["tablestream/d_stream__app_other/0"], app_ids
        assert "a_failing" not in json.dumps(commits(bench.target_path("d_stream"), started))

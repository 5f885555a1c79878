"""The on-run-end explanation of a stream run that lost a same-moment race inside Delta, fed
Delta's DELTA_CONCURRENT_TRANSACTION message in the form delta-spark 4.4.0 raises it: the
conflicting commit as JSON, its userMetadata (the stream's marker) JSON inside that JSON."""

from __future__ import annotations

import json

import pytest

from tests.spark_sql.render import SparkRenderer

pytestmark = pytest.mark.spark_sql

MARKER = {
    "tablestream.stream": "current__app_t",
    "tablestream.stream_id": "tablestream/current__app_t/0",
    "tablestream.epoch": 0,
    "tablestream.from": 1,
    "tablestream.to": 3,
    "tablestream.source": "app.t",
    "tablestream.source_table_id": "81702017-2952-451c-85c6-14256900d07f",
    "tablestream.invocation_id": "63cac994-f9e1-4d9f-9925-60bee022aa25",
}
# The shape every commit has now: a group of one input (_stream_marker_metadata).
GROUP_OF_ONE = {
    **{key: MARKER[key] for key in ("tablestream.stream", "tablestream.stream_id", "tablestream.to")},
    "tablestream.source": MARKER["tablestream.source"],
    "tablestream.invocation_id": MARKER["tablestream.invocation_id"],
    "tablestream.inputs": [MARKER],
}


def delta_conflict_message(marker: dict[str, object]) -> str:
    commit = {
        "timestamp": 1795439586185,
        "operation": "MERGE",
        "operationParameters": {"predicate": '["(id#14962 = id#15007)"]'},
        "readVersion": 0,
        "userMetadata": json.dumps(marker),
        "engineInfo": "Apache-Spark/4.2.0 Delta-Lake/4.4.0",
    }
    return (
        "Database Error\n  org.apache.hive.service.cli.HiveSQLException: Error running query: "
        "[DELTA_CONCURRENT_TRANSACTION] io.delta.exceptions.ConcurrentTransactionException: "
        "[DELTA_CONCURRENT_TRANSACTION] ConcurrentTransactionException: This error occurs when multiple "
        "streaming queries are using the same checkpoint to write into this table. Did you run multiple "
        f"instances of the same streaming query at the same time?\nConflicting commit: {json.dumps(commit)}\n"
        "Refer to https://docs.delta.io/latest/concurrency-control.html for more details."
    )


@pytest.mark.parametrize("marker", [GROUP_OF_ONE, MARKER], ids=["group_of_one", "single_shape"])
def test_a_lost_race_is_explained_with_the_winners_window(renderer: SparkRenderer, marker: dict[str, object]) -> None:
    explain = renderer.model("orders_changes").package["_concurrent_run_explanation"]
    explanation = str(explain("current", delta_conflict_message(marker)))
    assert explanation.startswith("Stream current__app_t on app.t is being consumed by another run: ")
    assert "run 63cac994-f9e1-4d9f-9925-60bee022aa25 committed the window (1, 3] to model current" in explanation
    assert "Nothing was written by this run and its offset did not move" in explanation
    assert "Run again" in explanation


def test_other_errors_are_not_explained(renderer: SparkRenderer) -> None:
    explain = renderer.model("orders_changes").package["_concurrent_run_explanation"]
    assert explain("current", "[TABLE_OR_VIEW_NOT_FOUND] The table or view `app`.`t` cannot be found.") is None
    # A conflict between commits that carry no stream marker is Delta's business alone.
    unmarked = delta_conflict_message(MARKER).replace("tablestream.", "other.")
    assert explain("current", unmarked) is None


def test_a_conflict_between_two_writers_of_a_stream_target_is_explained(renderer: SparkRenderer) -> None:
    """Under the reapply protocol (a SQL warehouse) no marker names the window: Delta's conflict
    class and the model's streams do."""
    explain = renderer.model("orders_changes").package["_concurrent_run_explanation"]
    message = (
        "io.delta.exceptions.ConcurrentAppendException: [DELTA_CONCURRENT_APPEND.WITHOUT_HINT] Transaction conflict"
        " detected. a concurrent MERGE added data to table spark_catalog.analytics.current committed at version 1."
    )
    explanation = str(explain("current", message, ["current__app_t"]))
    assert explanation.startswith("Stream current__app_t of model current is being consumed by another run: ")
    assert "(DELTA_CONCURRENT_APPEND)" in explanation and "Nothing was written by this run" in explanation
    assert explain("current", message) is None  # not a stream model's: Delta's business alone


def test_a_conflict_between_two_runs_logging_one_window_is_explained(renderer: SparkRenderer) -> None:
    """Under the reapply protocol the offsets log takes a window once: of two runs logging it at
    once, Delta refuses the later's row (its stream's partition of the log), after its write
    applied the window again."""
    explain = renderer.model("orders_changes").package["_concurrent_run_explanation"]
    message = (
        "[DELTA_CONCURRENT_APPEND.WITH_PARTITION_HINT] Transaction conflict detected. a concurrent MERGE added data"
        " to table spark_catalog.analytics.tablestream_offsets committed at version 3. The concurrent operation"
        " modified data in the partition [stream_name=current__app_t] that should have been read by this operation."
    )
    explanation = str(explain("current", message, ["current__app_t"]))
    assert explanation.startswith("Stream current__app_t of model current is being consumed by another run: ")
    assert "refused this run's offsets row (DELTA_CONCURRENT_APPEND)" in explanation
    assert "which changed nothing" in explanation and "Nothing was written" not in explanation

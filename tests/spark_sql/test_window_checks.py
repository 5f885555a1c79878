"""The cluster engine's window checks and marker recovery are Jinja over DESCRIBE HISTORY rows.
Here they are fed the history of real Delta tables (delta-rs history() has DESCRIBE HISTORY's
columns: version, timestamp, operation, operationParameters, userMetadata), built the way the
end-to-end refusal scenarios build them, so each refusal is checked without a cluster."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, write_deltalake

from tests.functional.streams import CDF, people
from tests.spark_sql.render import SparkRenderer

pytestmark = pytest.mark.spark_sql

REMEDY = "Reset the stream with `dbt run --full-refresh -s log`."


def history_rows(path: Path) -> list[dict[str, Any]]:
    """DESCRIBE HISTORY's rows for the table, newest first."""
    return [
        {
            "version": entry["version"],
            "timestamp": datetime.fromtimestamp(entry["timestamp"] / 1000, tz=timezone.utc).replace(tzinfo=None),
            "operation": entry["operation"],
            "operationParameters": entry.get("operationParameters") or {},
            "userMetadata": entry.get("userMetadata"),
        }
        for entry in DeltaTable(str(path)).history()
    ]


def window(after: int, through: int) -> dict[str, Any]:
    return {
        "stream": "log__app_t",
        "subject": "Stream log__app_t",
        "remedy": REMEDY,
        "source": "app.t",
        "after": after,
        "through": through,
    }


def refusal(renderer: SparkRenderer, path: Path, after: int) -> dict | None:
    """The refusal (kind, message) of the window (after, latest], or None when it is readable."""
    macros = renderer.model("orders_changes").package
    through = DeltaTable(str(path)).version()
    return macros["_window_commits_problem"](window(after, through), history_rows(path))


def check(renderer: SparkRenderer, path: Path, after: int) -> str | None:
    """The refusal message for the window (after, latest], or None when it is readable."""
    problem = refusal(renderer, path, after)
    return None if problem is None else str(problem["message"])


def test_a_window_with_the_feed_on_throughout_is_readable(renderer: SparkRenderer, tmp_path: Path) -> None:
    write_deltalake(tmp_path, people([(1, "a", 1)]), configuration=CDF)
    write_deltalake(tmp_path, people([(2, "b", 2)]), mode="append")
    DeltaTable(str(tmp_path)).delete("id = 1")
    assert check(renderer, tmp_path, 0) is None


def test_feed_disabled_then_enabled_inside_the_window_is_refused(renderer: SparkRenderer, tmp_path: Path) -> None:
    write_deltalake(tmp_path, people([(1, "a", 1)]), configuration=CDF)
    write_deltalake(tmp_path, people([(2, "b", 2)]), mode="append")
    DeltaTable(str(tmp_path)).alter.set_table_properties({"delta.enableChangeDataFeed": "false"})
    write_deltalake(tmp_path, people([(3, "c", 3)]), mode="append")  # version 3, not recorded
    DeltaTable(str(tmp_path)).alter.set_table_properties(CDF)
    write_deltalake(tmp_path, people([(4, "d", 4)]), mode="append")
    message = check(renderer, tmp_path, 1)
    assert message is not None
    assert "change data feed of app.t was not enabled at version 3" in message
    assert "enable_change_tracking" in message and "--full-refresh" in message
    assert check(renderer, tmp_path, 4) is None  # a window after the re-enable is fine


def test_feed_enabled_inside_the_window_after_data_is_refused(renderer: SparkRenderer, tmp_path: Path) -> None:
    write_deltalake(tmp_path, people([(1, "a", 1)]))
    write_deltalake(tmp_path, people([(2, "b", 2)]), mode="append")  # version 1, feed off
    DeltaTable(str(tmp_path)).alter.set_table_properties(CDF)
    write_deltalake(tmp_path, people([(3, "c", 3)]), mode="append")
    message = check(renderer, tmp_path, 0)
    assert message is not None and "was not enabled at version 1" in message
    assert check(renderer, tmp_path, 2) is None


def test_vacuum_past_the_offset_is_refused_as_stale(renderer: SparkRenderer, tmp_path: Path) -> None:
    write_deltalake(tmp_path, people([(1, "a", 1)]), configuration=CDF)
    write_deltalake(tmp_path, people([(4, "d", 4)]), mode="append")
    DeltaTable(str(tmp_path)).delete("id = 4")
    DeltaTable(str(tmp_path)).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    problem = refusal(renderer, tmp_path, 0)
    # on_stale recovers from this kind alone.
    assert problem is not None and problem["kind"] == "stale"
    message = str(problem["message"])
    for fragment in (
        "Stream log__app_t is stale",
        "app.t were removed (VACUUM)",
        "silently drop changes",
        "--full-refresh",
    ):
        assert fragment in message, message


def test_vacuum_keeping_a_week_leaves_a_recent_window_readable(renderer: SparkRenderer, tmp_path: Path) -> None:
    write_deltalake(tmp_path, people([(1, "a", 1)]), configuration=CDF)
    write_deltalake(tmp_path, people([(4, "d", 4)]), mode="append")
    DeltaTable(str(tmp_path)).delete("id = 4")
    DeltaTable(str(tmp_path)).vacuum(retention_hours=168, dry_run=False)
    assert check(renderer, tmp_path, 0) is None


def test_marker_recovery_reads_the_stream_marker_from_user_metadata(renderer: SparkRenderer, tmp_path: Path) -> None:
    def commit(stream: str, to: int) -> None:
        marker = {
            "tablestream.stream": stream,
            "tablestream.stream_id": f"tablestream/{stream}/2",
            "tablestream.epoch": 2,
            "tablestream.from": to - 3,
            "tablestream.to": to,
            "tablestream.invocation_id": "i",
        }
        properties = CommitProperties(custom_metadata={"userMetadata": json.dumps(marker)})
        write_deltalake(tmp_path, pa.table({"x": [to]}), mode="append", commit_properties=properties)

    commit("log__app_t", 5)
    commit("other__app_t", 9)
    write_deltalake(tmp_path, pa.table({"x": [0]}), mode="append")  # a commit without a marker
    macros = renderer.model("orders_changes").package
    marker = macros["_find_marker"](history_rows(tmp_path), "log__app_t")
    assert marker == {
        "commit_version": 0,
        "stream": "log__app_t",
        "stream_id": "tablestream/log__app_t/2",
        "epoch": 2,
        "from": 2,
        "to": 5,
        "invocation_id": "i",
    }
    assert macros["_find_marker"](history_rows(tmp_path), "missing__app_t") is None


def test_a_window_of_appends_alone_is_known_by_its_history(renderer: SparkRenderer, tmp_path: Path) -> None:
    """_window_appends_only: every commit of the window an append (WRITE in mode Append, a streaming
    append, a CREATE TABLE AS SELECT), as delta-rs and Spark write DESCRIBE HISTORY's rows; any
    other commit, or a version the rows leave out, is not."""
    write_deltalake(tmp_path, people([(1, "a", 1)]), configuration=CDF)  # version 0
    write_deltalake(tmp_path, people([(2, "b", 2)]), mode="append")  # 1
    write_deltalake(tmp_path, people([(3, "c", 3)]), mode="append")  # 2
    write_deltalake(tmp_path, people([(3, "c", 3)]), mode="overwrite")  # 3
    write_deltalake(tmp_path, people([(4, "d", 4)]), mode="append")  # 4
    DeltaTable(str(tmp_path)).delete("id = 4")  # 5
    rows = history_rows(tmp_path)
    appends_only = renderer.model("orders_changes").package["_window_appends_only"]
    assert [appends_only(0, 2, rows), appends_only(1, 2, rows), appends_only(3, 4, rows)] == [True, True, True]
    assert [appends_only(2, 3, rows), appends_only(0, 4, rows), appends_only(4, 5, rows)] == [False, False, False]
    assert appends_only(2, 2, rows) is False, "an empty window"
    assert appends_only(0, 2, [row for row in rows if row["version"] != 1]) is False, "a version left out"
    # Spark's DESCRIBE HISTORY over the Thrift server gives the parameters as text.
    spark_rows = [
        {"version": 7, "operation": "STREAMING UPDATE", "operationParameters": "{outputMode -> Append, epochId -> 3}"},
        {"version": 8, "operation": "CREATE TABLE AS SELECT", "operationParameters": "{partitionBy -> []}"},
        {
            "version": 9,
            "operation": "STREAMING UPDATE",
            "operationParameters": "{outputMode -> Complete, epochId -> 4}",
        },
        {"version": 10, "operation": "WRITE", "operationParameters": '{"mode":"Overwrite","partitionBy":"[]"}'},
        {"version": 11, "operation": "MERGE", "operationParameters": "{predicate -> [], mode -> Append}"},
    ]
    assert appends_only(6, 8, spark_rows) is True
    assert [appends_only(8, 9, spark_rows), appends_only(9, 10, spark_rows), appends_only(10, 11, spark_rows)] == [
        False,
        False,
        False,
    ]

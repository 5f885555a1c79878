"""The position and window rules (macros/streams/stream_position.sql, _stream_source_state_of), as
the PySpark API renders them: the same macros resolve_stream applies in a dbt run."""

from __future__ import annotations

from typing import Any

import pytest

from dbt_tablestream._macros import render
from dbt_tablestream.exceptions import StreamError


def logged(epoch: int, to: int | None, mode: str = "standard", table_id: str = "t1") -> dict[str, Any]:
    return {"epoch": epoch, "to_version": to, "source_table_id": table_id, "mode": mode, "source": "app.t", "runs": 3}


def marker(epoch: int, to: int, table_id: str = "t1") -> dict[str, Any]:
    return {"epoch": epoch, "to": to, "source_table_id": table_id}


def position(*args: Any) -> tuple[bool, int, int | None]:
    found = render("_stream_position", *args)
    return found["restart"], found["epoch"], found["after"]


def test_the_later_of_the_log_and_the_marker_is_the_position() -> None:
    assert position(None, None, True, False) == (True, 0, None)
    assert position(logged(0, 5), None, True, False) == (False, 0, 5)
    # The target committed (0, 8] but the offset was not logged: the marker wins.
    assert position(logged(0, 5), marker(0, 8), True, False) == (False, 0, 8)
    # A newer epoch wins over a higher version of an older one.
    assert position(logged(1, 3), marker(0, 8), True, False) == (False, 1, 3)
    # Only the marker: a target whose log row is gone still continues.
    assert position(None, marker(2, 4), True, False) == (False, 2, 4)


def test_a_restart_opens_an_epoch_above_every_one_logged() -> None:
    # The target is gone (a dbt model dropped): the log's offset does not count, its epoch does.
    assert position(logged(3, 9), None, False, False) == (True, 4, None)
    assert position(logged(3, 9), marker(3, 9), True, True) == (True, 4, None)
    # reset_stream back to start_at logged a row without an offset in the epoch it opened.
    assert position(logged(5, None, "reset"), marker(4, 9), True, False) == (True, 5, None)
    assert position(logged(5, None, "dropped"), None, True, False) == (True, 5, None)


STATE = {"latest_version": 7, "earliest_change_version": 3, "version_at_timestamp": 4}


@pytest.mark.parametrize(
    ("start_at", "after"),
    [("snapshot", 7), ("latest", 7), ("earliest", 2), ({"version": 5}, 5), ({"timestamp": "2026-01-01"}, 4)],
)
def test_start_at_picks_the_version_a_stream_starts_after(start_at: Any, after: int) -> None:
    assert render("_stream_start_after", start_at, STATE, "s", "app.t") == after


def test_start_at_beyond_the_source_or_without_a_feed_is_refused() -> None:
    with pytest.raises(StreamError, match=r"start_at version 9 is beyond the latest version 7 of app\.t"):
        render("_stream_start_after", {"version": 9}, STATE, "s", "app.t")
    with pytest.raises(StreamError, match=r"Stream s: the source app\.t has no readable change feed"):
        render("_stream_start_after", "earliest", {**STATE, "earliest_change_version": None}, "s", "app.t")


def history(*rows: tuple[int, str, str]) -> list[dict[str, Any]]:
    """DESCRIBE HISTORY rows, newest first."""
    return [
        {"version": version, "operation": operation, "operationParameters": parameters}
        for version, operation, parameters in sorted(rows, reverse=True)
    ]


def test_the_earliest_change_version_is_the_newest_commit_that_set_tracking() -> None:
    rows = history(
        (0, "CREATE TABLE", "{}"),
        (2, "SET TBLPROPERTIES", '{"properties":"{\\"delta.enableChangeDataFeed\\":\\"true\\"}"}'),
        (3, "WRITE", "{}"),
    )
    detail = {"format": "delta", "id": "t1"}
    latest = {"version": 3, "timestamp": "2026-11-26 10:00:00"}
    on = {"delta.enableChangeDataFeed": "true"}
    state = render("_stream_source_state_of", "s", "app.t", detail, latest, on, rows)
    assert (state["tracked"], state["earliest_change_version"], state["latest_version"]) == (True, 2, 3)
    # On since creation (no commit names it): the oldest commit in the log.
    state = render("_stream_source_state_of", "s", "app.t", detail, latest, on, history((4, "WRITE", "{}")))
    assert state["earliest_change_version"] == 4
    state = render("_stream_source_state_of", "s", "app.t", detail, latest, {}, rows)
    assert (state["tracked"], state["earliest_change_version"]) == (False, None)
    with pytest.raises(StreamError, match=r"Stream s: the source app\.t is a parquet table, not Delta"):
        render("_stream_source_state_of", "s", "app.t", {**detail, "format": "parquet"}, latest, on, rows)


def window(after: int, through: int, **fields: Any) -> dict[str, Any]:
    settings = render("_settings_from_configs", {}, "Stream s", "pyspark")
    base = {"stream": "s", "epoch": 0, "source": "app.t", "source_table_id": "t1", "after": after, "through": through}
    return dict(render("_stream_input", settings, {**base, **fields}))


def commits(*rows: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"version": version, "operation": operation} for version, operation in sorted(rows, reverse=True)]


def test_a_window_ends_before_a_schema_change_and_the_next_starts_at_it() -> None:
    rows = commits((3, "WRITE"), (4, "ADD COLUMNS"), (5, "WRITE"), (6, "CHANGE COLUMN"), (7, "WRITE"))
    parts = render("_stream_window_parts", window(2, 7), "t1", rows)
    assert parts == {"recreated": False, "through": 3, "split": "ADD COLUMNS at version 4", "schema_version": 3}
    parts = render("_stream_window_parts", window(3, 7), "t1", rows[:-1])
    assert parts == {
        "recreated": False,
        "through": 5,
        "split": "CHANGE COLUMN at version 6",
        "schema_change": "ADD COLUMNS at version 4",
        "schema_version": 5,
    }
    parts = render("_stream_window_parts", window(5, 7), "t1", rows[:2])
    assert parts == {"recreated": False, "schema_change": "CHANGE COLUMN at version 6"}


def test_a_recreated_source_is_not_cut() -> None:
    rows = commits((1, "ADD COLUMNS"), (2, "WRITE"))
    assert render("_stream_window_parts", window(0, 2), "t0", rows) == {"recreated": True}
    assert render("_stream_window_parts", window(9, 2), "t1", None) == {"recreated": True}
    assert render("_stream_window_parts", window(2, 2), "t1", None) == {"recreated": False}


def test_a_window_of_appends_alone_is_marked_appends_only() -> None:
    appends = [{"version": v, "operation": "WRITE", "operationParameters": {"mode": "Append"}} for v in (4, 3)]
    assert render("_stream_window_parts", window(2, 4), "t1", appends) == {"recreated": False, "appends_only": True}
    assert render("_stream_window_parts", window(2, 4), "t0", appends) == {"recreated": True}
    overwrite = [{"version": 5, "operation": "WRITE", "operationParameters": {"mode": "Overwrite"}}, *appends]
    assert render("_stream_window_parts", window(2, 5), "t1", overwrite) == {"recreated": False}


def test_a_window_counts_the_files_its_read_opens_from_the_commits_metrics() -> None:
    """_window_files: the files each commit of the window added or removed, its change files and the
    files it gave a deletion vector, from DESCRIBE HISTORY's operationMetrics (a mapping on a local
    session, text over Thrift); none when a version of the window is not listed with them."""
    rows = [
        {
            "version": 6,
            "operation": "DELETE",
            "operationMetrics": {"numDeletionVectorsAdded": "40", "numRemovedFiles": "0"},
        },
        {
            "version": 5,
            "operation": "UPDATE",
            "operationMetrics": "{numAddedFiles=2, numRemovedFiles=1, numAddedChangeFiles=1, numUpdatedRows=9}",
        },
        {"version": 4, "operation": "WRITE", "operationMetrics": {"numFiles": "3", "numOutputRows": "1000"}},
    ]
    assert render("_stream_window_parts", window(3, 6), "t1", rows)["window_files"] == 47
    assert render("_stream_window_parts", window(4, 6), "t1", rows)["window_files"] == 44
    assert "window_files" not in render("_stream_window_parts", window(2, 6), "t1", rows)

"""The types of dbt_tablestream/_documents.py name the keys the package's macros put in each
document, in the macros' order: a key added to a macro and not to its type (or the reverse) fails
here, with no Spark."""

from __future__ import annotations

from typing import Any, get_args

from dbt_tablestream._documents import (
    HistoryEntry,
    OffsetsMode,
    OffsetsRow,
    PendingEntry,
    StreamHealth,
    StreamMode,
    StreamStatus,
)
from dbt_tablestream._macros import render
from dbt_tablestream._offsets import DROPPED, RESET

ROW: dict[str, Any] = {
    "stream_name": "s",
    "epoch": 1,
    "stream_id": "tablestream/s/1",
    "source": "app.t",
    "source_table_id": "id",
    "mode": "standard",
    "from_version": 2,
    "to_version": 3,
    "target": "analytics.m",
    "rows_written": 4,
    "invocation_id": "i",
    "committed_at": "2026-12-04 10:00:00",
}
HEALTH: dict[str, Any] = dict.fromkeys(StreamHealth.__annotations__)


def test_the_status_document_has_the_keys_of_its_type_in_order() -> None:
    document = render("_stream_status_document", {**ROW, "stream_mode": "standard"}, HEALTH)
    assert list(document) == list(StreamStatus.__annotations__)
    assert set(StreamHealth.__annotations__) <= set(document)


def test_the_history_and_pending_entries_have_the_keys_of_their_types_in_order() -> None:
    assert list(render("_stream_history_entry", ROW)) == list(HistoryEntry.__annotations__)
    reason = {"source_version": 5, "reason": "2 commits"}
    assert list(render("_pending_entry", ROW, "m", reason)) == list(PendingEntry.__annotations__)
    assert list(render("_pending_entry", None, "m")) == list(PendingEntry.__annotations__)


def test_an_offsets_row_has_the_log_s_columns_and_its_modes_are_the_spec_s() -> None:
    assert list(OffsetsRow.__annotations__) == render("_offsets_columns", True)
    spec = render("_stream_config_spec")
    assert list(get_args(StreamMode)) == list(spec["stream_mode"]["accepted"])
    assert list(get_args(OffsetsMode)) == [*get_args(StreamMode), RESET, DROPPED]

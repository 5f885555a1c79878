"""The shapes of what the command reads and prints: the offsets log's rows and the documents of the
package's `_stream_status_document`, `_stream_history_entry` and `_pending_entry` macros, which build
them (docs/architecture.md). The macros are the one place a document is made; these types say
what a reader gets, and tests/unit/test_documents.py checks that their keys are the macros'."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypedDict

# _stream_config_spec's `stream_mode`: Snowflake's standard and APPEND_ONLY streams.
StreamMode = Literal["standard", "append_only"]
# An offsets-log row's `mode`: the stream's mode on a run, or what an operation did.
OffsetsMode = Literal["standard", "append_only", "reset", "dropped"]


class OffsetsRow(TypedDict, total=False):
    """One row of `<schema>.tablestream_offsets` as delta-rs reads it (_offsets_columns); `note`
    is in logs where a run has written one."""

    stream_name: str
    epoch: int
    stream_id: str
    source: str
    source_table_id: str | None
    mode: OffsetsMode
    from_version: int | None
    to_version: int | None
    target: str
    rows_written: int | None
    invocation_id: str | None
    committed_at: datetime
    note: str | None


class StreamHealth(TypedDict):
    """stream_health's keys: where the source stands against the stream's offset."""

    offset_time: str | None
    source_version: int | None
    source_time: str | None
    stale: bool | None
    refusal: str | None
    problem: str | None
    at_risk_from: str | None
    at_risk_in_seconds: float | None


class StreamStatus(TypedDict):
    """_stream_status_document: a stream's latest offsets row and its health, with its lag."""

    stream_name: str
    source: str
    stream_mode: StreamMode | None
    epoch: int
    to_version: int | None
    offset_time: str | None
    source_version: int | None
    source_time: str | None
    lag_versions: int | None
    lag_seconds: float | None
    stale: bool | None
    refusal: str | None
    problem: str | None
    at_risk_from: str | None
    at_risk_in_seconds: float | None
    target: str
    committed_at: str | None
    rows_written: int | None
    mode: OffsetsMode
    from_version: int | None
    source_table_id: str | None
    stream_id: str
    invocation_id: str | None


class HistoryEntry(TypedDict):
    """_stream_history_entry: one offsets-log row as `history` reports it."""

    stream_name: str
    epoch: int
    mode: OffsetsMode
    from_version: int | None
    to_version: int | None
    rows_written: int | None
    committed_at: str | None
    invocation_id: str | None


class PendingEntry(TypedDict):
    """_pending_entry: a stream model with work to do, and why."""

    model: str
    selector: str
    stream: str | None
    source: str | None
    offset_version: int | None
    source_version: int | None
    reason: str

"""A realtime writer for lakehouse tables, modelled on the ClickZetta ingestion SDK.

    from dbt_tablestream.ingest import connect, RealtimeOperation, RowOperator

    with connect(warehouse="warehouse") as conn:
        stream = conn.get_realtime_stream("app", "orders", operate=RealtimeOperation.CDC, primary_key=["id"])
        row = stream.create_row(RowOperator.UPSERT)
        row.set_value("id", 1)
        row.set_value("amount", Decimal("9.50"))
        stream.apply(row)
    # leaving the block closes the stream, which flushes what is buffered

Each flushed buffer is one Delta commit, so a table stream on the table sees it as one version.
Nothing starts and nothing is written on import.
"""

from __future__ import annotations

from dbt_tablestream.exceptions import IngestError
from dbt_tablestream.ingest._options import (
    FlushMode,
    RealtimeOperation,
    RealtimeOptions,
    RealtimeOptionsBuilder,
    RetryStatus,
    RowOperator,
)
from dbt_tablestream.ingest._stream import Connection, RealtimeStream, Row, StreamStats, connect
from dbt_tablestream.ingest._targets import PRIMARY_KEY_PROPERTY

__all__ = [
    "PRIMARY_KEY_PROPERTY",
    "Connection",
    "FlushMode",
    "IngestError",
    "RealtimeOperation",
    "RealtimeOptions",
    "RealtimeOptionsBuilder",
    "RealtimeStream",
    "RetryStatus",
    "Row",
    "RowOperator",
    "StreamStats",
    "connect",
]

"""A CDC event source for stream tests: an append-only Delta table of events, and the oracle that
applies them by sequence (README, "CDC event sources")."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

from tests.functional.streams import CDF, StreamBench

EVENTS = pa.schema(
    [("id", pa.int32()), ("op", pa.string()), ("seq", pa.int64()), ("name", pa.string()), ("age", pa.int32())]
)


@dataclass(frozen=True)
class Event:
    id: int
    op: str  # 'c', 'u' or 'd'
    seq: int | None
    name: str | None
    age: int | None

    @property
    def is_delete(self) -> bool:
        return self.op == "d"


def write_events(bench: StreamBench, events: list[Event], name: str = "events") -> None:
    """One commit of events (creating the table, with its change feed, on the first)."""
    table = pa.table({field.name: [getattr(event, field.name) for event in events] for field in EVENTS}, schema=EVENTS)
    path = bench.source_path(name)
    if Path(path).exists():
        write_deltalake(path, table, mode="append")
    else:
        write_deltalake(path, table, configuration=CDF)


def events_model(config: str, source: str = "events") -> str:
    return (
        "{{ config(materialized='stream_merge', unique_key='id', sequence_by='seq', apply_as_deletes=\"op = 'd'\", "
        f"target_exclude_columns=['op']{', ' + config if config else ''}) }}}}\n"
        f"select * from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"
    )


class EventOracle:
    """The target a stream_merge over events should hold: per key, events newer than the one
    applied are applied in sequence order, one window (run) at a time. A delete leaves a
    tombstone; a NULL in an upsert keeps the stored value of the ``ignore_null`` columns. With
    ``ignore_deletes`` (delete_mode ignore) deletes are not events at all."""

    def __init__(self, ignore_null: tuple[str, ...] = (), ignore_deletes: bool = False) -> None:
        self.ignore_null = ignore_null
        self.ignore_deletes = ignore_deletes
        self.rows: dict[int, dict[str, Any]] = {}
        self.applied: dict[int, int] = {}

    def run(self, window: list[Event]) -> None:
        for event in sorted(window, key=lambda event: (event.seq, event.is_delete)):
            assert event.seq is not None
            if event.seq <= self.applied.get(event.id, -1) or (event.is_delete and self.ignore_deletes):
                continue
            self.applied[event.id] = event.seq
            if event.is_delete:
                self.rows.pop(event.id, None)
                continue
            stored = self.rows.get(event.id)
            values = {"name": event.name, "age": event.age}
            if stored is not None:
                values = {
                    column: stored[column] if value is None and column in self.ignore_null else value
                    for column, value in values.items()
                }
            self.rows[event.id] = {"seq": event.seq, **values}

    def tombstones(self) -> set[tuple[int, int]]:
        """(key, sequence) of every key whose newest applied event is a delete."""
        return {(key, seq) for key, seq in self.applied.items() if key not in self.rows}

    def target(self) -> Counter[tuple[Any, ...]]:
        return Counter((key, row["seq"], row["name"], row["age"]) for key, row in self.rows.items())

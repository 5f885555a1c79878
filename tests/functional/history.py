"""SCD type 2 targets for stream tests: the history a stream_merge with `scd_type: 2` should hold,
replayed from the changes a test committed and the commit time of each one's source version
(docs/history.md), and the target as it is."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.functional.local import shared_spark, sql_path
from tests.functional.streams import StreamBench

HISTORY = "materialized='stream_merge', unique_key='id', scd_type=2, start_at='earliest'"
# (id, name, age, dbt_valid_from, dbt_valid_to, dbt_updated_at, dbt_is_deleted): times in epoch
# milliseconds, or the sequence itself with sequence_by.
Version = tuple[Any, ...]


def history_model(config: str = "", source: str = "t") -> str:
    return (
        f"{{{{ config({HISTORY}{', ' + config if config else ''}) }}}}\n"
        f"select * from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"
    )


@dataclass
class _Open:
    values: dict[str, Any]
    valid_from: Any
    updated_at: Any
    deleted: bool = False


class HistoryOracle:
    """Replays events (key, time, is_delete, values) in time order into SCD type 2 versions: a
    change to a tracked column opens a version, a change to the others updates the open one in
    place, a delete closes it (and with ``hard_deletes='new_record'`` opens a deletion record; with
    'ignore' does nothing). Of a key's events at one time only the last counts."""

    def __init__(self, tracked: tuple[str, ...] = ("name", "age"), hard_deletes: str = "invalidate") -> None:
        self.tracked = tracked
        self.hard_deletes = hard_deletes
        self.keys: dict[Any, _Open | None] = {}
        self.closed: list[Version] = []

    def apply(self, key: Any, at: Any, is_delete: bool, values: dict[str, Any]) -> None:
        if is_delete and self.hard_deletes == "ignore":
            return
        state = self.keys.get(key)
        if is_delete:
            if state is None or state.deleted:
                return
            self._close(key, state, at)
            self.keys[key] = _Open(state.values, at, at, deleted=True) if self.hard_deletes == "new_record" else None
            return
        if state is None or state.deleted or any(state.values[c] != values[c] for c in self.tracked):
            if state is not None:
                self._close(key, state, at)
            self.keys[key] = _Open(dict(values), at, at)
            return
        self.keys[key] = replace(state, values=dict(values), updated_at=at)

    def _close(self, key: Any, state: _Open, at: Any) -> None:
        self.closed.append(self._row(key, state, at))

    def _row(self, key: Any, state: _Open, valid_to: Any) -> Version:
        row = (key, state.values["name"], state.values["age"], state.valid_from, valid_to, state.updated_at)
        return (*row, state.deleted) if self.hard_deletes == "new_record" else row

    def versions(self) -> Counter[Version]:
        current = [self._row(key, state, None) for key, state in self.keys.items() if state is not None]
        return Counter(self.closed + current)


@dataclass(frozen=True)
class Committed:
    """A change a test committed to a key: the key's values after it (None: deleted), and the
    source version it landed in. A write of a key's own values is no change (its change rows are
    carry-overs, docs/architecture.md, "Carry-overs, bounded runs and change queries"): tests
    leave it out."""

    key: Any
    version: int
    values: dict[str, Any] | None

    @staticmethod
    def row(key: Any, version: int, row: tuple[str, int] | None) -> Committed:
        """The change that leaves ``key`` with ``row``, its (name, age) (None: deleted)."""
        return Committed(key, version, None if row is None else {"name": row[0], "age": row[1]})


def commit_times(source: Path) -> dict[int, int]:
    """Each version of the source and its commit time as Spark reads it (DESCRIBE HISTORY), in
    epoch milliseconds: the time a change feed's `_commit_timestamp` gives the version."""
    history = shared_spark().sql(f"describe history delta.`{sql_path(source)}`")
    return {row[0]: row[1] for row in history.selectExpr("version", "unix_millis(timestamp)").collect()}


def expected_history(changes: list[Committed], times: dict[int, int], oracle: HistoryOracle) -> Counter[Version]:
    """The history ``changes`` give (docs/history.md): each at its version's commit time, in time
    order; of a key's changes at one time only the last counts. ``oracle`` is a fresh one."""
    last: dict[tuple[Any, int], Committed] = {}
    for change in sorted(changes, key=lambda change: change.version):
        last.pop((change.key, times[change.version]), None)
        last[(change.key, times[change.version])] = change
    for (key, at), change in sorted(last.items(), key=lambda item: (item[0][1], item[1].version)):
        oracle.apply(key, at, change.values is None, change.values or {})
    return oracle.versions()


def history_rows(
    bench: StreamBench, model: str, millis: bool = True, keys: tuple[str, ...] = ("id",)
) -> Counter[Version]:
    """The target's versions as the oracle's tuples, led by the ``keys`` columns (times in epoch
    milliseconds unless ``millis`` is false)."""
    path = bench.target_path(model)
    table = f"delta.`{sql_path(path)}`"
    columns = [row[0] for row in shared_spark().sql(f"select * from {table} limit 0").dtypes]
    time = "unix_millis({})" if millis else "{}"
    selected = [*keys, "name", "age", *(time.format(c) for c in ("dbt_valid_from", "dbt_valid_to", "dbt_updated_at"))]
    if "dbt_is_deleted" in columns:
        selected.append("dbt_is_deleted")
    return Counter(tuple(row) for row in shared_spark().sql(f"select {', '.join(selected)} from {table}").collect())


def scd_ids_unique(bench: StreamBench, model: str) -> bool:
    table = f"delta.`{sql_path(bench.target_path(model))}`"
    row = shared_spark().sql(f"select count(*), count(distinct dbt_scd_id) from {table}").collect()[0]
    return bool(row[0] == row[1])

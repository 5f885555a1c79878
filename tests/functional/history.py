"""SCD type 2 targets for stream tests: the history a stream_merge with `scd_type: 2` should hold,
replayed from the source's change feed (README, "History"), and the target as it is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
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


def feed_changes(source: Path) -> list[dict[str, Any]]:
    """The source's change feed from version 0 to its latest, in commit order, without its
    carry-overs and pre-images; times in epoch milliseconds."""
    table = f"delta.`{sql_path(source)}`"
    end = shared_spark().sql(f"describe history {table} limit 1").collect()[0][0]
    rows = (
        shared_spark()
        .sql(
            f"select *, unix_millis(_commit_timestamp) as at from table_changes('{table}', 0, {end})"
            " order by _commit_version, case when _change_type = 'delete' then 0 else 1 end"
        )
        .collect()
    )
    return [
        change
        for change in without_carryovers([row.asDict() for row in rows])
        if change["_change_type"] != "update_preimage"
    ]


def without_carryovers(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes without rows a commit rewrote unchanged: within a version, an equal pre- and
    post-image, or an equal delete and insert (a rewritten file without change data files reads
    as every row deleted and inserted), cancel one for one."""
    data = [column for column in changes[0] if not column.startswith("_") and column != "at"] if changes else []
    pairs = {
        "update_preimage": ("update", 0),
        "update_postimage": ("update", 1),
        "delete": ("row", 0),
        "insert": ("row", 1),
    }
    sides: dict[tuple[Any, ...], list[list[int]]] = {}
    for index, change in enumerate(changes):
        pair, side = pairs[change["_change_type"]]
        key = (change["_commit_version"], pair, *(change[column] for column in data))
        sides.setdefault(key, [[], []])[side].append(index)
    dropped: set[int] = set()
    for before, after in sides.values():
        cancelled = min(len(before), len(after))
        dropped.update(before[:cancelled], after[:cancelled])
    return [change for index, change in enumerate(changes) if index not in dropped]


def replay_feed(source: Path, oracle: HistoryOracle) -> Counter[Version]:
    """The history the source's change feed gives, replayed into ``oracle`` (a fresh one)."""
    return replay(feed_changes(source), oracle)


def replay(
    changes: list[dict[str, Any]],
    oracle: HistoryOracle,
    key: Callable[[dict[str, Any]], Any] = lambda change: change["id"],
) -> Counter[Version]:
    """``changes`` (from feed_changes) replayed into ``oracle`` (a fresh one), keyed by ``key``."""
    last: dict[tuple[Any, Any], dict[str, Any]] = {}
    for change in changes:  # of a key's changes in one commit time, the last
        last.pop((key(change), change["at"]), None)
        last[(key(change), change["at"])] = change
    for change in sorted(last.values(), key=lambda change: (change["at"], change["_commit_version"])):
        oracle.apply(key(change), change["at"], change["_change_type"] == "delete", change)
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

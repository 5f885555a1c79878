"""Many random histories per dbt invocation: a batch of lanes (CONTRIBUTING.md, "The tests").

A stream model's run on delta-spark costs seconds whatever its window holds (measured here: 2.5 to
3.8 s a model on two cores, and no faster with four dbt threads), so the histories of a property
example share one source and one set of stream models: each history is a lane, with its own keys
(the `lane` column, part of every `unique_key`), its own commits and its own oracle. Every `dbt
run` of the example runs the models once for all lanes, and every lane is checked after every
run. The lanes' changes are written side by side: the n-th change of every lane's part of the
history is in the n-th commit of that part (one MERGE into the source), each lane starting at a
random commit, so a window holds as many commits as one lane's part, not the sum of them (a
window's commits cost a run more than its rows). A lane's rows change only through its own
changes, so a stream that nets or merges by key must give each lane exactly what it would give
that lane alone.

The histories are drawn from one seed per example (``random.Random``): the run's seed for the
first (tests/seeds.py), so every run tries new histories. An example's lanes are those of its own
seed and, beside them, those of seed 0 (``lane_randoms``); a failure names the lane, its seed and
its history.
"""

from __future__ import annotations

import os
import random
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from tests.functional.local import shared_spark, sql_path
from tests.functional.streams import CDF, ROW_TRACKING, StreamBench
from tests.seeds import example_seeds, seeds

# Histories per property example: CI runs one example of each property, 48 histories (CONTRIBUTING.md,
# "The tests"); a window's commits, not its lanes, set a run's cost.
LANES = int(os.environ.get("TABLESTREAM_LANES", "48"))
SEEDS = seeds()
LANE_KEY = "['lane', 'id']"

Row = tuple[int, int, str, int]  # (lane, id, name, age)


@dataclass(frozen=True)
class Change:
    """A lane's change to one of its keys: ``upsert`` (insert, or update the name and age) or ``delete``."""

    kind: str
    lane: int
    id: int
    name: str = ""
    age: int = 0


def lane_random(seed: int, lane: int) -> random.Random:
    """The generator of lane ``lane`` in the example drawn as ``seed``."""
    return random.Random(f"{seed}:{lane}")


def lane_randoms(seed: int, lanes: int = LANES) -> list[random.Random]:
    """The generators of an example's lanes, by lane index: ``lanes`` of each of its seeds
    (example_seeds: its own, then 0)."""
    return [lane_random(each, lane) for each in example_seeds(seed) for lane in range(lanes)]


def lane_origin(seed: int, index: int, lanes: int = LANES) -> str:
    """Where lane ``index`` of the example drawn as ``seed`` comes from, for a failure's message."""
    return f"lane {index % lanes} of seed {example_seeds(seed)[index // lanes]}"


class LaneSource:
    """The keyed source `app.t` of a batch, (lane, id, name, age), one commit per change: written
    by delta-rs for the change feed, by delta-spark for `stream_read: changelog` (row tracking)."""

    SCHEMA = pa.schema([("lane", pa.int32()), ("id", pa.int32()), ("name", pa.string()), ("age", pa.int32())])

    def __init__(self, bench: StreamBench) -> None:
        self.path = bench.source_path()
        self.spark = bench.stream_read == "changelog"
        self.table = f"delta.`{sql_path(Path(self.path))}`"

    def create(self, rows: list[Row]) -> None:
        if self.spark:
            listed = ", ".join(f"'{key}' = '{value}'" for key, value in ROW_TRACKING.items())
            shared_spark().sql(
                f"create table {self.table} (lane int, id int, name string, age int) using delta"
                f" tblproperties ({listed})"
            )
            if rows:
                self.insert(rows)
            return
        write_deltalake(self.path, self._arrow(rows), configuration=CDF)

    def insert(self, rows: list[Row]) -> None:
        self.apply([Change("upsert", *row) for row in rows])

    def apply(self, changes: list[Change]) -> None:
        """The changes (at most one per key) in one commit: a MERGE that deletes, updates and inserts."""
        if self.spark:
            values = ", ".join(
                f"('{change.kind}', {change.lane}, {change.id}, '{change.name}', {change.age})" for change in changes
            )
            shared_spark().sql(
                f"merge into {self.table} t using (select * from values {values} as s(op, lane, id, name, age)) s"
                " on t.lane = s.lane and t.id = s.id"
                " when matched and s.op = 'delete' then delete"
                " when matched then update set name = s.name, age = s.age"
                " when not matched and s.op = 'upsert' then insert (lane, id, name, age)"
                " values (s.lane, s.id, s.name, s.age)"
            )
            return
        source = self._arrow([(change.lane, change.id, change.name, change.age) for change in changes])
        source = source.append_column("op", pa.array([change.kind for change in changes], pa.string()))
        columns = {column: f"s.{column}" for column in ("lane", "id", "name", "age")}
        (
            DeltaTable(self.path)
            .merge(source, "t.lane = s.lane and t.id = s.id", source_alias="s", target_alias="t")
            .when_matched_delete("s.op = 'delete'")
            .when_matched_update({"name": "s.name", "age": "s.age"}, "s.op = 'upsert'")
            .when_not_matched_insert(columns, "s.op = 'upsert'")
            .execute()
        )

    def version(self) -> int:
        return DeltaTable(self.path).version()

    def rows_at(self, version: int) -> list[dict[str, Any]]:
        return DeltaTable(self.path, version=version).to_pyarrow_table().to_pylist()

    def _arrow(self, rows: list[Row]) -> pa.Table:
        return pa.table(
            {field.name: [row[i] for row in rows] for i, field in enumerate(self.SCHEMA)}, schema=self.SCHEMA
        )


class Lane(ABC):
    """One history of a batch: the commits it makes before each run, and its oracle's check of its
    own rows in every target after each run."""

    def __init__(self, index: int, history: Any) -> None:
        self.index = index
        self.history = history

    @property
    @abstractmethod
    def runs(self) -> int:
        """How many dbt runs the history asks for (at least one)."""

    @abstractmethod
    def changes(self, run: int) -> list[Callable[[], Any]]:
        """The changes the history makes before run ``run`` (none once its runs are over), in
        order, each a call made just before its commit: it updates the oracle and returns what
        the source writes (None: the step changes nothing, as a delete of an absent key)."""

    @abstractmethod
    def check(self, run: int, view: BatchView) -> None:
        """After run ``run``: the lane's rows in every target equal its oracle (AssertionError if not)."""


class StepLane(Lane):
    """A lane whose history is a list of steps, ``("run", ...)`` ending each run's part; every
    other step is passed to ``change`` just before its commit."""

    def __init__(self, index: int, history: Any, steps: list[tuple[Any, ...]]) -> None:
        super().__init__(index, history)
        self.parts: list[list[tuple[Any, ...]]] = [[]]
        for step in steps:
            if step[0] == "run":
                self.parts.append([])
            else:
                self.parts[-1].append(step)

    @property
    def runs(self) -> int:
        return len(self.parts)

    def changes(self, run: int) -> list[Callable[[], Any]]:
        if run >= len(self.parts):
            return []
        return [lambda step=step: self.change(*step) for step in self.parts[run]]

    @abstractmethod
    def change(self, *step: Any) -> Any:
        """Updates the oracle with the step; what the source writes for it (None: nothing)."""


class BatchSource(Protocol):
    """The source a batch writes: one commit of the lanes' items, its version, its rows at one."""

    def apply(self, items: list[Any]) -> None: ...

    def version(self) -> int: ...

    def rows_at(self, version: int) -> list[dict[str, Any]]: ...


class BatchView:
    """What one run left, read once for all lanes: the targets' rows, the offsets log, the source
    at a version."""

    def __init__(self, bench: StreamBench, source: BatchSource) -> None:
        self.bench = bench
        self.source = source
        self.latest = source.version()
        self._cache: dict[Any, Any] = {}

    def cached(self, key: Any, read: Callable[[], Any]) -> Any:
        """``read()``, once per run for every lane that asks by ``key``."""
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    def target(self, model: str) -> Counter[tuple[Any, ...]]:
        return self.cached(("target", model), lambda: self.bench.target_rows(model))

    def offsets(self) -> list[dict[str, Any]]:
        return self.cached("offsets", self.bench.offsets)

    def source_at(self, version: int) -> list[dict[str, Any]]:
        return self.cached(("source", version), lambda: self.source.rows_at(version))


def run_batch(
    bench: StreamBench,
    source: BatchSource,
    lanes: Sequence[Lane],
    rng: random.Random,
    *,
    seed: int,
    lane_count: int = LANES,
    before_run: Callable[[int, bool], None] | None = None,
) -> int:
    """Runs the lanes' histories side by side: before run ``r`` the lanes' changes of part ``r``
    are committed (each lane from a random commit on, one change per lane a commit), then one
    `dbt run` runs the models for every lane, then every lane is checked. ``before_run(r,
    changed)`` is called just before the run (a crash needs a change to reach a fault point).
    ``seed`` and ``lane_count`` (lanes per seed) name a failing lane's origin. Returns the number of runs."""
    total = max(lane.runs for lane in lanes)
    for run in range(total):
        queues: list[list[Callable[[], Any]]] = []
        for lane in lanes:
            changes = lane.changes(run)
            queues.append([lambda: None] * rng.randint(0, 2) + changes if changes else [])
        changed = run == 0
        for position in range(max(map(len, queues), default=0)):
            commit = [change for queue in queues if position < len(queue) for change in [queue[position]()] if change]
            if commit:
                source.apply(commit)
                changed = True
        if before_run is not None:
            before_run(run, changed)
        bench.run()
        failures = []
        view = BatchView(bench, source)
        for lane in lanes:
            try:
                lane.check(run, view)
            except AssertionError as failure:
                origin = lane_origin(seed, lane.index, lane_count)
                failures.append(
                    f"lane {lane.index} ({origin}) after run {run}: {failure}\n  its history: {lane.history!r}"
                )
        assert not failures, f"{len(failures)} of {len(lanes)} lanes differ from their oracle:\n" + "\n".join(failures)
    return total


def lose_offsets_rows(bench: StreamBench, streams: Sequence[str], rng: random.Random) -> list[str]:
    """A crash between a run's target commits and its offsets appends, for a random non-empty
    subset of ``streams``: each one's latest offsets row is deleted, so the next run finds the
    stream where it was before that run and applies its window again (the reapply protocol's
    recovery, docs/architecture.md, "Exactly once without session settings"). Returns the streams."""
    latest: dict[str, dict[str, Any]] = {}
    for row in bench.offsets():
        latest[row["stream_name"]] = row
    logged = [stream for stream in streams if stream in latest]
    lost = [stream for stream in logged if rng.random() < 0.75] or logged[:1]
    for stream in lost:
        row = latest[stream]
        shared_spark().sql(
            f"delete from analytics.tablestream_offsets where stream_name = '{stream}'"
            f" and invocation_id = '{row['invocation_id']}' and epoch = {row['epoch']}"
        )
    return lost

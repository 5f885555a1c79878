"""Property: for random histories on a keyed source, after every run
- the stream_merge target equals the source at the run's pinned version (EXCEPT ALL both ways), and
- a keyed table_stream appends exactly the source's net changes over the run's window.

The oracle needs no change feed: a key's net change over a window is decided by its state before
and after the window and whether the window touched it (docs/architecture.md, "The layers").

Each example is a batch of 48 histories, its lanes, run side by side (tests/functional/lanes.py).
Both ways of reading changes (stream_read) are checked; CI runs one example of each. A longer soak:
    TABLESTREAM_PROPERTY_EXAMPLES=8 pytest -m soak tests/functional/test_stream_properties.py
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given

from tests.functional.lanes import (
    LANE_KEY,
    LANES,
    SEEDS,
    BatchView,
    Change,
    LaneSource,
    Row,
    StepLane,
    lane_random,
    run_batch,
)
from tests.functional.streams import StreamBench, property_settings, stream_model

Operation = tuple[str, int, int]
# dbt runs per example: a run of the two models costs 10 to 25 s here whatever the lanes hold.
RUNS = 3
History = tuple[list[tuple[int, int]], list[Operation]]


def random_history(rng: random.Random) -> History:
    """Up to 4 initial rows (keys 0-5), then 1-12 upserts and deletes (half each) spread over
    1-3 runs; the last run may come with no change (an empty window for the lane)."""
    initial = [(key, rng.randint(0, 99)) for key in rng.sample(range(6), rng.randint(0, 4))]
    changes: list[Operation] = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.choice(["upsert", "delete"])
        changes.append((kind, rng.randint(0, 5), rng.randint(0, 99) if kind == "upsert" else 0))
    for _ in range(rng.randint(0, RUNS - 1)):
        changes.insert(rng.randint(0, len(changes)), ("run", 0, 0))
    return initial, changes


def net_changes(before: dict[int, Row], after: dict[int, Row], touched: set[int]) -> Counter[tuple]:
    expected: Counter[tuple] = Counter()
    for key in touched:
        old, new = before.get(key), after.get(key)
        if old and new:
            expected[(*old, "UPDATE_BEFORE")] += 1
            expected[(*new, "UPDATE_AFTER")] += 1
        elif new:
            expected[(*new, "INSERT")] += 1
        elif old:
            expected[(*old, "DELETE")] += 1
    return expected


MODELS = {
    "current": (
        f"{{{{ config(materialized='stream_merge', unique_key={LANE_KEY}) }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    "changes": stream_model(f"unique_key={LANE_KEY}"),
}
STREAMS = {"current__app_t", "changes__app_t"}


class KeyedLane(StepLane):
    """Upserts and deletes of the lane's keys; the oracle of the stream_merge mirror and of the
    keyed change log."""

    def __init__(self, index: int, history: History) -> None:
        initial, operations = history
        super().__init__(index, history, operations)
        self.initial: list[Row] = [(index, key, f"n{key}", age) for key, age in initial]
        self.present = {key for key, _ in initial}
        self.pinned: int | None = None
        self.touched: set[int] = set()
        self.log_before: Counter[tuple] = Counter()
        self.serial = 0

    def change(self, kind: str, key: int, age: int) -> Change | None:
        self.serial += 1
        if kind == "upsert":
            name = f"u{self.serial}" if key in self.present else f"i{self.serial}"
            self.present.add(key)
            self.touched.add(key)
            return Change("upsert", self.index, key, name, age)
        if key not in self.present:
            return None
        self.present.discard(key)
        self.touched.add(key)
        return Change("delete", self.index, key)

    def state(self, view: BatchView, version: int) -> dict[int, Row]:
        return {
            row["id"]: (row["lane"], row["id"], row["name"], row["age"])
            for row in view.source_at(version)
            if row["lane"] == self.index
        }

    def mine(self, rows: Counter[tuple]) -> Counter[tuple]:
        return Counter({row: count for row, count in rows.items() if row[0] == self.index})

    def check(self, run: int, view: BatchView) -> None:
        latest = view.latest
        reached = {row["stream_name"] for row in view.offsets() if row["to_version"] == latest}
        assert reached >= STREAMS, f"offsets at the latest version {latest}: {sorted(reached)}"
        now = self.state(view, latest)
        target = Counter(row[:4] for row in self.mine(view.target("current")).elements())
        assert target == Counter(now.values()), (
            f"stream_merge: only in the target {target - Counter(now.values())},"
            f" only in the source {Counter(now.values()) - target}"
        )
        log = self.mine(view.target("changes"))
        appended = log - self.log_before
        assert not (self.log_before - log), "the change log lost rows"
        if self.pinned is None:  # first run: start_at snapshot, every row as an INSERT
            expected = Counter((*row, "INSERT") for row in now.values())
        else:
            expected = net_changes(self.state(view, self.pinned), now, self.touched)
        assert appended == expected, (
            f"table_stream over ({self.pinned}, {latest}] touching keys {sorted(self.touched)}:"
            f" appended {dict(appended)}, expected {dict(expected)}"
        )
        self.pinned, self.touched, self.log_before = latest, set(), log


def check_batch(seed: int, stream_read: str = "table_changes", lanes: int = LANES) -> None:
    with tempfile.TemporaryDirectory() as directory:
        bench = StreamBench(Path(directory), MODELS, stream_read=stream_read)
        source = LaneSource(bench)
        batch = [KeyedLane(lane, random_history(lane_random(seed, lane))) for lane in range(lanes)]
        source.create([row for lane in batch for row in lane.initial])
        run_batch(bench, source, batch, random.Random(seed))


PROPERTY_SETTINGS = property_settings(1)


@PROPERTY_SETTINGS
@given(seed=SEEDS)
def test_random_histories_merge_and_log_exactly(seed: int) -> None:
    check_batch(seed)


@PROPERTY_SETTINGS
@given(seed=SEEDS)
def test_random_histories_read_through_changes_merge_and_log_exactly(seed: int) -> None:
    """The same oracle with stream_read: changelog (Delta's changelog over row tracking)."""
    check_batch(seed, stream_read="changelog")


@pytest.mark.soak
@pytest.mark.parametrize("stream_read", ["table_changes", "changelog"])
@property_settings(8)
@given(seed=SEEDS)
def test_random_histories_soak(seed: int, stream_read: str) -> None:
    check_batch(seed, stream_read=stream_read)

"""Property: for random histories on a keyed source, after every run
- the stream_merge target equals the source at the run's pinned version (EXCEPT ALL both ways),
- a keyed table_stream appends exactly the source's net changes over the run's window, and
- the stream_aggregate target equals its GROUP BY over the source at that version.

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
    lane_randoms,
    lose_offsets_rows,
    run_batch,
)
from tests.functional.local import local_profile
from tests.functional.streams import StreamBench, assert_no_refused_setting, property_settings, stream_model

Operation = tuple[str, int, int]
# dbt runs per example: a run of the two models costs 10 to 25 s here whatever the lanes hold.
RUNS = 3
History = tuple[list[tuple[int, int]], list[Operation]]


def random_history(rng: random.Random, every_run: bool = False) -> History:
    """Up to 4 initial rows (keys 0-5), then 1-12 upserts and deletes (half each) spread over
    1-3 runs; the last run may come with no change (an empty window for the lane). With
    ``every_run``, 4-12 changes over all 3 runs: a window applied again after a lost offsets row
    (before the last run) then often holds a key its first application inserted and the next
    window deletes."""
    initial = [(key, rng.randint(0, 99)) for key in rng.sample(range(6), rng.randint(0, 4))]
    changes: list[Operation] = []
    for _ in range(rng.randint(4 if every_run else 1, 12)):
        kind = rng.choice(["upsert", "delete"])
        changes.append((kind, rng.randint(0, 5), rng.randint(0, 99) if kind == "upsert" else 0))
    for _ in range(RUNS - 1 if every_run else rng.randint(0, RUNS - 1)):
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


# A stream_aggregate over the lanes (docs/stream-aggregate.md): per lane a NULL group and three
# others, which updates move rows between, a filter they move rows in and out of, and NULLs in an
# aggregated column; the lanes' few keys empty and refill groups and remove their extremes.
TOTALS = (
    "{{ config(materialized='stream_aggregate', group_by=['lane', 'band'], aggregates={'n': 'count(*)',"
    " 'parts': 'count(part)', 'total': 'sum(part)', 'mean': 'avg(part)', 'low': 'min(age)', 'high': 'max(age)',"
    " 'first': 'min(name)', 'last': 'max(name)'}) }}\n"
    "select lane, case when age % 4 = 0 then null else age % 3 end as band, nullif(age % 5, 0) as part, age, name,"
    " __change_type\nfrom {{ dbt_tablestream.source_stream('app', 't') }}\nwhere age % 7 <> 0"
)


def expected_totals(rows: list[Row]) -> Counter[tuple]:
    """TOTALS' GROUP BY, computed from the source's rows."""
    groups: dict[tuple, list[Row]] = {}
    for row in rows:
        lane, _, _, age = row
        if age % 7:
            groups.setdefault((lane, None if age % 4 == 0 else age % 3), []).append(row)
    totals: Counter[tuple] = Counter()
    for group, members in groups.items():
        parts = [age % 5 for _, _, _, age in members if age % 5]
        ages = [age for _, _, _, age in members]
        names = [name for _, _, name, _ in members]
        mean = sum(parts) / len(parts) if parts else None
        totals[
            (
                *group,
                len(members),
                len(parts),
                sum(parts) if parts else None,
                mean,
                min(ages),
                max(ages),
                min(names),
                max(names),
            )
        ] += 1
    return totals


MODELS = {
    "current": (
        f"{{{{ config(materialized='stream_merge', unique_key={LANE_KEY}) }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    # The mirror written by MERGE (merge_write merge): "current", on a target of one file, is
    # rewritten from itself (merge_write auto, _stream_net_write_choice).
    "merged": (
        f"{{{{ config(materialized='stream_merge', unique_key={LANE_KEY}, merge_write='merge') }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    "changes": stream_model(f"unique_key={LANE_KEY}"),
    # The mirror written by replacing each window's keys (merge_write replace_where), which takes
    # a key of one column.
    "replaced": (
        "{{ config(materialized='stream_merge', unique_key='uid', merge_write='replace_where') }}\n"
        "select *, lane * 100 + id as uid from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    "totals": TOTALS,
}
# On an emulated SQL warehouse (the reapply protocol) a keyed table_stream appends every change
# row: its net changes cannot be re-applied exactly (docs/architecture.md).
WAREHOUSE_MODELS = {
    "current": MODELS["current"],
    "merged": MODELS["merged"],
    "changes": stream_model(
        f"unique_key={LANE_KEY}, net_changes=false", columns="lane, id, name, age, __change_type, __commit_version"
    ),
    "soft": MODELS["current"].replace(")", ", delete_mode='soft')", 1),
    "kept": MODELS["current"].replace(")", ", delete_mode='ignore')", 1),
    "replaced": MODELS["replaced"],
    "totals": TOTALS,
}
STREAMS = {"current__app_t", "merged__app_t", "changes__app_t", "replaced__app_t", "totals__app_t"}
WAREHOUSE_STREAMS = {f"{model}__app_t" for model in WAREHOUSE_MODELS}


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

    def expected_log(self, view: BatchView, now: dict[int, Row]) -> Counter[tuple]:
        if self.pinned is None:  # first run: start_at snapshot, every row as an INSERT
            return Counter((*row, "INSERT") for row in now.values())
        return net_changes(self.state(view, self.pinned), now, self.touched)

    def logged(self, rows: Counter[tuple]) -> Counter[tuple]:
        return rows

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
        for model in ("current", "merged", "replaced"):
            target = Counter(row[:4] for row in self.mine(view.target(model)).elements())
            assert target == Counter(now.values()), (
                f"stream_merge {model}: only in the target {target - Counter(now.values())},"
                f" only in the source {Counter(now.values()) - target}"
            )
        totals = Counter(row[:10] for row in self.mine(view.target("totals")).elements())
        expected_groups = expected_totals(list(now.values()))
        assert totals == expected_groups, (
            f"stream_aggregate: only in the target {totals - expected_groups}, only in the GROUP BY {expected_groups - totals}"
        )
        log = self.mine(view.target("changes"))
        appended = log - self.log_before
        assert not (self.log_before - log), "the change log lost rows"
        expected = self.expected_log(view, now)
        appended = self.logged(appended)
        assert appended == expected, (
            f"table_stream over ({self.pinned}, {latest}] touching keys {sorted(self.touched)}:"
            f" appended {dict(appended)}, expected {dict(expected)}"
        )
        self.pinned, self.touched, self.log_before = latest, set(), log


class EveryChangeLane(KeyedLane):
    """The keyed lane on an emulated SQL warehouse: its table_stream appends every change row
    (with the version it was read at), each exactly once even when a lost offsets row has the next
    run apply a window again."""

    def __init__(self, index: int, history: History) -> None:
        super().__init__(index, history)
        self.values: dict[int, Row] = {row[1]: row for row in self.initial}
        self.rows: Counter[tuple] = Counter()
        # The delete modes' targets: every key there at some run, as that run left it; soft marks
        # the ones gone since (_deleted), ignore keeps them as they were.
        self.soft: dict[int, tuple] = {}
        self.kept: dict[int, Row] = {}

    def check(self, run: int, view: BatchView) -> None:
        now = self.state(view, view.latest)
        for key, row in self.soft.items():
            if key not in now:
                self.soft[key] = (*row[:4], True)
        for key, row in now.items():
            self.soft[key] = (*row, False)
            self.kept[key] = row
        for model, expected in (("soft", Counter(self.soft.values())), ("kept", Counter(self.kept.values()))):
            target = Counter(row[: 5 if model == "soft" else 4] for row in self.mine(view.target(model)).elements())
            assert target == expected, (
                f"{model}: only in the target {target - expected}, only in the oracle {expected - target}"
            )
        super().check(run, view)

    def change(self, kind: str, key: int, age: int) -> Change | None:
        old = self.values.get(key)
        change = super().change(kind, key, age)
        if change is None:
            return None
        if kind == "delete":
            assert old is not None
            del self.values[key]
            self.rows[(*old, "DELETE")] += 1
            return change
        new = (self.index, key, change.name, change.age)
        self.values[key] = new
        self.rows.update([(*old, "UPDATE_BEFORE"), (*new, "UPDATE_AFTER")] if old else [(*new, "INSERT")])
        return change

    def expected_log(self, view: BatchView, now: dict[int, Row]) -> Counter[tuple]:
        if self.pinned is None:
            self.rows = Counter()
            return Counter((*row, "INSERT") for row in now.values())
        expected, self.rows = self.rows, Counter()
        return expected

    def logged(self, rows: Counter[tuple]) -> Counter[tuple]:
        return Counter(row[:5] for row in rows.elements())


def check_batch(seed: int, stream_read: str = "table_changes", lanes: int = LANES, sql_warehouse: bool = False) -> None:
    """One example: ``lanes`` random histories on one source. With ``sql_warehouse`` dbt runs on
    an emulated SQL warehouse (the reapply protocol), and before the last run a random half of the
    streams lose their offsets row of the run before, as a crash between its target commit and its
    offsets append leaves them."""
    with tempfile.TemporaryDirectory() as directory:
        warehouse = Path(directory) / "warehouse"
        bench = StreamBench(
            Path(directory),
            WAREHOUSE_MODELS if sql_warehouse else MODELS,
            stream_read=stream_read,
            profile=local_profile(warehouse, emulate_sql_warehouse=True) if sql_warehouse else None,
        )
        source = LaneSource(bench)
        lane_type = EveryChangeLane if sql_warehouse else KeyedLane
        batch = [
            lane_type(index, random_history(rng, sql_warehouse)) for index, rng in enumerate(lane_randoms(seed, lanes))
        ]
        source.create([row for lane in batch for row in lane.initial])
        rng = random.Random(seed)

        def lose(run: int, changed: bool) -> None:
            # Not the first run's rows: losing those makes the next run a first run, a rebuild.
            if sql_warehouse and run >= 2:
                lose_offsets_rows(bench, sorted(WAREHOUSE_STREAMS), rng)

        run_batch(bench, source, batch, rng, seed=seed, lane_count=lanes, before_run=lose)
        if sql_warehouse:
            assert_no_refused_setting(warehouse)


PROPERTY_SETTINGS = property_settings(1)


@PROPERTY_SETTINGS
@given(seed=SEEDS)
def test_random_histories_on_a_sql_warehouse_merge_and_log_exactly(seed: int) -> None:
    """On an emulated SQL warehouse: no session setting, and lost offsets rows re-apply windows."""
    check_batch(seed, sql_warehouse=True)


@PROPERTY_SETTINGS
@given(seed=SEEDS)
def test_random_histories_read_through_changes_merge_and_log_exactly(seed: int) -> None:
    """The same oracle with stream_read: changelog (Delta's changelog over row tracking), which
    needs a session setting: on a cluster, with the marked protocol."""
    check_batch(seed, stream_read="changelog")


@pytest.mark.soak
@pytest.mark.parametrize(
    ("stream_read", "sql_warehouse"), [("table_changes", False), ("table_changes", True), ("changelog", False)]
)
@property_settings(8)
@given(seed=SEEDS)
def test_random_histories_soak(seed: int, stream_read: str, sql_warehouse: bool) -> None:
    check_batch(seed, stream_read=stream_read, sql_warehouse=sql_warehouse)

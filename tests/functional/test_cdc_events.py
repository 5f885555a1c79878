"""stream_merge over a CDC event source: sequence_by, apply_as_deletes, ignore_null_updates,
target_exclude_columns, tombstones; the refusals; a property test against the oracle; crashes.

The property test runs one example of 48 histories in CI (tests/functional/lanes.py); the soaks,
longer and with SIGKILLs at random steps of the commit protocol:
    TABLESTREAM_PROPERTY_EXAMPLES=8 pytest -m soak tests/functional/test_cdc_events.py -k "not crashes"
    pytest -m soak tests/functional/test_cdc_events.py -k crashes
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import given

from tests.functional.events import EVENTS, Event, EventOracle, events_model, write_events
from tests.functional.lanes import LANE_KEY, LANES, SEEDS, BatchView, Lane, lane_randoms, lose_offsets_rows, run_batch
from tests.functional.local import local_profile
from tests.functional.streams import CDF, StreamBench, assert_no_refused_setting, property_settings


def events_bench(tmp_path: Path, models: dict[str, str], **options: object) -> StreamBench:
    return StreamBench(tmp_path, models, sources=("events",), **options)  # type: ignore[arg-type]


@pytest.mark.scenarios
def test_events_apply_by_sequence_late_and_duplicate_events_change_nothing(tmp_path: Path) -> None:
    """Two windows of events, the first run building each target and the second merging, checked
    against the oracle for every delete_mode and for ignore_null_updates. (Crashes: the soak.)"""
    bench = events_bench(
        tmp_path,
        {
            "current": events_model(""),
            "partial": events_model("ignore_null_updates=true"),
            "soft": events_model("delete_mode='soft'"),
            "kept": events_model("delete_mode='ignore'"),
        },
    )
    windows = [
        # Out of order inside a commit; keys 3 and 5 created and deleted (key 3's delete first),
        # so the first run records their tombstones.
        [
            Event(1, "c", 1, "a", 10),
            Event(1, "u", 3, "a3", 13),
            Event(1, "u", 2, "a2", 12),
            Event(2, "c", 1, "b", 20),
            Event(3, "d", 6, None, None),
            Event(3, "c", 5, "c", 30),
            Event(5, "c", 1, "e", 50),
            Event(5, "d", 2, None, None),
        ],
        # Late: key 1's seq 2 is below its applied 3; key 3's seq 4 is below its delete (6), so it
        # stays deleted. A redelivered duplicate, a partial update of key 1, a delete of key 2, and
        # key 5 back with a sequence newer than its tombstone.
        [
            Event(1, "u", 2, "late", 0),
            Event(3, "u", 4, "zombie", 0),
            Event(2, "c", 1, "b", 20),
            Event(1, "u", 4, None, 14),
            Event(2, "d", 2, None, None),
            Event(5, "c", 3, "e3", 53),
        ],
    ]
    oracles = {
        "current": EventOracle(),
        "partial": EventOracle(ignore_null=("name", "age")),
        "soft": EventOracle(),
        "kept": EventOracle(ignore_deletes=True),
    }
    for window in windows:
        write_events(bench, window)
        bench.run()
        for model, oracle in oracles.items():
            oracle.run(window)
            rows = bench.target_rows(model)
            if model == "soft":  # the live rows, and the soft-deleted rows are the tombstones
                assert {(row[0], row[1]) for row in rows if row[4]} == oracle.tombstones(), (window, rows)
                rows = Counter({row[:4]: count for row, count in rows.items() if not row[4]})
            assert rows == oracle.target(), (model, window)
    assert bench.target_rows("current") == Counter({(1, 4, None, 14): 1, (5, 3, "e3", 53): 1})
    assert bench.target_rows("partial") == Counter({(1, 4, "a3", 14): 1, (5, 3, "e3", 53): 1})
    assert bench.target_rows("kept") == Counter(
        {(1, 4, None, 14): 1, (2, 1, "b", 20): 1, (3, 5, "c", 30): 1, (5, 3, "e3", 53): 1}
    )
    # The hard-delete model's tombstones live beside its target, not in it.
    tombstones = DeltaTable(str(bench.target_path("current__tablestream_tombstones"))).to_pyarrow_table().to_pylist()
    assert {(row["id"], row["seq"]) for row in tombstones} == {(2, 2), (3, 6), (5, 2)}


def test_event_refusals_name_the_stream_and_write_nothing(tmp_path: Path) -> None:
    bench = events_bench(
        tmp_path,
        {
            "current": events_model(""),
            "misspelt": events_model("").replace("op = 'd'", "opp = 'd' or `age` < 0"),
            "bad_nulls": events_model("ignore_null_updates='yes'"),
            "bad_retention": events_model("tombstone_retention='a week'"),
            "no_sequence": (
                "{{ config(materialized='stream_merge', unique_key='id', apply_as_deletes=\"op = 'd'\") }}\n"
                "select * from {{ dbt_tablestream.source_stream('app', 'events') }}"
            ),
            "no_seq_column": events_model("").replace("select *", "select id, op, name, age, __change_type"),
            "stream_seq": events_model("").replace("sequence_by='seq'", "sequence_by=['seq', '__commit_version']"),
        },
    )
    write_events(bench, [Event(1, "c", 1, "a", 10)])
    bench.run("-s", "current")
    write_events(bench, [Event(1, "u", None, "x", 11), Event(2, "c", 2, "b", 20)])
    bench.refused(
        "current",
        "Stream current__app_events",
        "app.events",
        "1 events",
        "NULL sequence_by column seq",
        "nothing was written",
    )
    bench.refused("misspelt", "Stream misspelt__app_events", "apply_as_deletes names opp", "Nothing was written")
    bench.refused(
        "bad_nulls",
        "ignore_null_updates must be true (every column), false, or a non-empty list of column names, got yes.",
    )
    bench.refused(
        "bad_retention",
        "tombstone_retention must be a whole number of days, hours or minutes, such as '36 hours', got a week.",
    )
    bench.refused("no_sequence", "apply_as_deletes order events by their sequence", "sequence_by")
    bench.refused("stream_seq", "sequence_by lists the stream column(s) __commit_version", "as commit_seq")
    bench.refused("no_seq_column", "Stream no_seq_column__app_events", "lacks seq", "sequence_by columns (seq)")


# --- property: random event histories against the oracle ------------------------------------------

# An event's lateness: most arrive in order; a quarter arrive 1-4 places late.
DELAYS = [0, 0, 0, 1, 2, 4]
STEPS = ["event", "event", "event", "duplicate", "commit", "run"]
EventRuns = list[list[list[Event]]]  # runs, each of commits, each of events in arrival order


def random_event_history(rng: random.Random) -> EventRuns:
    """3-24 steps over keys 0-3: events (c, u, u, d; a value NULL a third of the time), a
    redelivered duplicate, a commit or a run between them; sequences are distinct except for the
    duplicates, and events arrive up to 4 places late. At most 3 runs (RUNS)."""
    arrivals: list[tuple[int, str, Event | None]] = []  # (position, kind, event)
    sent: list[Event] = []
    runs = 1
    for position in range(rng.randint(3, 24)):
        kind = rng.choice(STEPS)
        if kind == "run" and runs == RUNS:
            kind = "commit"
        if kind in ("event", "duplicate") and (kind == "event" or not sent):
            op = rng.choice(["c", "u", "u", "d"])
            name, age = (None if rng.random() < 1 / 3 else rng.randint(0, 9) for _ in range(2))
            value = None if op == "d" else f"n{name}" if name is not None else None
            event = Event(rng.randint(0, 3), op, position + 1, value, None if op == "d" else age)
            sent.append(event)
            arrivals.append((position + rng.choice(DELAYS), "event", event))
        elif kind == "duplicate":
            arrivals.append((position, "event", rng.choice(sent)))
        else:
            runs += kind == "run"
            arrivals.append((position, kind, None))
    history: EventRuns = [[[]]]
    for _, kind, event in sorted(arrivals, key=lambda arrival: arrival[0]):
        if kind == "event":
            history[-1][-1].append(event)  # type: ignore[arg-type]
        elif kind == "commit":
            history[-1].append([])
        else:
            history.append([[]])
    return history


RUNS = 3
LANE_EVENTS = pa.schema([("lane", pa.int32()), *EVENTS])
EVENT_MODELS = {
    "current": events_model("").replace("unique_key='id'", f"unique_key={LANE_KEY}"),
    "partial": events_model("ignore_null_updates=['name']").replace("unique_key='id'", f"unique_key={LANE_KEY}"),
}


class EventSource:
    """The batch's append-only event table `app.events`: (lane, id, op, seq, name, age)."""

    def __init__(self, bench: StreamBench) -> None:
        self.path = bench.source_path("events")
        write_deltalake(self.path, LANE_EVENTS.empty_table(), configuration=CDF)

    def apply(self, commits: list[list[tuple[int, Event]]]) -> None:
        events = [event for commit in commits for event in commit]
        columns = {"lane": [lane for lane, _ in events]}
        columns.update({field.name: [getattr(event, field.name) for _, event in events] for field in EVENTS})
        write_deltalake(self.path, pa.table(columns, schema=LANE_EVENTS), mode="append")

    def version(self) -> int:
        return DeltaTable(self.path).version()

    def rows_at(self, version: int) -> list[dict[str, object]]:
        return DeltaTable(self.path, version=version).to_pyarrow_table().to_pylist()


class EventLane(Lane):
    """A lane's events, commits and runs; the oracle of each model applying its events by sequence."""

    def __init__(self, index: int, history: EventRuns) -> None:
        super().__init__(index, history)
        self.oracles = {"current": EventOracle(), "partial": EventOracle(ignore_null=("name",))}

    @property
    def runs(self) -> int:
        return len(self.history)

    def changes(self, run: int) -> list[Callable[[], list[tuple[int, Event]] | None]]:
        if run >= len(self.history):
            return []
        return [lambda commit=commit: [(self.index, event) for event in commit] or None for commit in self.history[run]]

    def check(self, run: int, view: BatchView) -> None:
        window = [event for commit in self.history[run] for event in commit] if run < len(self.history) else []
        for model, oracle in self.oracles.items():
            oracle.run(window)
            rows = Counter({row[1:]: count for row, count in view.target(model).items() if row[0] == self.index})
            assert rows == oracle.target(), f"{model}: target {dict(rows)}, oracle {dict(oracle.target())}"


def check_event_batch(
    seed: int, lanes: int = LANES, crashes: list[str | None] | None = None, sql_warehouse: bool = False
) -> None:
    """Every run's targets equal the lanes' oracles; with ``crashes``, run i is first SIGKILLed at
    crashes[i] (a fault point of the commit protocol, or None for no crash) in the model current.
    With ``sql_warehouse`` dbt runs on an emulated SQL warehouse (the reapply protocol) and,
    without crashes, a random subset of the models loses its offsets row of the run before the
    last, so that run applies a window again."""
    with tempfile.TemporaryDirectory() as directory:
        warehouse = Path(directory) / "warehouse"
        profile = local_profile(warehouse, emulate_sql_warehouse=True) if sql_warehouse else None
        bench = events_bench(Path(directory), EVENT_MODELS, processes=crashes is not None, profile=profile)
        source = EventSource(bench)
        batch = [EventLane(index, random_event_history(rng)) for index, rng in enumerate(lane_randoms(seed, lanes))]
        rng = random.Random(seed)

        def crash(run: int, changed: bool) -> None:
            point = crashes[run % len(crashes)] if crashes and changed else None
            if point:  # an empty window writes nothing, so it reaches no fault point
                bench.crash(f"{point}@current")
            elif sql_warehouse and not crashes and run >= 2:
                lose_offsets_rows(bench, sorted(f"{model}__app_events" for model in EVENT_MODELS), rng)

        run_batch(bench, source, batch, rng, seed=seed, lane_count=lanes, before_run=crash)
        if sql_warehouse:
            assert_no_refused_setting(warehouse)


PROPERTY_SETTINGS = property_settings(1)


@PROPERTY_SETTINGS
@given(seed=SEEDS)
def test_random_event_histories_on_a_sql_warehouse_apply_the_newest_event_per_key(seed: int) -> None:
    """On an emulated SQL warehouse (the reapply protocol), where a lost offsets row has a window
    applied again. The events' SQL is the same under the marked protocol, which the soak runs."""
    check_event_batch(seed, sql_warehouse=True)


@pytest.mark.soak
@pytest.mark.parametrize("sql_warehouse", [False, True])
@property_settings(8)
@given(seed=SEEDS)
def test_random_event_histories_soak(seed: int, sql_warehouse: bool) -> None:
    check_event_batch(seed, sql_warehouse=sql_warehouse)


CRASH_POINTS = [None, "window_pinned", "before_target_commit", "after_target_commit", "after_offsets_append"]


@pytest.mark.soak
@pytest.mark.parametrize("sql_warehouse", [False, True])
@property_settings(4)
@given(seed=SEEDS)
def test_random_event_histories_with_crashes_soak(seed: int, sql_warehouse: bool) -> None:
    """The oracle holds when runs are SIGKILLed at random steps of the commit protocol and rerun."""
    rng = random.Random(seed)
    check_event_batch(seed, crashes=[rng.choice(CRASH_POINTS) for _ in range(RUNS)], sql_warehouse=sql_warehouse)

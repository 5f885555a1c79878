"""stream_merge over a CDC event source: sequence_by, apply_as_deletes, ignore_null_updates,
target_exclude_columns, tombstones; the refusals; a property test against the oracle; crashes.

The property test runs a bounded number of examples; the soaks, longer and with SIGKILLs at random
steps of the commit protocol:
    TABLESTREAM_PROPERTY_EXAMPLES=100 pytest -m soak tests/functional/test_cdc_events.py -k "not crashes"
    pytest -m soak tests/functional/test_cdc_events.py -k crashes
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from deltalake import DeltaTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.functional.events import Event, EventOracle, events_model, write_events
from tests.functional.streams import StreamBench, property_settings


def events_bench(tmp_path: Path, models: dict[str, str], **options: object) -> StreamBench:
    return StreamBench(tmp_path, models, sources=("events",), **options)  # type: ignore[arg-type]


@pytest.mark.extended
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
    bench.refused("bad_nulls", "invalid ignore_null_updates yes", "Accepted values: true")
    bench.refused("bad_retention", "invalid tombstone_retention 'a week'", "Accepted values")
    bench.refused("no_sequence", "apply_as_deletes order events by their sequence", "sequence_by")
    bench.refused("stream_seq", "sequence_by lists the stream column(s) __commit_version", "as commit_seq")
    bench.refused("no_seq_column", "Stream no_seq_column__app_events", "lacks seq", "sequence_by columns (seq)")


# --- property: random event histories against the oracle ------------------------------------------

KEYS = st.integers(min_value=0, max_value=3)
VALUE = st.one_of(st.none(), st.integers(min_value=0, max_value=9))
EVENT = st.tuples(KEYS, st.sampled_from(["c", "u", "u", "d"]), VALUE, VALUE)
# An event's lateness: most arrive in order; a quarter arrive 1-4 places late.
DELAY = st.sampled_from([0, 0, 0, 1, 2, 4])
STEP = st.sampled_from(["event", "event", "event", "duplicate", "commit", "run"])


@st.composite
def event_histories(draw: st.DrawFn) -> list[list[list[Event]]]:
    """Runs, each of commits, each of events in arrival order; sequences are distinct except
    for redelivered duplicates."""
    steps = draw(st.lists(st.tuples(STEP, EVENT, DELAY), min_size=3, max_size=24))
    arrivals: list[tuple[int, str, Event | None]] = []  # (position, kind, event)
    sent: list[Event] = []
    for position, (kind, (key, op, name, age), delay) in enumerate(steps):
        if kind in ("event", "duplicate") and (kind == "event" or not sent):
            value = None if op == "d" else f"n{name}" if name is not None else None
            event = Event(key, op, position + 1, value, None if op == "d" else age)
            sent.append(event)
            arrivals.append((position + delay, "event", event))
        elif kind == "duplicate":
            arrivals.append((position, "event", sent[draw(st.integers(0, len(sent) - 1))]))
        else:
            arrivals.append((position, kind, None))
    runs: list[list[list[Event]]] = [[[]]]
    for _, kind, event in sorted(arrivals, key=lambda arrival: arrival[0]):
        if kind == "event":
            runs[-1][-1].append(event)  # type: ignore[arg-type]
        elif kind == "commit":
            runs[-1].append([])
        else:
            runs.append([[]])
    return runs


def check_event_history(runs: list[list[list[Event]]], crashes: list[str | None] | None = None) -> None:
    """Every run's target equals the oracle's; with ``crashes``, run i is first SIGKILLed at
    crashes[i] (a fault point of the commit protocol, or None for no crash)."""
    with tempfile.TemporaryDirectory() as directory:
        bench = events_bench(
            Path(directory),
            {"current": events_model(""), "partial": events_model("ignore_null_updates=['name']")},
            processes=crashes is not None,
        )
        oracles = {"current": EventOracle(), "partial": EventOracle(ignore_null=("name",))}
        written = False
        for index, commits in enumerate(runs):
            window = [event for commit in commits for event in commit]
            for commit in commits:
                if commit:
                    write_events(bench, commit)
                    written = True
            if not written:
                continue
            # An empty window writes nothing, so it reaches no fault point.
            crash = crashes[index % len(crashes)] if crashes and window else None
            if crash:
                bench.crash(crash, "run", "-s", "current")
            bench.run()
            for model, oracle in oracles.items():
                oracle.run(window)
                assert bench.target_rows(model) == oracle.target(), (model, runs, crash)


PROPERTY_SETTINGS = property_settings(2)
EXAMPLES = PROPERTY_SETTINGS.max_examples


@PROPERTY_SETTINGS
@given(runs=event_histories())
def test_random_event_histories_apply_the_newest_event_per_key(runs: list[list[list[Event]]]) -> None:
    check_event_history(runs)


@pytest.mark.soak
@settings(max_examples=max(EXAMPLES, 100), deadline=None, suppress_health_check=list(HealthCheck))
@given(runs=event_histories())
def test_random_event_histories_soak(runs: list[list[list[Event]]]) -> None:
    check_event_history(runs)


CRASH_POINT = st.sampled_from([None, "before_target_commit", "after_target_commit", "after_offsets_append"])


@pytest.mark.soak
@settings(max_examples=max(EXAMPLES, 8), deadline=None, suppress_health_check=list(HealthCheck))
@given(runs=event_histories(), crashes=st.lists(CRASH_POINT, min_size=1, max_size=6))
def test_random_event_histories_with_crashes_soak(runs: list[list[list[Event]]], crashes: list[str | None]) -> None:
    """The oracle holds when runs are SIGKILLed at random steps of the commit protocol and rerun."""
    check_event_history(runs, crashes)

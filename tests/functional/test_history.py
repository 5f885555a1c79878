"""stream_merge with scd_type 2: every change a version, deletes closing them, against the history
replayed from the source's change feed; tracked columns, hard_deletes, sequence_by, the refusals,
valid_history, a property test, crashes.

The soaks, longer and with SIGKILLs at random steps of the commit protocol:
    TABLESTREAM_PROPERTY_EXAMPLES=50 pytest -m soak tests/functional/test_history.py
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.functional.events import Event, write_events
from tests.functional.history import HistoryOracle, history_model, history_rows, replay_feed, scd_ids_unique
from tests.functional.local import shared_spark, sql_path
from tests.functional.streams import SparkSource, StreamBench, property_settings

# Every column tracked and deletes closing versions; the name tracked (an age change updates the
# version in place) and deletion records.
MODELS = {
    "history": history_model(),
    "name_deletions": history_model("track_history_columns=['name'], hard_deletes='new_record'"),
}
ORACLES = {
    "history": lambda: HistoryOracle(),
    "name_deletions": lambda: HistoryOracle(tracked=("name",), hard_deletes="new_record"),
}


def assert_histories(bench: StreamBench) -> None:
    source = Path(bench.source_path())
    for model, oracle in ORACLES.items():
        assert history_rows(bench, model) == replay_feed(source, oracle()), model
        assert scd_ids_unique(bench, model), model


VALID_HISTORY = "version: 2\nmodels:\n" + "".join(
    f"  - name: {model}\n    data_tests: [{{dbt_tablestream.valid_history: {{arguments: {{unique_key: id}}}}}}]\n"
    for model in MODELS
)


@pytest.mark.extended
def test_every_change_is_a_version_and_deletes_close_them(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, MODELS)
    (bench.project.root / "models" / "schema.yml").write_text(VALID_HISTORY)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    assert_histories(bench)
    source = bench.source
    source().update(updates={"age": "age + 1"}, predicate="id = 1")  # key 1 three times in one window
    source().update(updates={"name": "'A'"}, predicate="id = 1")
    source().update(updates={"age": "age + 1"}, predicate="id = 1")
    source().delete("id = 2")
    bench.append([(2, "B", 20)])  # re-inserted in the same window
    source().delete("id = 3")
    bench.run()
    assert_histories(bench)
    versions = history_rows(bench, "history")
    assert sorted((row[1], row[2]) for row in versions if row[0] == 1) == [("A", 2), ("A", 3), ("a", 1), ("a", 2)]
    assert [row for row in versions if row[0] == 3 and row[4] is None] == []  # deleted: no open version
    # name_deletions: the age changes update the version in place
    assert sorted((row[1], row[2]) for row in history_rows(bench, "name_deletions") if row[0] == 1) == [
        ("A", 3),
        ("a", 2),
    ]
    bench.append([(3, "c", 3)])
    source().update(updates={"age": "21"}, predicate="id = 2")
    bench.run()
    assert_histories(bench)
    deletions = history_rows(bench, "name_deletions")
    assert any(row[0] == 3 and row[6] and row[4] is not None for row in deletions)  # closed by the re-insert
    check_valid_history(bench)


def check_valid_history(bench: StreamBench) -> None:
    """valid_history passes on the targets, and fails with the offending keys on one edited to overlap."""
    result = bench.invoke("test")
    assert result.success, [str(item.message) for item in result.result.results if item.status != "pass"]
    table = f"delta.`{sql_path(bench.target_path('history'))}`"
    # Key 1's first version made current again (two current, overlapping); key 2's reversed.
    first = shared_spark().sql(f"select min(dbt_scd_id) as id from {table} where id = 1 and dbt_valid_to is not null")
    shared_spark().sql(f"update {table} set dbt_valid_to = null where dbt_scd_id = '{first.collect()[0][0]}'")
    shared_spark().sql(
        f"update {table} set dbt_valid_to = dbt_valid_from - interval 1 second where id = 2 and dbt_valid_to is not null"
    )
    result = bench.invoke("test", "-s", "history")
    assert not result.success
    failures = [item for item in result.result.results if item.status == "fail"]
    assert len(failures) == 1 and failures[0].failures == 4, failures
    rows = shared_spark().sql(failures[0].node.compiled_code).collect()
    assert sorted((row["id"], row["problem"]) for row in rows) == [
        (1, "more than one current version"),
        (1, "overlaps the next version"),
        (2, "dbt_valid_to is not after dbt_valid_from"),
        (2, "dbt_valid_to is not after dbt_valid_from"),
    ]


def test_snapshot_start_and_full_refresh(tmp_path: Path) -> None:
    """start_at snapshot opens every current row at the snapshot version's commit time;
    --full-refresh rebuilds from start_at."""
    bench = StreamBench(tmp_path, {"history": history_model().replace("start_at='earliest'", "start_at='snapshot'")})
    bench.create_source([(1, "a", 1)])
    bench.source().update(updates={"age": "2"}, predicate="id = 1")
    bench.append([(2, "b", 2)])
    # Delta's commit time as Spark reads it (DESCRIBE HISTORY, table_changes), not delta-rs's commitInfo.
    snapshot_at = SparkSource(bench.source_path()).history()[0]["timestamp"]
    bench.run()
    assert history_rows(bench, "history") == Counter(
        {(1, "a", 2, snapshot_at, None, snapshot_at): 1, (2, "b", 2, snapshot_at, None, snapshot_at): 1}
    )
    bench.source().update(updates={"name": "'z'"}, predicate="id = 2")
    bench.run("--full-refresh")
    rebuilt_at = SparkSource(bench.source_path()).history()[0]["timestamp"]
    assert history_rows(bench, "history") == Counter(
        {(1, "a", 2, rebuilt_at, None, rebuilt_at): 1, (2, "z", 2, rebuilt_at, None, rebuilt_at): 1}
    )


def test_events_give_the_history_in_sequence_order(tmp_path: Path) -> None:
    """With sequence_by, out-of-order events are versions in sequence order, dated by their
    sequence; an event older than what a key's history holds (late across runs) changes nothing."""
    model = (
        "{{ config(materialized='stream_merge', unique_key='id', scd_type=2, sequence_by='seq', "
        "apply_as_deletes=\"op = 'd'\", target_exclude_columns=['op'], start_at='earliest') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 'events') }}"
    )
    bench = StreamBench(tmp_path, {"events_history": model}, sources=("events",))
    write_events(
        bench,
        [
            Event(1, "u", 3, "a3", 13),
            Event(1, "c", 1, "a", 10),
            Event(1, "u", 2, "a2", 12),
            Event(1, "u", 2, "a2", 12),  # a redelivered duplicate
            Event(2, "d", 5, None, None),
            Event(2, "c", 4, "b", 20),
        ],
    )
    bench.run()
    expected = Counter(
        {
            (1, "a", 10, 1, 2, 1): 1,
            (1, "a2", 12, 2, 3, 2): 1,
            (1, "a3", 13, 3, None, 3): 1,
            (2, "b", 20, 4, 5, 4): 1,
        }
    )
    assert history_rows(bench, "events_history", millis=False) == expected
    # Late: key 1's seq 2.5 is below its open version; key 2's seq 4 is below its delete.
    write_events(bench, [Event(1, "u", 2, "late", 0), Event(2, "c", 3, "zombie", 0), Event(1, "u", 6, "a6", 16)])
    bench.run()
    expected[(1, "a3", 13, 3, None, 3)] -= 1
    expected.update({(1, "a3", 13, 3, 6, 3): 1, (1, "a6", 16, 6, None, 6): 1})
    assert history_rows(bench, "events_history", millis=False) == +expected


def test_history_refusals_name_the_stream_and_write_nothing(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "bad_type": history_model().replace("scd_type=2", "scd_type=3"),
            "bad_deletes": history_model("hard_deletes='purge'"),
            "both": history_model("track_history_columns=['name'], track_history_except_columns=['age']"),
            "misspelt": history_model("track_history_columns=['nmae']"),
            "soft": history_model("delete_mode='soft'"),
            "scd1_tracking": "{{ config(materialized='stream_merge', unique_key='id', track_history_columns=['name']) }}\n"
            "select * from {{ dbt_tablestream.source_stream('app', 't') }}",
            "no_timestamp": history_model().replace(
                "select *", "select id, name, age, __change_type, __commit_version"
            ),
            "reserved": history_model().replace("select *", "select *, 1 as dbt_valid_to"),
        },
    )
    bench.create_source([(1, "a", 1)])
    bench.refused("bad_type", "invalid scd_type '3'", "Accepted values: 1", "2 (the target keeps every version")
    bench.refused("bad_deletes", "invalid hard_deletes 'purge'", "Accepted values: invalidate", "new_record", "ignore")
    bench.refused("both", "track_history_columns or track_history_except_columns, not both")
    bench.refused(
        "misspelt", "Stream misspelt__app_t on app.t", "track_history_columns names nmae", "Nothing was written"
    )
    bench.refused("soft", "delete_mode 'soft'", "Use hard_deletes")
    bench.refused("scd1_tracking", "track_history_columns shape the history", "scd_type: 2")
    bench.refused("no_timestamp", "Stream no_timestamp__app_t", "lacks __commit_timestamp", "Nothing was written")
    bench.refused("reserved", "has dbt_valid_to", "Nothing was written")


# --- property: random histories against the change feed's replay --------------------------------

KEYS = st.integers(min_value=1, max_value=3)
STEP = st.one_of(
    st.tuples(st.just("update_name"), KEYS, st.sampled_from(["x", "y"])),
    st.tuples(st.just("update_age"), KEYS, st.integers(0, 3)),
    st.tuples(st.just("delete"), KEYS, st.none()),
    st.tuples(st.just("insert"), KEYS, st.sampled_from(["p", "q"])),
    st.tuples(st.just("run"), st.none(), st.none()),
)


def apply_step(bench: StreamBench, present: set[int], step: tuple[str, int | None, object]) -> bool:
    """Writes the step to the source; whether it committed a change."""
    kind, key, value = step
    if kind == "insert" and key not in present:
        bench.append([(key, str(value), 0)])
        present.add(key)
    elif kind == "delete" and key in present:
        bench.source().delete(f"id = {key}")
        present.discard(key)
    elif kind == "update_name" and key in present:
        bench.source().update(updates={"name": f"'{value}'"}, predicate=f"id = {key}")
    elif kind == "update_age" and key in present:
        bench.source().update(updates={"age": str(value)}, predicate=f"id = {key}")
    else:
        return False
    return True


def check_history(steps: list[tuple[str, int | None, object]], crashes: list[str | None] | None = None) -> None:
    """After every run each model's target equals the change feed's replay, and valid_history
    passes at the end; with ``crashes``, run i is first SIGKILLed at crashes[i] (or not, for None)."""
    with tempfile.TemporaryDirectory() as directory:
        bench = StreamBench(Path(directory), MODELS, processes=crashes is not None)
        (bench.project.root / "models" / "schema.yml").write_text(VALID_HISTORY)
        bench.create_source([(1, "a", 1), (2, "b", 2)])
        present = {1, 2}
        runs = 0
        changed = True  # the first run builds the targets
        for step in [*steps, ("run", None, None)]:
            if step[0] != "run":
                changed = apply_step(bench, present, step) or changed
                continue
            # An empty window writes nothing, so it reaches no fault point.
            crash = crashes[runs % len(crashes)] if crashes and changed else None
            runs += 1
            changed = False
            if crash:
                bench.crash(crash, "run", "-s", "history")
            bench.run()
            assert_histories(bench)
        tested = bench.invoke("test")  # valid_history on the targets
        assert tested.success, [str(item.message) for item in tested.result.results if item.status != "pass"]


PROPERTY_SETTINGS = property_settings(1)
EXAMPLES = PROPERTY_SETTINGS.max_examples


@PROPERTY_SETTINGS
@given(steps=st.lists(STEP, min_size=2, max_size=12))
# An update to the value a row already has: delta-rs rewrites the file with no change data, which
# the feed reads as every row deleted and inserted again, all of them carry-overs.
@example(steps=[("update_name", 1, "x"), ("update_name", 1, "x")])
def test_random_histories_equal_the_change_feed_replayed(steps: list[tuple[str, int | None, object]]) -> None:
    check_history(steps)


@pytest.mark.soak
@settings(max_examples=max(EXAMPLES, 30), deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(STEP, min_size=2, max_size=16))
def test_random_histories_soak(steps: list[tuple[str, int | None, object]]) -> None:
    check_history(steps)


CRASH_POINT = st.sampled_from([None, "before_target_commit", "after_target_commit", "after_offsets_append"])


@pytest.mark.soak
@settings(max_examples=max(EXAMPLES, 6), deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(STEP, min_size=2, max_size=12), crashes=st.lists(CRASH_POINT, min_size=1, max_size=4))
# Every fault point at least once: each run after a change, a delete and a re-insert.
@example(
    steps=[
        ("update_name", 1, "x"),
        ("run", None, None),
        ("delete", 2, None),
        ("update_age", 1, 3),
        ("run", None, None),
        ("insert", 2, "p"),
        ("update_name", 1, "y"),
    ],
    crashes=["before_target_commit", "after_target_commit", "after_offsets_append"],
)
def test_random_histories_with_crashes_soak(
    steps: list[tuple[str, int | None, object]], crashes: list[str | None]
) -> None:
    """The replay holds when runs are SIGKILLed at random steps of the commit protocol and rerun."""
    check_history(steps, crashes)

"""stream_merge with scd_type 2: every change a version, deletes closing them, against the history
the committed changes give (tests/functional/history.py); tracked columns, hard_deletes,
sequence_by, the refusals, valid_history, a property test, crashes.

The property test runs one example of 48 histories in CI (tests/functional/lanes.py); the soaks,
longer and with SIGKILLs at random steps of the commit protocol:
    TABLESTREAM_PROPERTY_EXAMPLES=8 pytest -m soak tests/functional/test_history.py -k "not crashes"
    pytest -m soak tests/functional/test_history.py -k crashes
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.functional.events import Event, write_events
from tests.functional.history import (
    Committed,
    HistoryOracle,
    commit_times,
    expected_history,
    history_model,
    history_rows,
    scd_ids_unique,
)
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
from tests.functional.local import local_profile, shared_spark, sql_path
from tests.functional.streams import SparkSource, StreamBench, assert_no_refused_setting, property_settings

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


class Scenario:
    """The changes a test commits to the bench's source, each with the version it landed in."""

    def __init__(self, bench: StreamBench) -> None:
        self.bench = bench
        self.committed: list[Committed] = []

    def landed(self, *changes: tuple[int, tuple[str, int] | None]) -> None:
        """The source's latest commit made ``changes``: (key, its (name, age) after, or None if deleted)."""
        version = self.bench.source().version()
        self.committed += [Committed.row(key, version, row) for key, row in changes]

    def assert_histories(self) -> None:
        times = commit_times(Path(self.bench.source_path()))
        for model, oracle in ORACLES.items():
            assert history_rows(self.bench, model) == expected_history(self.committed, times, oracle()), model
            assert scd_ids_unique(self.bench, model), model


VALID_HISTORY = "version: 2\nmodels:\n" + "".join(
    f"  - name: {model}\n    data_tests: [{{dbt_tablestream.valid_history: {{arguments: {{unique_key: id}}}}}}]\n"
    for model in MODELS
)


@pytest.mark.scenarios
def test_every_change_is_a_version_and_deletes_close_them(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, MODELS)
    (bench.project.root / "models" / "schema.yml").write_text(VALID_HISTORY)
    scenario = Scenario(bench)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    scenario.landed((1, ("a", 1)), (2, ("b", 2)), (3, ("c", 3)))
    bench.run()
    scenario.assert_histories()
    source = bench.source
    source().update(updates={"age": "age + 1"}, predicate="id = 1")  # key 1 three times in one window
    scenario.landed((1, ("a", 2)))
    source().update(updates={"name": "'A'"}, predicate="id = 1")
    scenario.landed((1, ("A", 2)))
    source().update(updates={"age": "age + 1"}, predicate="id = 1")
    scenario.landed((1, ("A", 3)))
    source().delete("id = 2")
    scenario.landed((2, None))
    bench.append([(2, "B", 20)])  # re-inserted in the same window
    scenario.landed((2, ("B", 20)))
    source().delete("id = 3")
    scenario.landed((3, None))
    bench.run()
    scenario.assert_histories()
    versions = history_rows(bench, "history")
    assert sorted((row[1], row[2]) for row in versions if row[0] == 1) == [("A", 2), ("A", 3), ("a", 1), ("a", 2)]
    assert [row for row in versions if row[0] == 3 and row[4] is None] == []  # deleted: no open version
    # name_deletions: the age changes update the version in place
    assert sorted((row[1], row[2]) for row in history_rows(bench, "name_deletions") if row[0] == 1) == [
        ("A", 3),
        ("a", 2),
    ]
    bench.append([(3, "c", 3)])
    scenario.landed((3, ("c", 3)))
    source().update(updates={"age": "21"}, predicate="id = 2")
    scenario.landed((2, ("B", 21)))
    bench.run()
    scenario.assert_histories()
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


# --- property: random histories against the history their own changes give ----------------------

# dbt runs per example: a run of the two models costs 10 to 25 s here whatever the lanes hold.
RUNS = 3
STEP_KINDS = ["update_name", "update_age", "delete", "insert", "run"]
Step = tuple[str, int | None, object]
LANE_MODELS = {
    "history": history_model().replace("unique_key='id'", f"unique_key={LANE_KEY}"),
    "name_deletions": history_model("track_history_columns=['name'], hard_deletes='new_record'").replace(
        "unique_key='id'", f"unique_key={LANE_KEY}"
    ),
}
LANE_VALID_HISTORY = VALID_HISTORY.replace("unique_key: id", "unique_key: [lane, id]")


def random_steps(rng: random.Random) -> list[Step]:
    """2-12 steps over keys 1-3: a name or age update, a delete, an insert, or a run (at most
    RUNS - 1 of them, the last run being implied)."""
    steps: list[Step] = []
    runs = 0
    for _ in range(rng.randint(2, 12)):
        kind = rng.choice(STEP_KINDS if runs < RUNS - 1 else STEP_KINDS[:-1])
        runs += kind == "run"
        key = None if kind == "run" else rng.randint(1, 3)
        value = {"update_name": rng.choice("xy"), "update_age": rng.randint(0, 3), "insert": rng.choice("pq")}
        steps.append((kind, key, value.get(kind)))
    return steps


class HistoryLane(StepLane):
    """Name and age updates, deletes and re-inserts of the lane's keys 1-3 (1 and 2 there at
    first); each model's target against the history the lane's own changes give, each at the
    commit time of the source version it landed in."""

    def __init__(self, index: int, history: list[Step]) -> None:
        super().__init__(index, history, history)
        self.rows: dict[int, tuple[str, int]] = {1: ("a", 1), 2: ("b", 2)}
        self.initial: list[Row] = [(index, key, name, age) for key, (name, age) in self.rows.items()]
        self.committed: list[Committed] = []
        # The changes of the commit being written, until landed() names its version.
        self.pending: list[tuple[int, tuple[str, int] | None]] = list(self.rows.items())

    def change(self, kind: str, key: int | None, value: object) -> Change | None:
        assert key is not None
        present = self.rows.get(key)
        if kind == "insert" and present is None:
            self.rows[key] = (str(value), 0)
        elif kind == "delete" and present is not None:
            del self.rows[key]
            self.pending.append((key, None))
            return Change("delete", self.index, key)
        elif kind == "update_name" and present is not None:
            self.rows[key] = (str(value), present[1])
        elif kind == "update_age" and present is not None:
            self.rows[key] = (present[0], int(value))  # type: ignore[call-overload]
        else:
            return None
        if self.rows[key] != present:  # the same values written again: a carry-over, no change
            self.pending.append((key, self.rows[key]))
        return Change("upsert", self.index, key, *self.rows[key])

    def landed(self, version: int) -> None:
        """The commit of the pending changes is source version ``version``."""
        self.committed += [Committed.row(key, version, row) for key, row in self.pending]
        self.pending = []

    def check(self, run: int, view: BatchView) -> None:
        times = view.cached("commit times", lambda: commit_times(Path(view.bench.source_path())))
        for model, oracle in ORACLES.items():
            versions = view.cached(
                ("versions", model), lambda model=model: history_rows(view.bench, model, keys=("lane", "id"))
            )
            mine = Counter({row[1:]: count for row, count in versions.items() if row[0] == self.index})
            expected = expected_history(self.committed, times, oracle())
            assert mine == expected, (
                f"{model}: only in the target {dict(mine - expected)}, only in the oracle {dict(expected - mine)}"
            )


class LandingSource:
    """The batch's source, which tells every lane the version each commit landed in."""

    def __init__(self, source: LaneSource, lanes: list[HistoryLane]) -> None:
        self.source = source
        self.lanes = lanes

    def create(self) -> None:
        self.source.create([row for lane in self.lanes for row in lane.initial])
        self._landed()

    def apply(self, changes: list[Change]) -> None:
        self.source.apply(changes)
        self._landed()

    def version(self) -> int:
        return self.source.version()

    def rows_at(self, version: int) -> list[dict[str, Any]]:
        return self.source.rows_at(version)

    def _landed(self) -> None:
        version = self.source.version()
        for lane in self.lanes:
            lane.landed(version)


def check_history(
    seed: int, lanes: int = LANES, crashes: list[str | None] | None = None, sql_warehouse: bool = False
) -> None:
    """After every run each lane's versions in each model equal the history its own changes give
    (HistoryLane), and valid_history passes at the end; with ``crashes``, run i is first SIGKILLed
    at crashes[i] (or not, for None) in the model history. With ``sql_warehouse`` dbt runs on an emulated SQL
    warehouse (the reapply protocol) and, without crashes, a random subset of the models loses its
    offsets row of the run before the last, so that run applies a window again."""
    with tempfile.TemporaryDirectory() as directory:
        warehouse = Path(directory) / "warehouse"
        profile = local_profile(warehouse, emulate_sql_warehouse=True) if sql_warehouse else None
        bench = StreamBench(Path(directory), LANE_MODELS, processes=crashes is not None, profile=profile)
        (bench.project.root / "models" / "schema.yml").write_text(LANE_VALID_HISTORY)
        batch = [HistoryLane(index, random_steps(rng)) for index, rng in enumerate(lane_randoms(seed, lanes))]
        source = LandingSource(LaneSource(bench), batch)
        source.create()

        rng = random.Random(seed)

        def crash(run: int, changed: bool) -> None:
            point = crashes[run % len(crashes)] if crashes and changed else None
            if point:  # an empty window writes nothing, so it reaches no fault point
                bench.crash(f"{point}@history", "run", "-s", "history")
            elif sql_warehouse and not crashes and run >= 2:
                lose_offsets_rows(bench, sorted(f"{model}__app_t" for model in LANE_MODELS), rng)

        run_batch(bench, source, batch, rng, seed=seed, lane_count=lanes, before_run=crash)
        for model in LANE_MODELS:
            assert scd_ids_unique(bench, model), model
        tested = bench.invoke("test")  # valid_history on the targets
        assert tested.success, [str(item.message) for item in tested.result.results if item.status != "pass"]
        if sql_warehouse:
            assert_no_refused_setting(warehouse)


PROPERTY_SETTINGS = property_settings(1)


@PROPERTY_SETTINGS
@given(seed=SEEDS)
def test_random_histories_on_a_sql_warehouse_equal_the_change_feed_replayed(seed: int) -> None:
    """On an emulated SQL warehouse (the reapply protocol), where a lost offsets row has a window
    applied again: no version twice. The marked protocol's history runs the same SQL less the
    filter of changes already applied, and the soak runs it."""
    check_history(seed, sql_warehouse=True)


@pytest.mark.soak
@pytest.mark.parametrize("sql_warehouse", [False, True])
@property_settings(8)
@given(seed=SEEDS)
def test_random_histories_soak(seed: int, sql_warehouse: bool) -> None:
    check_history(seed, sql_warehouse=sql_warehouse)


CRASH_POINTS = [None, "window_pinned", "before_target_commit", "after_target_commit", "after_offsets_append"]


@pytest.mark.soak
@pytest.mark.parametrize("sql_warehouse", [False, True])
@property_settings(4)
@given(seed=SEEDS)
def test_random_histories_with_crashes_soak(seed: int, sql_warehouse: bool) -> None:
    """The histories hold when runs are SIGKILLed at random steps of the commit protocol and rerun."""
    rng = random.Random(seed)
    check_history(seed, crashes=[rng.choice(CRASH_POINTS) for _ in range(RUNS)], sql_warehouse=sql_warehouse)

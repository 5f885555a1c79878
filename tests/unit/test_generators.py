"""The property tests' generators reach every branch within a few CI runs.

Each CI run tries one new seed per property (tests/seeds.py). For each generator this draws
seeds from the run's own, generates what one example of each would (its lanes, or its history;
no Spark), and measures the share of examples that reach each branch: a branch an example reaches
with probability p is missed by n runs in a row with probability (1 - p) ** n. Every branch must
be reached by at least LEAST_SHARE of the examples. Measured (`-s` prints them): a lane batch (96
histories) reaches every branch of its generator in every example; the PySpark example's schema
changes 0.97; the delta-log example each kind of commit in 0.85-1.0, and deletion vectors, drawn
per example, in half (three runs in a row miss them one time in eight).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from tests.functional.lanes import LANES, lane_randoms
from tests.seeds import run_seed

SAMPLES = 1000
# The least share of examples that reach a branch: 5 runs in a row miss it at most 8% of the time.
# The samples put a branch drawn with probability 0.5 below it about once in a billion runs.
LEAST_SHARE = 0.4


def shares(branches_of: Callable[[int], Iterable[str]], expected: set[str]) -> dict[str, float]:
    """The share of SAMPLES examples (seeds drawn from the run's) that reach each expected branch."""
    draw = random.Random(run_seed())
    reached: Counter[str] = Counter()
    for _ in range(SAMPLES):
        reached.update(set(branches_of(draw.randrange(2**32))))
    found = {branch: reached[branch] / SAMPLES for branch in sorted(expected)}
    print(f"{branches_of.__name__}: " + ", ".join(f"{branch} {share:.2f}" for branch, share in found.items()))
    return found


def assert_reached(found: dict[str, float]) -> None:
    rare = {branch: share for branch, share in found.items() if share < LEAST_SHARE}
    assert not rare, f"branches reached by fewer than {LEAST_SHARE:.0%} of examples: {rare}"


def keyed_lane_branches(seed: int) -> set[str]:
    """tests/functional/test_stream_properties.py's lanes (both kinds of its histories)."""
    from tests.functional.test_stream_properties import random_history

    found: set[str] = set()
    for index, rng in enumerate(lane_randoms(seed)):
        initial, changes = random_history(rng, every_run=index % 2 == 1)
        present = {key for key, _ in initial}
        found.add("initial rows" if present else "no initial rows")
        parts: list[list[tuple[str, int]]] = [[]]
        for kind, key, _ in changes:
            if kind == "run":
                parts.append([])
            else:
                parts[-1].append((kind, key))
        if len(parts) > 1:
            found.add("several runs")
        for number, part in enumerate(parts):
            if number and not part:
                found.add("a run with no change")
            touched: Counter[int] = Counter()
            deleted: set[int] = set()
            inserted: set[int] = set()
            for kind, key in part:
                touched[key] += 1
                if kind == "upsert":
                    found.add("update" if key in present else "insert")
                    if key in deleted:
                        found.add("delete then insert again in one window")
                    if key not in present:
                        inserted.add(key)
                    present.add(key)
                elif key in present:
                    found.add("delete")
                    if key in inserted:
                        found.add("insert then delete in one window")
                    present.discard(key)
                    deleted.add(key)
                else:
                    found.add("delete of an absent key")
            if touched and max(touched.values()) >= 3:
                found.add("a key changed 3 times in one window")
    return found


def view_lane_branches(seed: int) -> set[str]:
    """tests/functional/test_stream_view_properties.py's lanes (both kinds of its histories)."""
    from tests.functional.test_stream_view_properties import random_history

    found: set[str] = set()
    for index, rng in enumerate(lane_randoms(seed)):
        present: dict[str, dict[int, tuple[Any, ...]]] = {"f": {}, "c": {}, "r": {}}
        deleted: dict[str, set[int]] = {"f": set(), "c": set(), "r": set()}
        runs = 1
        for step in random_history(rng, every_run=index % 2 == 1):
            if step[0] == "run":
                runs += 1
                continue
            table, key, values = step
            rows = present[table]
            if values is None:
                if key in rows:
                    found.add(f"delete of {table}")
                    deleted[table].add(key)
                    del rows[key]
                continue
            if key in deleted[table]:
                found.add("a re-insert")
            old = rows.get(key)
            if old is None:
                found.add(f"insert of {table}")
            elif table == "f" and old[0] != values[0]:
                found.add("a fact's join key moves")
            elif table == "c" and old[0] != values[0]:
                found.add("a group key moves")
            elif table == "c" and old[1] != values[1]:
                found.add("a dimension's join key moves")
            if (table == "f" and values[0] is None) or (table == "c" and values[1] is None):
                found.add("a NULL join key")
            rows[key] = values
        if runs > 1:
            found.add("several runs")
    return found


def event_lane_branches(seed: int) -> set[str]:
    """tests/functional/test_cdc_events.py's lanes of CDC events."""
    from tests.functional.test_cdc_events import random_event_history

    found: set[str] = set()
    for rng in lane_randoms(seed):
        runs = random_event_history(rng)
        if len(runs) > 1:
            found.add("several runs")
        arrived: list[Any] = []
        newest_seen: dict[int, int] = {}
        for commits in runs:
            for commit in commits:
                seqs = [event.seq for event in commit]
                if seqs != sorted(seqs):
                    found.add("out of order within a commit")
                for event in commit:
                    found.add({"c": "create", "u": "update", "d": "delete"}[event.op])
                    if event.op != "d" and (event.name is None or event.age is None):
                        found.add("a NULL value")
                    if event in arrived:
                        found.add("a redelivered duplicate")
                    elif newest_seen.get(event.id, -1) > event.seq:
                        found.add("a late event")
                    arrived.append(event)
                    newest_seen[event.id] = max(newest_seen.get(event.id, -1), event.seq)
            creates = {event.id: event.seq for commit in commits for event in commit if event.op == "c"}
            for commit in commits:
                for event in commit:
                    if event.op == "d" and event.seq < creates.get(event.id, -1):
                        found.add("a create newer than a delete")
    return found


def history_lane_branches(seed: int) -> set[str]:
    """tests/functional/test_history.py's SCD type 2 lanes (keys 1 and 2 present at first)."""
    from tests.functional.test_history import random_steps

    found: set[str] = set()
    for rng in lane_randoms(seed):
        present, deleted = {1, 2}, set()
        steps = random_steps(rng)
        if any(kind == "run" for kind, _, _ in steps):
            found.add("several runs")
        for kind, key, _ in steps:
            if kind == "run":
                continue
            effective = (kind == "insert") == (key not in present)
            if not effective:
                found.add(f"{kind}, no change")
                continue
            found.add(kind)
            if kind == "delete":
                present.discard(key)
                deleted.add(key)
            elif kind == "insert":
                if key in deleted:
                    found.add("insert of a deleted key")
                present.add(key)
    return found


def pyspark_example_branches(seed: int) -> set[str]:
    """tests/functional/test_pyspark_matches_dbt.py's example: its four sources' commits, as its
    History records them (each commit's statement, without running it)."""
    from tests.functional import test_pyspark_matches_dbt as module

    found: set[str] = set()
    recorded: list[tuple[str, bool]] = []

    def record(self: Any, statement: str, changes: Any = None, schema: bool = False) -> None:
        self.version += 1
        recorded.append((statement, schema))

    histories = [module.History(index, random.Random(seed * 100 + index)) for index in range(module.SOURCES)]
    rng = random.Random(seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module.History, "commit", record)
        for turn in range(module.ROUNDS):
            for history in histories:
                if turn == 0 and history.index == 0:
                    history.split_window(rng)
                for commit in range(rng.randint(0, 4)):
                    history.random_commit(turn * 10 + commit)
    for statement, _ in recorded:
        found.add(
            "add columns"
            if "add columns" in statement
            else "a column comment"
            if "comment" in statement
            else statement.split()[0]
        )
    return found


def delta_log_example_branches(seed: int) -> set[str]:
    """tests/functional/test_delta_log_read.py's default example: deletion vectors or not, then 4
    runs of 1-6 random commits each, drawn as check_random_history draws them."""
    from tests.functional.test_delta_log_read import StepOracle, random_step

    rng = random.Random(seed)
    found = {"deletion vectors" if rng.random() < 0.5 else "no deletion vectors"}
    oracle = StepOracle()
    for _ in range(4):
        for _ in range(rng.randint(1, 6)):
            statement = random_step(rng, oracle)
            found.add(
                "overwrite"
                if statement.startswith("insert overwrite")
                else "no-op update"
                if "where id = -1" in statement
                else statement.split()[0]
            )
        oracle.end_run()
    return found


GENERATORS: list[tuple[Callable[[int], set[str]], set[str]]] = [
    (
        keyed_lane_branches,
        {
            "initial rows",
            "no initial rows",
            "several runs",
            "a run with no change",
            "insert",
            "update",
            "delete",
            "delete of an absent key",
            "delete then insert again in one window",
            "insert then delete in one window",
            "a key changed 3 times in one window",
        },
    ),
    (
        view_lane_branches,
        {
            "several runs",
            "insert of f",
            "insert of c",
            "insert of r",
            "delete of f",
            "delete of c",
            "delete of r",
            "a re-insert",
            "a fact's join key moves",
            "a group key moves",
            "a dimension's join key moves",
            "a NULL join key",
        },
    ),
    (
        event_lane_branches,
        {
            "several runs",
            "create",
            "update",
            "delete",
            "a NULL value",
            "a redelivered duplicate",
            "a late event",
            "out of order within a commit",
            "a create newer than a delete",
        },
    ),
    (
        history_lane_branches,
        {
            "several runs",
            "update_name",
            "update_age",
            "delete",
            "insert",
            "insert of a deleted key",
            "insert, no change",
            "delete, no change",
        },
    ),
    (pyspark_example_branches, {"insert", "update", "delete", "add columns", "a column comment"}),
    (
        delta_log_example_branches,
        {"deletion vectors", "no deletion vectors", "insert", "update", "delete", "merge", "overwrite", "optimize"},
    ),
]


@pytest.mark.parametrize(("generator", "expected"), GENERATORS, ids=[gen.__name__ for gen, _ in GENERATORS])
def test_every_branch_is_reached_within_a_few_runs(generator: Callable[[int], set[str]], expected: set[str]) -> None:
    assert LANES >= 48, "the lane generators are measured with the suite's lanes"
    assert_reached(shares(generator, expected))

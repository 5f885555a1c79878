"""The embedded engine's net changes per key, against an oracle that replays the history."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from dbt_tablestream.embedded._netting import net_merge_source

KEYS = st.sampled_from([(1, "a"), (1, "b"), (2, "a"), (None, "a")])
COMMITS = st.lists(st.lists(st.tuples(KEYS, st.integers(0, 9)), min_size=1, max_size=4), min_size=1, max_size=6)
INITIAL = st.dictionaries(KEYS, st.integers(0, 9), max_size=4)


def replay(initial: dict, commits: list) -> tuple[list[dict], dict]:
    """Change-feed rows of the commits (each (key, value) upserts, value 0 deletes), and the oracle."""
    state = dict(initial)
    rows: list[dict] = []
    for version, operations in enumerate(commits, start=10):
        for key, value in dict(operations).items():  # one change per key per commit, as in Delta
            row = {"k1": key[0], "k2": key[1], "__commit_version": version}
            if value == 0:
                if key in state:
                    rows.append({**row, "v": state.pop(key), "__change_type": "DELETE"})
            elif key in state:
                rows.append({**row, "v": state[key], "__change_type": "UPDATE_BEFORE"})
                rows.append({**row, "v": value, "__change_type": "UPDATE_AFTER"})
                state[key] = value
            else:
                rows.append({**row, "v": value, "__change_type": "INSERT"})
                state[key] = value
    expected = {}
    for key in set(initial) | set(state):
        first_version = (
            min(r["__commit_version"] for r in rows if (r["k1"], r["k2"]) == key)
            if any((r["k1"], r["k2"]) == key for r in rows)
            else None
        )
        last_version = max((r["__commit_version"] for r in rows if (r["k1"], r["k2"]) == key), default=None)
        if key in initial and key in state and first_version is not None:
            expected[key] = ("UPDATE_AFTER", state[key], last_version)
        elif key not in initial and key in state:
            expected[key] = ("INSERT", state[key], last_version)
        elif key in initial and key not in state:
            expected[key] = ("DELETE", initial[key], first_version)
    return rows, expected


@settings(max_examples=200, deadline=None)
@given(initial=INITIAL, commits=COMMITS)
def test_net_merge_source_matches_replaying_the_history(initial: dict, commits: list) -> None:
    rows, expected = replay(initial, commits)
    schema = pa.schema(
        [
            ("k1", pa.int64()),
            ("k2", pa.string()),
            ("v", pa.int64()),
            ("__change_type", pa.string()),
            ("__commit_version", pa.int64()),
        ]
    )
    changes = pa.Table.from_pylist(rows[::-1], schema=schema)  # the feed's order must not matter
    net = net_merge_source(changes, ["k1", "k2"], ["k1", "k2", "v"])
    assert net.column_names == ["k1", "k2", "v", "__change_type", "__commit_version", "__commit_timestamp"]
    got = {(row["k1"], row["k2"]): (row["__change_type"], row["v"], row["__commit_version"]) for row in net.to_pylist()}
    assert len(got) == net.num_rows, "one row per key"
    assert got == expected

"""A stream_merge target's layout: key-ordered files of bounded size, kept over runs, and MERGEs
that name the window's key ranges so Delta skips the files outside them (docs/architecture.md,
"Cost")."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from tests.functional.streams import StreamBench
from tests.functional.test_stream_merge import merge_model, source_state, target_state

BOUND = 100
ROWS = 2000


def files(bench: StreamBench, model: str = "current") -> list[dict[str, Any]]:
    """The target's files: path, rows and key range, in key order."""
    actions = pa.table(DeltaTable(str(bench.target_path(model))).get_add_actions(flatten=True)).to_pylist()
    return sorted(
        ({"path": a["path"], "rows": a["num_records"], "min": a["min.id"], "max": a["max.id"]} for a in actions),
        key=lambda file: (file["min"], file["max"]),
    )


def overlapping(layout: list[dict[str, Any]]) -> set[str]:
    """The files whose key range overlaps another file's."""
    paths: set[str] = set()
    for index, file in enumerate(layout):
        for other in layout[index + 1 :]:
            if other["min"] > file["max"]:
                break
            paths |= {file["path"], other["path"]}
    return paths


def change(bench: StreamBench, run: int) -> tuple[range, range]:
    """One run's clustered change: a block of updates then deletes, and fresh keys after the last.
    Returns the block's keys and the fresh keys."""
    start = (run * 617) % (ROWS - 60)
    bench.source().update(updates={"age": "age + 1"}, predicate=f"id >= {start} and id < {start + 30}")
    bench.source().delete(f"id >= {start + 30} and id < {start + 45}")
    fresh = ROWS + run * 20
    bench.append([(i, f"n{i}", i) for i in range(fresh, fresh + 20)])
    return range(start, start + 45), range(fresh, fresh + 20)


def merge_statement(bench: StreamBench, model: str = "current") -> str:
    """The SQL of the model's last write, as dbt recorded it."""
    return next((bench.project.root / "target" / "run").rglob(f"{model}.sql")).read_text()


# About 150 s: in the extended tier, which CI runs after the default suite, so that the default
# suite stays within its 30 minutes on a slow day (CONTRIBUTING.md, "How long the test tiers take").
@pytest.mark.extended
def test_files_hold_bounded_key_ranges_and_a_merge_rewrites_only_the_files_of_changed_keys(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"current": merge_model(f"max_rows_per_file={BOUND}")})
    bench.create_source([(i, f"n{i}", i) for i in range(ROWS)])
    bench.run()
    built = files(bench)
    assert len(built) >= ROWS // BOUND and all(file["rows"] <= BOUND for file in built), built
    assert all(lower["max"] < upper["min"] for lower, upper in pairwise(built)), built
    for run in range(1, 11):
        before = files(bench)
        block, fresh = change(bench, run)
        bench.run()
        after = files(bench)
        assert all(file["rows"] <= BOUND for file in after), after
        kept = {file["path"] for file in after}
        rewritten = [file for file in before if file["path"] not in kept]
        holding_changes = [file for file in before if file["min"] <= block[-1] and file["max"] >= block[0]]
        # Only files that hold a changed key are copied; the fresh keys rewrite no file.
        assert rewritten and all(file in holding_changes for file in rewritten), (rewritten, holding_changes)
        # The window's two key ranges are in the MERGE's ON clause, as literals of the key's type (int).
        statement = merge_statement(bench)
        for keys in (block, fresh):
            assert re.search(rf"target.`id` >= {keys[0]} and target.`id` <= {keys[-1]}\b", statement), statement
        # One MERGE writes one key-ordered run cut every BOUND rows: its files are disjoint, and at
        # most one spans the gap between the window's two ranges (docs/architecture.md, "Cost").
        written = [file for file in after if file["path"] not in {old["path"] for old in before}]
        assert overlapping(written) == set(), written
        assert len([file for file in written if file["min"] <= block[-1] and file["max"] >= fresh[0]]) <= 1, written
    assert target_state(bench) == source_state(bench)

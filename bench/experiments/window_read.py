"""Where a scattered window's run goes beyond its bare write: run for issue 78 at d92ed4c
(2026-12-05, 10M rows) and at b40b239 (2026-12-06, 100M rows with the rebuild step);
bench/README.md, "Where a scattered window's run goes", keeps what it decided: a scattered window of
a source with deletion vectors costs a scan of the whole source to read (Delta's change feed) and
its replace a scan of the target's keys against the list, so no replace reaches 0.3x a rebuild,
and Delta's join-based `replaceOn` is not open to SQL.

In one warm local session, on bench/run.py's `--scale` source (key-ordered files of 250,000 rows,
the change feed and deletion vectors on) and a copy of it with deletion vectors, each round
commits a scattered 0.1% change (bench/_harness.py's `change_statements`: an UPDATE and a DELETE, both
by deletion vector, and an INSERT) and times, one after another:
- `raw_count`: `count(*)` of the window's `table_changes`;
- `net_count`: `count(*)` of its net changes (per key its last change), the window a run reads;
- `full_scan`: `sum(amount), count(*)` of the whole source, for scale;
- `cache`: `CACHE TABLE` of the net changes, then `cached_count`, a count of the cached table;
- `materialize`: the net changes written to a Delta table (`app.window`);
- `replace_from_table`: `INSERT INTO <the copy> REPLACE WHERE id IN (<the window's keys>) SELECT
  <its upserts> FROM app.window`, Delta's constraint check off (bench/scattered_writes.py's
  `replace_where_dv`);
- `replace_from_query`: the same into a second copy, reading the net changes' query instead of the
  table, as a run does;
- `in_scan`: `count(*)` of the copy `WHERE id IN (<the window's keys>)`: the key list's scan alone;
- `rebuild`: the source rewritten as a new Delta table (`CREATE OR REPLACE TABLE ... AS SELECT`),
  what a `table` model's run does, in the same session for the ratios.

The two replaces and the key scan run with Parquet's filter pushdown off, as the package's replace
commit runs them (`stream_commit_open_sql`'s `replaces`); results before 2026-12-06 had it on.

    python bench/experiments/window_read.py          # 10M rows, 2 rounds: 6 minutes here
    python bench/experiments/window_read.py --rows 1000000 --rounds 1 --out /tmp/window_read.json
    python bench/experiments/window_read.py --source-vectors off --out bench/results/window_read_cow_source.json
    python bench/experiments/window_read.py --rows 100000000 --out bench/results/window_read_100m.json   # 9-11 minutes

`--source-vectors off` turns the source's deletion vectors off after it is built, so that its
UPDATE and DELETE rewrite the files they touch and write change data files, which the window's
read then reads instead of the touched files (the source's own changes cost more; not timed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import RESULTS, Bench, change_statements, net_window_sql, write_points
from scattered_writes import COLUMNS, CONSTRAINT_CHECK, Writes

STEPS = (
    "raw_count",
    "net_count",
    "full_scan",
    "cache",
    "cached_count",
    "materialize",
    "replace_from_table",
    "replace_from_query",
    "in_scan",
    "rebuild",
)
PUSHDOWN = "spark.sql.parquet.filterPushdown"


def one_round(writes: Writes, rows: int, round: int) -> dict[str, float]:
    """The round's change, then each step's seconds."""
    bench = writes.bench
    for statement in change_statements(rows, 0.001, 5 + round, "scattered"):
        bench.sql(statement)
    through = writes.latest()
    net = f"select {COLUMNS}, _change_type from ({net_window_sql(writes.after, through)})"
    seconds: dict[str, float] = {}

    def timed(step: str, action: Callable[[], object]) -> None:
        began = time.perf_counter()
        action()
        seconds[step] = time.perf_counter() - began
        print(f"  {step}: {seconds[step]:.2f} s", flush=True)

    timed(
        "raw_count", lambda: bench.sql(f"select count(*) from table_changes('app.src', {writes.after + 1}, {through})")
    )
    timed("net_count", lambda: bench.sql(f"select count(*) from ({net})"))
    timed("full_scan", lambda: bench.sql("select sum(amount), count(*) from app.src"))
    timed("cache", lambda: bench.sql(f"cache table bench_window as {net}"))
    timed("cached_count", lambda: bench.sql("select count(*) from bench_window"))
    bench.sql("uncache table bench_window")
    bench.sql("drop view bench_window")
    timed("materialize", lambda: bench.sql(f"create or replace table app.window using delta as {net}"))
    keys = ", ".join(str(row[0]) for row in bench.sql("select id from app.window order by id"))  # type: ignore[index]
    upserts = "where _change_type <> 'delete'"
    bench.sql(f"set {CONSTRAINT_CHECK} = false")
    bench.sql(f"set {PUSHDOWN} = false")
    try:
        timed(
            "replace_from_table",
            lambda: writes.bounded(
                f"insert into analytics.rw replace where id in ({keys}) select {COLUMNS} from app.window {upserts}"
            ),
        )
        timed(
            "replace_from_query",
            lambda: writes.bounded(
                f"insert into analytics.rw_checked replace where id in ({keys}) select {COLUMNS} from ({net}) {upserts}"
            ),
        )
        timed("in_scan", lambda: bench.sql(f"select count(*) from analytics.rw where id in ({keys})"))
    finally:
        bench.sql(f"reset {CONSTRAINT_CHECK}")
        bench.sql(f"reset {PUSHDOWN}")
    timed(
        "rebuild",
        lambda: bench.sql(f"create or replace table analytics.rebuilt using delta as select {COLUMNS} from app.src"),
    )
    writes.after = through
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "window_read.json")
    parser.add_argument("--source-vectors", choices=("on", "off"), default="on")
    args = parser.parse_args()
    started = time.perf_counter()
    points: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tablestream-window-") as work:
        writes = Writes(Bench(Path(work)), args.rows)
        # Two deletion-vector copies: analytics.rw and analytics.rw_checked (scattered_writes' names).
        writes.create(["replace_where_dv", "replace_where_dv_checked"])
        if args.source_vectors == "off":
            writes.sql("alter table app.src set tblproperties ('delta.enableDeletionVectors' = 'false')")
        for round in range(1, args.rounds + 1):
            print(f"round {round}", flush=True)
            points.append({"round": round, **one_round(writes, args.rows, round)})
    line = "RESULT " + " ".join(
        f"{step}={statistics.median(float(point[step]) for point in points):.2f}"  # type: ignore[arg-type]
        for step in STEPS
    )
    write_points(args.out, vars(args), started, points, line)


if __name__ == "__main__":
    main()

"""What 1,000 replaceWhere commits do to a target's history: run for issue 78 at 15c6e52
(2026-12-05, measured on b011dd7 with this script); bench/README.md, "A replaceWhere write's
history", keeps what it decided: the target's reads do not grow with the stored key lists, so the
history needs no cap on the keys a window lists (the cap bounds the statement's size instead).

What a target's history costs after many `INSERT ... REPLACE WHERE <key> IN (<the
window's keys>)` commits, each of which stores its predicate (the whole key list) in its
commitInfo (issue: scattered changes).

A target of `--rows` keyed rows with deletion vectors on gets `--commits` such commits, each
replacing `--keys` keys spread over the key range (as a scattered window's write would), with the
stream's marker (txnAppId, txnVersion) on each. At 0 commits and at each of `--at`, it measures,
each the median of 5 with Delta's in-process log cache cleared first (as a new `dbt run` process
finds it):
- `history_1`, `history_50`: DESCRIBE HISTORY LIMIT 1 and LIMIT 50 (the package reads the newest
  rows for its marker and widens to 50 while the marker is missing);
- `snapshot`: the table's row count, which loads its snapshot (the last checkpoint and the commits
  after it);
- `detail`: DESCRIBE DETAIL;
and the bytes of the table's _delta_log and of one commit's commitInfo.

    python bench/experiments/replace_where_history.py           # 1,000 commits of 6,666 keys
    python bench/experiments/replace_where_history.py --commits 50 --at 10 50 --out /tmp/history.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import RESULTS, Bench, write_points

TABLE = "analytics.target"
READS = {
    "history_1": f"describe history {TABLE} limit 1",
    "history_50": f"describe history {TABLE} limit 50",
    "snapshot": f"select count(*) from {TABLE}",
    "detail": f"describe detail {TABLE}",
}


def replace_sql(rows: int, keys: int, commit: int) -> str:
    """A commit replacing `keys` keys spread over the key range, one offset further each commit."""
    stride = max(1, rows // keys)
    listed = ", ".join(str(key) for key in range(commit % stride, rows, stride))
    return (
        f"insert into {TABLE} with ('txnAppId' = 'bench/history', 'txnVersion' = '{commit}') "
        f"replace where id in ({listed}) "
        f"select id, 'c{commit}' as category, cast(id as double) as amount from range({commit % stride}, {rows}, {stride})"
    )


def log_bytes(bench: Bench) -> tuple[int, int]:
    """The bytes of the table's _delta_log, and of its newest commit's commitInfo line."""
    location = Path(str(bench.sql(f"describe detail {TABLE}")[0]["location"]).removeprefix("file:")) / "_delta_log"
    total = sum(path.stat().st_size for path in location.iterdir() if path.is_file())
    newest = max(location.glob("*.json"))
    info = next((len(line) for line in newest.read_text().splitlines() if line.startswith('{"commitInfo"')), 0)
    return total, info


def measured(bench: Bench) -> dict[str, float]:
    """Each read's median seconds over 5 tries, each after clearing Delta's log cache."""
    delta_log = bench.spark._jvm.org.apache.spark.sql.delta.DeltaLog  # type: ignore[attr-defined]
    seconds: dict[str, float] = {}
    for name, statement in READS.items():
        tries = []
        for _ in range(5):
            delta_log.clearCache()
            started = time.perf_counter()
            bench.sql(statement)
            tries.append(time.perf_counter() - started)
        seconds[name] = statistics.median(tries)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=6_666)
    parser.add_argument("--commits", type=int, default=1_000)
    parser.add_argument("--at", type=int, nargs="+", default=[100, 500, 1_000])
    parser.add_argument("--out", type=Path, default=RESULTS / "replace_where_history.json")
    args = parser.parse_args()
    started = time.perf_counter()
    points: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tablestream-history-") as work:
        bench = Bench(Path(work))
        bench.sql("drop schema if exists analytics cascade")
        bench.sql("create schema analytics")
        bench.sql(
            f"create table {TABLE} using delta tblproperties ('delta.enableDeletionVectors' = 'true') "
            f"as select id, 'c' as category, cast(id as double) as amount from range({args.rows})"
        )

        def point(commits: int, commit_seconds: float | None) -> None:
            total, info = log_bytes(bench)
            reads = measured(bench)
            points.append(
                {"commits": commits, "log_bytes": total, "commit_info_bytes": info, "commit_s": commit_seconds} | reads
            )
            print(json.dumps(points[-1]))

        point(0, None)
        durations: list[float] = []
        for commit in range(1, args.commits + 1):
            began = time.perf_counter()
            bench.sql(replace_sql(args.rows, args.keys, commit))
            durations.append(time.perf_counter() - began)
            if commit in args.at:
                point(commit, statistics.median(durations[-50:]))
        rows = int(bench.sql(f"select count(*) from {TABLE}")[0][0])  # type: ignore[index]
        assert rows == args.rows, f"the target holds {rows} rows, not {args.rows}"
    first, last = points[0], points[-1]
    line = "RESULT " + " ".join(
        f"{name}_growth={float(last[name]) / float(first[name]):.2f}"  # type: ignore[arg-type]
        for name in READS
    )
    line += f" commit_info_kb={float(last['commit_info_bytes']) / 1024:.0f}"  # type: ignore[arg-type]
    line += f" log_mb={float(last['log_bytes']) / 2**20:.1f}"  # type: ignore[arg-type]
    write_points(args.out, vars(args), started, points, line)


if __name__ == "__main__":
    main()

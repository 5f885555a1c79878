"""What the length of a replaceWhere's key list costs: run for issue 78 at aac6960 (2026-12-05);
bench/README.md, "A replaceWhere's key list", keeps what it decided: the marked protocol's replace
commit turns Delta's constraint check off, `replace_where_max_keys` defaults to 100,000, and the
reapply protocol, which cannot turn the check off, lists at most 10,000 keys.

What the length of a replaceWhere's key list costs, with Delta's check of every
inserted row against the predicate on (Delta's default, and all a SQL warehouse can do) and off
(what the marked protocol's commit sets: `replaceWhere.constraintCheck.enabled`), so as to bound
the keys a window may list (issue: scattered changes).

A target of `--rows` keyed rows with deletion vectors on gets, for each of `--keys`, one
`INSERT INTO ... REPLACE WHERE id IN (<that many keys spread over the key range>) SELECT <their
new rows>`, timed with the check on and then off; the target's row count is checked after each.
Measured too: the seconds Spark takes to plan the statement (EXPLAIN) and its size.

    python bench/experiments/replace_where_keys.py           # 2M rows; 10,000, 50,000, 100,000 keys
    python bench/experiments/replace_where_keys.py --rows 200000 --keys 1000 5000 --out /tmp/keys.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import RESULTS, Bench, write_points

TABLE = "analytics.target"
CONSTRAINT_CHECK = "spark.databricks.delta.replaceWhere.constraintCheck.enabled"


def replace_sql(rows: int, keys: int) -> str:
    """Replaces `keys` keys spread over the key range with rows of the same keys."""
    stride = max(1, rows // keys)
    listed = ", ".join(f"{key}L" for key in range(0, rows, stride))
    return f"insert into {TABLE} replace where id in ({listed}) select id, -id as v from range(0, {rows}, {stride})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    parser.add_argument("--out", type=Path, default=RESULTS / "replace_where_keys.json")
    args = parser.parse_args()
    started = time.perf_counter()
    points: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tablestream-keys-") as work:
        bench = Bench(Path(work))
        bench.sql("drop schema if exists analytics cascade")
        bench.sql("create schema analytics")
        bench.sql(
            f"create table {TABLE} using delta tblproperties ('delta.enableDeletionVectors' = 'true') "
            f"as select id, id as v from range({args.rows})"
        )
        for keys in args.keys:
            statement = replace_sql(args.rows, keys)
            began = time.perf_counter()
            bench.sql(f"explain {statement}")
            point: dict[str, object] = {
                "keys": keys,
                "sql_bytes": len(statement),
                "plan_s": time.perf_counter() - began,
            }
            for checked in (True, False):
                bench.sql(f"set {CONSTRAINT_CHECK} = {str(checked).lower()}")
                began = time.perf_counter()
                bench.sql(statement)
                point["checked_s" if checked else "unchecked_s"] = time.perf_counter() - began
                count = int(bench.sql(f"select count(*) from {TABLE}")[0][0])  # type: ignore[index]
                assert count == args.rows, f"the target holds {count} rows, not {args.rows}"
            bench.sql(f"reset {CONSTRAINT_CHECK}")
            points.append(point)
            print(json.dumps(point), flush=True)
    line = "RESULT " + " ".join(
        f"checked_{point['keys']}={float(point['checked_s']):.1f} "  # type: ignore[arg-type]
        f"unchecked_{point['keys']}={float(point['unchecked_s']):.1f}"  # type: ignore[arg-type]
        for point in points
    )
    write_points(args.out, vars(args), started, points, line)


if __name__ == "__main__":
    main()

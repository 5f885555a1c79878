"""What finding a replaceWhere's listed keys in its target costs: run for issue 78 at f894302
(2026-12-05, measured on e8effc5 with this script); bench/README.md, "Finding the listed keys",
keeps what it decided: a replace's commit turns Parquet's filter pushdown off (42b580c), which
tested each row group and page against the whole key list at a cost above the scan it saved.

A replaceWhere deletes the rows its `<key> IN (<the window's keys>)` predicate selects, so its
DELETE scans the target's key column against the list. On a 10M-row target with deletion
vectors in `--scale`'s layout (key order, files of 250,000 rows), for each key count, 3 times each:
- `id_scan`: `count(*), max(id)`, the key column's scan alone;
- `in_list`: `count(*) WHERE id IN (<the keys>)`, Spark's and Delta's defaults;
- `in_list_no_pushdown`: the same with `spark.sql.parquet.filterPushdown` off, so that Parquet does
  not test its row groups and pages against the list;
- `semi_join`: `count(*) WHERE id IN (SELECT id FROM <a view of the same keys>)`, a semi join.

    python bench/experiments/key_list_scan.py          # 10M rows, 10,000 and 100,000 keys: 4 minutes here
    python bench/experiments/key_list_scan.py --rows 1000000 --keys 1000 --out /tmp/key_list_scan.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import FILE_ROWS, RESULTS, Bench, write_points

TABLE = "analytics.keyed"
PUSHDOWN = "spark.sql.parquet.filterPushdown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "key_list_scan.json")
    args = parser.parse_args()
    started = time.perf_counter()
    points: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tablestream-keylist-") as work:
        bench = Bench(Path(work))
        bench.sql("drop schema if exists analytics cascade")
        bench.sql("create schema analytics")
        bench.sql(f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}")
        bench.sql(
            f"create table {TABLE} using delta tblproperties ('delta.enableDeletionVectors' = 'true') as "
            "select id, concat('c', cast(id % 100 as string)) as category, cast(id % 1000 as double) / 10 as amount, "
            f"timestamp '2026-01-01 00:00:00' as updated_at from range({args.rows}) order by id"
        )
        bench.sql("reset spark.sql.files.maxRecordsPerFile")

        def timed(statement: str) -> list[float]:
            seconds = []
            for _ in range(args.repeats):
                began = time.perf_counter()
                bench.sql(statement)
                seconds.append(time.perf_counter() - began)
            return seconds

        for keys in args.keys:
            stride = args.rows // keys
            listed = ", ".join(f"{i * stride + 7}L" for i in range(keys))
            bench.sql(
                f"create or replace temporary view listed_keys as select id * {stride} + 7 as id from range({keys})"
            )
            counted = f"select count(*) from {TABLE} where id in ({listed})"
            point: dict[str, object] = {"keys": keys, "id_scan": timed(f"select count(*), max(id) from {TABLE}")}
            point["in_list"] = timed(counted)
            bench.sql(f"set {PUSHDOWN} = false")
            try:
                point["in_list_no_pushdown"] = timed(counted)
            finally:
                bench.sql(f"reset {PUSHDOWN}")
            point["semi_join"] = timed(f"select count(*) from {TABLE} where id in (select id from listed_keys)")
            found = bench.sql(counted)[0][0]  # type: ignore[index]
            assert found == keys, f"{found} of the {keys} listed keys found"
            print(point, flush=True)
            points.append(point)
    line = "RESULT " + " ".join(
        f"{step}_{point['keys']}={statistics.median(point[step]):.2f}"  # type: ignore[arg-type]
        for point in points
        for step in ("id_scan", "in_list", "in_list_no_pushdown", "semi_join")
    )
    write_points(args.out, vars(args), started, points, line)


if __name__ == "__main__":
    main()

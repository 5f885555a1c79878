"""The layout and the plan of a rewrite from itself (stream_rewrite_sql), measured for issue 97 at
d532d70 (2026-12-06); bench/README.md, "The write of a window", keeps what it decided.

A key-ordered copy of bench/run.py's bounded source (files of 250,000 rows; `rows` rows, default
2M) is rewritten from itself after each of 3 scattered 0.1% windows (the window's keys anti
joined, broadcast, and its upserts appended), once with Spark's packing of files into tasks and
once with each file one task (`spark.sql.files.openCostInBytes` above any split, the package's
`aligned` layout). After each round: how many pairs of files have overlapping key ranges (a
clustered window's MERGE reads every file whose range holds one of its keys). Then the rewrite's
physical plan: whether the anti join is broadcast and whether the window is read once.

    .venv/bin/python bench/experiments/rewrite_layout.py [rows]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import FILE_ROWS, change_statements, net_window_sql, source_statements

COLUMNS = "id, category, amount, updated_at"
ALIGNED = {"spark.sql.files.openCostInBytes": str(1 << 40)}


def main() -> None:
    from dbt.adapters.tablestream._session import LocalSpark

    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    spark = LocalSpark.root(Path(tempfile.mkdtemp(prefix="tablestream-layout-")) / "warehouse", {})

    def sql(statement: str) -> list:
        return spark.sql(statement).collect()

    for schema in ("app", "analytics"):
        sql(f"create schema if not exists {schema}")
    for statement in source_statements(rows, bounded=True):
        sql(statement)
    sql(f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}")
    for name in ("packed", "aligned"):
        sql(f"create table analytics.{name} using delta as select {COLUMNS} from app.src order by id")
    after = int(sql("describe history app.src limit 1")[0]["version"])
    rewrite = (
        "select /*+ broadcast(w) */ t.id, t.category, t.amount, t.updated_at from analytics.{name} as t"
        " left anti join (select id from app.window) as w on t.id = w.id"
        f" union all select {COLUMNS} from app.window where _change_type <> 'delete'"
    )
    for round in (1, 2, 3):
        for statement in change_statements(rows, 0.001, round, "scattered"):
            sql(statement)
        through = int(sql("describe history app.src limit 1")[0]["version"])
        sql(
            f"create or replace table app.window using delta as select {COLUMNS}, _change_type from ({net_window_sql(after, through)})"
        )
        after = through
        for name, settings in (("packed", {}), ("aligned", ALIGNED)):
            for key, value in settings.items():
                sql(f"set {key} = {value}")
            started = time.perf_counter()
            sql(f"insert overwrite analytics.{name} {rewrite.format(name=name)}")
            seconds = time.perf_counter() - started
            for key in settings:
                sql(f"reset {key}")
            spans = [
                (row.lo, row.hi)
                for row in sql(
                    f"select min(id) as lo, max(id) as hi from analytics.{name} group by _metadata.file_path"
                )
            ]
            overlapping = sum(1 for i, a in enumerate(spans) for b in spans[i + 1 :] if b[0] <= a[1] and a[0] <= b[1])
            print(f"round {round} {name}: {seconds:.1f} s, {len(spans)} files, {overlapping} overlapping pairs")
    window = net_window_sql(0, after)
    plan_sql = (
        "select /*+ broadcast(w) */ t.id, t.category, t.amount, t.updated_at from analytics.aligned as t"
        f" left anti join (select id from ({window}) as n) as w on t.id = w.id"
        f" union all select {COLUMNS} from ({window}) as n2 where _change_type <> 'delete'"
    )
    frame = spark.sql(plan_sql)
    frame.collect()
    plan = frame._jdf.queryExecution().executedPlan().toString()
    print(
        f"RESULT broadcast_anti_join={'BroadcastHashJoin' in plan and 'LeftAnti' in plan} "
        f"window_read_once={'ReusedExchange' in plan} sort_merge_joins={plan.count('SortMergeJoin')}"
    )


if __name__ == "__main__":
    main()

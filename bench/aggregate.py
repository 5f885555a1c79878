"""Benchmark: stream_aggregate against the same GROUP BY as a `table` model and a hand-written
incremental over the change feed, on delta-spark (docs/stream-aggregate.md).

`app.orders` holds `--sizes` rows (10M by default) of `--customers` customers (100,000 by default):
customer_id is id div (rows / customers), so a customer's orders are neighbours in the source's key-ordered files of
250,000 rows; the change feed and deletion vectors are on. Two patterns, `--rounds` each:

- `clustered`: 0.1% of the rows change in three commits, as bench/run.py's clustered change: a
  block of orders paid (amount and paid_at updated), the next block deleted, new orders of new
  customers inserted;
- `extremes`: the first order of 100 neighbouring customers (0.1% of 100,000) deleted: every touched
  group loses its min(ordered_at), so stream_aggregate reads each again from the source.

After each change every variant runs once, in a rotated order:

- `stream_aggregate`: bench/project/models/aggregate_stream.sql;
- `table`: bench/project/models/aggregate_table.sql, the GROUP BY rebuilt;
- `cdf_incremental`: what a user writes by hand over the change feed, as bare SQL: the customers
  the window's change rows name, recomputed from the source as of the window's end, one MERGE.

Reported: each variant's median per pattern and size, and the RESULT line of ratios to `table`
(bench/results/aggregate.json, aggregate.png with matplotlib).

    python bench/aggregate.py                               # 10M rows, 3 rounds per pattern
    python bench/aggregate.py --sizes 10000000 100000000 --rounds 3
    python bench/aggregate.py --customers 2000000 --out bench/results/aggregate_groups.json   # a large target
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    FILE_ROWS,
    TINY_HELP,
    TINY_ROWS,
    Bench,
    Measurement,
    bench_workspace,
    machine,
    results_path,
    run_model,
)

CUSTOMERS = 100_000
PATTERNS = ("clustered", "extremes")
VARIANTS = ("stream_aggregate", "table", "cdf_incremental")
MODELS = {"stream_aggregate": "aggregate_stream", "table": "aggregate_table"}
# The GROUP BY of both models (bench/project/models/aggregate_*.sql).
AGGREGATES = (
    "count(*) as orders, sum(amount) as revenue, count(paid_at) as paid_orders, avg(amount) as avg_amount, "
    "min(ordered_at) as first_order, max(ordered_at) as last_order"
)
TOTALS = ("orders", "revenue", "paid_orders", "avg_amount", "first_order", "last_order")


def order_rows(first: int, last: int, per: int) -> str:
    """Orders `first` to `last - 1`: customer id div `per`, an amount, a third unpaid, ordered in id order."""
    return (
        f"select id, id div {per} as customer_id, cast(id % 1000 as decimal(12, 2)) / 10 as amount, "
        "case when id % 3 = 0 then null else timestamp_seconds(1767225600 + id) end as paid_at, "
        f"timestamp_seconds(1735689600 + id) as ordered_at from range({first}, {last})"
    )


def create_source(bench: Bench, rows: int, customers: int = CUSTOMERS) -> None:
    for schema in ("app", "analytics"):
        bench.sql(f"drop schema if exists {schema} cascade")
        bench.sql(f"create schema {schema}")
    bench.sql(
        "create table app.orders (id bigint, customer_id bigint, amount decimal(12, 2), paid_at timestamp, "
        "ordered_at timestamp) using delta tblproperties ('delta.enableChangeDataFeed' = 'true', "
        "'delta.enableDeletionVectors' = 'true')"
    )
    bench.sql(f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}")
    bench.sql(f"insert into app.orders {order_rows(0, rows, rows // customers)} order by id")
    bench.sql("reset spark.sql.files.maxRecordsPerFile")
    bench.sql(
        f"create table analytics.aggregate_cdf using delta as select customer_id, {AGGREGATES} from app.orders group by customer_id"
    )


def change_source(bench: Bench, rows: int, round: int, pattern: str, customers: int = CUSTOMERS) -> None:
    per = rows // customers
    if pattern == "extremes":
        first = (round * 7919 * 100) % (customers - 100)
        bench.sql(
            "merge into app.orders as t using (select customer_id, min(id) as id from app.orders "
            f"where customer_id >= {first} and customer_id < {first + 100} group by customer_id) as s "
            "on t.id = s.id when matched then delete"
        )
        return
    part = max(1, rows // 1000 // 3)
    start = (round * 7919 * part * 3) % (rows - 3 * part)
    fresh = rows + round * part
    bench.sql(
        "update app.orders set amount = amount + 1, paid_at = coalesce(paid_at, timestamp '2026-06-01 00:00:00') "
        f"where id >= {start} and id < {start + part}"
    )
    bench.sql(f"delete from app.orders where id >= {start + part} and id < {start + 2 * part}")
    bench.sql(f"insert into app.orders {order_rows(fresh, fresh + part, per)}")


class HandWritten:
    """The incremental a user writes over the change feed: the window's customers recomputed from
    the source as of its end, merged into `analytics.aggregate_cdf`."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.after = self.latest()

    def latest(self) -> int:
        return int(self.bench.sql("describe history app.orders limit 1")[0]["version"])

    def run(self, statements: list[tuple[str, float]]) -> None:
        through = self.latest()
        if through <= self.after:
            return
        assignments = ", ".join(f"t.{name} = s.{name}" for name in TOTALS)
        self.bench.sql(
            f"""
            merge into analytics.aggregate_cdf as t
            using (
              select touched.customer_id, totals.orders is null as gone, {", ".join(f"totals.{name}" for name in TOTALS)}
              from (select distinct customer_id from table_changes('app.orders', {self.after + 1}, {through})) as touched
              left join (
                select customer_id, {AGGREGATES} from app.orders version as of {through}
                where customer_id in (select customer_id from table_changes('app.orders', {self.after + 1}, {through}))
                group by customer_id
              ) as totals on totals.customer_id = touched.customer_id
            ) as s
            on t.customer_id = s.customer_id
            when matched and s.gone then delete
            when matched then update set {assignments}
            when not matched and not s.gone then insert (customer_id, {", ".join(TOTALS)})
              values (s.customer_id, {", ".join(f"s.{name}" for name in TOTALS)})
            """
        )
        self.after = through


def target_rows_copied(bench: Bench) -> dict[str, int]:
    """What the stream_aggregate target's last MERGE rewrote: the target rows it copied unchanged and
    the files it removed and added (Delta's operationMetrics)."""
    metrics = bench.sql("describe history analytics.aggregate_stream limit 1")[0]["operationMetrics"] or {}
    return {
        name: int(metrics.get(name, 0))
        for name in ("numTargetRowsCopied", "numTargetFilesRemoved", "numTargetFilesAdded")
    }


def same_totals(bench: Bench) -> bool:
    """Every variant's target holds the GROUP BY of the source as it is."""
    expected = f"select customer_id, {AGGREGATES} from app.orders group by customer_id"
    columns = f"customer_id, {', '.join(TOTALS)}"
    for target in ("analytics.aggregate_stream", "analytics.aggregate_table", "analytics.aggregate_cdf"):
        for left, right in (
            (expected, f"select {columns} from {target}"),
            (f"select {columns} from {target}", expected),
        ):
            if bench.sql(f"select count(*) from (({left}) except all ({right}))")[0][0]:
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--customers", type=int, default=CUSTOMERS, help="groups of the aggregate")
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/aggregate.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        # 1,000 customers: the extremes pattern deletes the first order of 100 neighbouring ones.
        args.sizes, args.rounds, args.customers = [TINY_ROWS], 1, 1_000
    args.out = results_path(args.out, "aggregate.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    measurements: list[Measurement] = []
    checked: dict[int, bool] = {}
    copied: list[dict[str, Any]] = []
    with bench_workspace("tablestream-bench-aggregate-") as work:
        bench = Bench(work)
        for rows in args.sizes:
            built = time.perf_counter()
            create_source(bench, rows, args.customers)
            bench.dbt(["run", "--full-refresh", "-s", *MODELS.values()])
            print(f"{rows:,} rows: source and targets built in {time.perf_counter() - built:.0f} s", flush=True)
            hand = HandWritten(bench)
            actions = [
                ("stream_aggregate", run_model(bench, MODELS["stream_aggregate"])),
                ("table", run_model(bench, MODELS["table"])),
                ("cdf_incremental", hand.run),
            ]
            for offset, pattern in enumerate(PATTERNS):
                for round in range(1, args.rounds + 1):
                    change_source(bench, rows, offset * args.rounds + round, pattern, args.customers)
                    shift = round % len(actions)
                    done = [
                        bench.measure(variant, rows, 0.001, round, action, pattern)
                        for variant, action in actions[shift:] + actions[:shift]
                    ]
                    copied.append({"rows": rows, "pattern": pattern, "round": round, **target_rows_copied(bench)})
                    summary = ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done)
                    summary += f" (stream_aggregate copied {copied[-1]['numTargetRowsCopied']:,} target rows)"
                    print(f"{rows:,} rows, {pattern}, round {round}/{args.rounds}: {summary}", flush=True)
                    measurements += done
            checked[rows] = same_totals(bench)
            print(f"{rows:,} rows: every target equals the GROUP BY of the source: {checked[rows]}", flush=True)
    table = medians(measurements)
    parts = []
    for pattern, sizes in table.items():
        for rows, variants in sizes.items():
            for variant in ("stream_aggregate", "cdf_incremental"):
                parts.append(
                    f"{pattern}_{variant}_vs_table_{rows // 1_000_000}m={variants[variant] / variants['table']:.2f}"
                )
    line = "RESULT " + " ".join(parts) + f" targets_equal_group_by={all(checked.values())}"
    print("\n" + "\n".join(markdown(table)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine(),
        "arguments": {
            "sizes": args.sizes,
            "rounds": args.rounds,
            "customers": args.customers,
            "patterns": list(PATTERNS),
        },
        "seconds": time.perf_counter() - started,
        "medians": table,
        "targets_equal_group_by": checked,
        "measurements": [{k: v for k, v in m.__dict__.items() if k != "statement_log"} for m in measurements],
        "stream_aggregate_merges": copied,
        "result": line,
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    png = args.out.with_suffix(".png")
    print(f"plot: {png}" if plot(table, png) else "plot skipped: pip install '.[bench]' for matplotlib")
    print(line)
    return 0


def medians(measurements: list[Measurement]) -> dict[str, dict[int, dict[str, float]]]:
    """Median seconds per pattern, size and variant."""
    table: dict[str, dict[int, dict[str, float]]] = {}
    for pattern in PATTERNS:
        for rows in sorted({m.rows for m in measurements}):
            table.setdefault(pattern, {})[rows] = {
                variant: statistics.median(
                    m.seconds for m in measurements if (m.pattern, m.rows, m.variant) == (pattern, rows, variant)
                )
                for variant in VARIANTS
            }
    return table


def markdown(table: dict[str, dict[int, dict[str, float]]]) -> list[str]:
    lines = [
        "| pattern | rows | " + " | ".join(VARIANTS) + " | stream_aggregate / table |",
        "|---|---|---|---|---|---|",
    ]
    for pattern, sizes in table.items():
        for rows, variants in sizes.items():
            cells = " | ".join(f"{variants[variant]:.2f}" for variant in VARIANTS)
            lines.append(
                f"| {pattern} | {rows // 1_000_000}M | {cells} | {variants['stream_aggregate'] / variants['table']:.2f} |"
            )
    return lines


def plot(table: dict[str, dict[int, dict[str, float]]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, panels = plt.subplots(1, len(table), figsize=(5 * len(table), 4), squeeze=False)
    for panel, (pattern, sizes) in zip(panels[0], table.items(), strict=True):
        rows = list(sizes)
        for variant in VARIANTS:
            panel.plot(rows, [sizes[size][variant] for size in rows], marker="o", label=variant)
        panel.set_xscale("log")
        panel.set_title(f"{pattern} 0.1%")
        panel.set_xlabel("source rows")
        panel.set_ylabel("seconds (median)")
        panel.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return True


if __name__ == "__main__":
    sys.exit(main())

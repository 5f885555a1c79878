"""Benchmark: stream_merge with scd_type 2 (a history of every change) next to the SCD type 1
stream_merge over the same source and windows, on delta-spark.

- `scd2`: `scd_type: 2`, every column tracked, hard_deletes invalidate;
- `plain`: the SCD type 1 stream_merge (bench/project/models/plain.sql).

`app.src` holds `--rows` keyed rows (5M by default). Each round changes a scattered 0.1% of the
keys three times, in three commits (an amount, a category, the amount again), so every changed key
gets three versions in the history; then both variants run once, in a rotated order. Both
targets are built from the source's snapshot first. Reported: each variant's median wall time and
the ratio scd2 / plain (bench/results/history.json).

    python bench/history.py                 # 5M rows, 0.1% changed, 3 rounds
    python bench/history.py --rows 100000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import TINY_HELP, TINY_ROWS, Bench, Measurement, machine, results_path, run_model

VARIANTS = ("scd2", "plain")
CHANGES_PER_KEY = 3


def create_source(bench: Bench, rows: int) -> None:
    for schema in ("app", "analytics"):
        bench.sql(f"drop schema if exists {schema} cascade")
        bench.sql(f"create schema {schema}")
    bench.sql(
        "create table app.src (id bigint, category string, amount double, updated_at timestamp) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    bench.sql(
        f"insert into app.src select id, concat('c', cast(id % 100 as string)), cast(id % 1000 as double) / 10, "
        f"timestamp '2026-01-01 00:00:00' from range({rows})"
    )


def change_keys(bench: Bench, rows: int, fraction: float, round: int) -> None:
    """A scattered `fraction` of the keys, each changed CHANGES_PER_KEY times, one commit each."""
    size = max(1, int(rows * fraction))
    keys = f"select distinct (e * 7919 + {round * 104729}) % {rows} as id from range({size}) as r(e)"
    assignments = [
        "amount = t.amount + 1",
        f"category = concat('r{round}-', t.category)",
        "amount = t.amount + 1",
    ]
    for assignment in assignments[:CHANGES_PER_KEY]:
        bench.sql(
            f"merge into app.src as t using ({keys}) as s on t.id = s.id "
            f"when matched then update set {assignment}, updated_at = current_timestamp()"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/history.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rows, args.rounds = TINY_ROWS, 1
    args.out = results_path(args.out, "history.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tablestream-bench-history-"))
    measurements: list[Measurement] = []
    try:
        bench = Bench(work)
        create_source(bench, args.rows)
        bench.dbt(["run", "--full-refresh", "-s", *VARIANTS])
        print(f"{args.rows:,} rows: source and targets built in {time.perf_counter() - started:.0f} s", flush=True)
        actions = [(variant, run_model(bench, variant)) for variant in VARIANTS]
        for round in range(1, args.rounds + 1):
            change_keys(bench, args.rows, args.fraction, round)
            shift = round % len(actions)
            done = [
                bench.measure(variant, args.rows, args.fraction, round, action)
                for variant, action in actions[shift:] + actions[:shift]
            ]
            print(
                f"round {round}/{args.rounds}: " + ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done), flush=True
            )
            measurements += done
        versions = bench.sql("select count(*) as versions, count(dbt_valid_to) as closed from analytics.scd2")[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {
        variant: statistics.median(m.seconds for m in measurements if m.variant == variant) for variant in VARIANTS
    }
    ratio = medians["scd2"] / medians["plain"]
    print(f"\nmedian seconds ({args.rounds} rounds): " + ", ".join(f"{v} {s:.2f}" for v, s in medians.items()))
    print(f"history: {versions['versions']:,} versions, {versions['closed']:,} closed")
    line = f"RESULT scd2_vs_plain={ratio:.2f}"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "machine": machine(),
                "arguments": {
                    "rows": args.rows,
                    "fraction": args.fraction,
                    "changes_per_key": CHANGES_PER_KEY,
                    "rounds": args.rounds,
                },
                "seconds": time.perf_counter() - started,
                "medians": medians,
                "versions": {"all": versions["versions"], "closed": versions["closed"]},
                "measurements": [{k: v for k, v in m.__dict__.items() if k != "statement_log"} for m in measurements],
                "result": line,
            },
            indent=2,
        )
    )
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: stream_merge over a CDC event source (`sequence_by`) next to a plain stream_merge,
on delta-spark, with the same window sizes.

- `events`: 1M events over 100k keys (`app.events`, append-only, change data feed on), read by a
  stream_merge with `sequence_by`, `apply_as_deletes` and `delete_mode: hard` (so its tombstones
  are written every run);
- `events_ignore_nulls`: the same with `ignore_null_updates`, which also joins the window to the
  target and the tombstones;
- `plain`: the plain stream_merge (ordered by commit) over a 100k-row keyed table, `app.src`.

Each round appends a window of events (0.1% or 1% of the events table: 1,000 or 10,000), of which
20% are late (a sequence older than the key's), 10% deletes and a quarter partial updates (a
NULL amount), and applies the same number of changed rows to `app.src`; then every variant runs
once, in a rotated order. Reported: each variant's median wall time per window size and the ratio
of `events` to `plain` (bench/results/events.json).

    python bench/events.py                 # 1M events, windows of 0.1% and 1%, 3 rounds
    python bench/events.py --events 100000 --rounds 2
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

VARIANTS = ("events", "events_ignore_nulls", "plain")
KEYS = 100_000


def create_sources(bench: Bench, events: int) -> None:
    """`app.events`: every key's first event is a create, later ones updates; sequences from 1M up,
    so that a late event (a sequence below 1M) is older than any key's. `app.src`: the keys' rows."""
    for schema in ("app", "analytics"):
        bench.sql(f"drop schema if exists {schema} cascade")
        bench.sql(f"create schema {schema}")
    bench.sql(
        "create table app.events (id bigint, op string, seq bigint, category string, amount double) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    bench.sql(
        f"insert into app.events select id % {KEYS}, case when id < {KEYS} then 'c' else 'u' end, 1000000 + id, "
        f"concat('c', cast(id % 100 as string)), cast(id % 1000 as double) / 10 from range({events})"
    )
    bench.sql(
        "create table app.src (id bigint, category string, amount double, updated_at timestamp) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    bench.sql(
        f"insert into app.src select id, concat('c', cast(id % 100 as string)), cast(id % 1000 as double) / 10, "
        f"timestamp '2026-01-01 00:00:00' from range({KEYS})"
    )


def send_window(bench: Bench, size: int, round: int) -> None:
    """`size` events on scattered keys, one commit: 20% late, 10% deletes, a quarter with a NULL
    amount; and `size` changed rows of app.src (a tenth deleted and re-inserted, the rest updated)."""
    start = 2_000_000 + round * 100_000
    bench.sql(
        f"insert into app.events select (e * 7919 + {round * 104729}) % {KEYS} as id, "
        f"case when e % 10 = 3 then 'd' else 'u' end, "
        f"case when e % 5 = 0 then e else {start} + e end, "
        f"'late-or-new', case when e % 4 = 1 then null else cast(e as double) end from range({size}) as r(e)"
    )
    keys = f"select distinct (e * 7919 + {round * 104729}) % {KEYS} as id from range({size}) as r(e)"
    bench.sql(
        f"merge into app.src as t using ({keys}) as s on t.id = s.id "
        "when matched and t.id % 10 = 3 then delete "
        "when matched then update set amount = t.amount + 1, updated_at = current_timestamp()"
    )
    bench.sql(f"insert into app.src select id, 'again', 1.0, current_timestamp() from ({keys}) where id % 10 = 3")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.001, 0.01])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/events.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.events, args.fractions, args.rounds = TINY_ROWS, [0.01], 1
    args.out = results_path(args.out, "events.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tablestream-bench-events-"))
    measurements: list[Measurement] = []
    try:
        bench = Bench(work)
        create_sources(bench, args.events)
        bench.dbt(["run", "--full-refresh", "-s", *VARIANTS])
        print(
            f"{args.events:,} events over {KEYS:,} keys: sources and targets built in {time.perf_counter() - started:.0f} s"
        )
        actions = [(variant, run_model(bench, variant)) for variant in VARIANTS]
        for fraction in args.fractions:
            size = int(args.events * fraction)
            for round in range(1, args.rounds + 1):
                send_window(bench, size, round + int(fraction * 1000))
                shift = round % len(actions)
                done = [
                    bench.measure(variant, args.events, fraction, round, action)
                    for variant, action in actions[shift:] + actions[:shift]
                ]
                print(
                    f"window {size:,} events, round {round}/{args.rounds}: "
                    + ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done),
                    flush=True,
                )
                measurements += done
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {
        str(fraction): {
            variant: statistics.median(
                m.seconds for m in measurements if m.fraction == fraction and m.variant == variant
            )
            for variant in VARIANTS
        }
        for fraction in args.fractions
    }
    ratios = {fraction: values["events"] / values["plain"] for fraction, values in medians.items()}
    print(f"\nmedian seconds ({args.rounds} rounds):")
    print(f"  {'window':>10}  " + "".join(f"{variant:>22}" for variant in VARIANTS) + f"{'events / plain':>16}")
    for fraction, values in medians.items():
        size = int(args.events * float(fraction))
        print(f"  {size:>10,}  " + "".join(f"{values[v]:>22.2f}" for v in VARIANTS) + f"{ratios[fraction]:>16.2f}")
    line = "RESULT " + " ".join(f"events_vs_plain_{float(f):.1%}={ratio:.2f}" for f, ratio in ratios.items())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "machine": machine(),
                "arguments": {"events": args.events, "keys": KEYS, "fractions": args.fractions, "rounds": args.rounds},
                "seconds": time.perf_counter() - started,
                "medians": medians,
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

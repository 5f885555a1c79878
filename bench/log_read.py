"""Benchmark: a stream reading its source's changes from the Delta log's file actions
(`stream_read: delta_log`) next to the same stream reading the change data feed, and next to the
time-travel full diff a user would write without either (docs/delta-log-read.md).

`app.src` holds `--rows` keyed rows with the change feed on, written in key order in files of
`--file-rows` rows (250,000) (a table laid out by key, as appends of increasing ids leave it). Each round commits
a mixed change of `--fraction` of the keys in three commits (updates, deletes, new ids), clustered
(each a block of neighbouring keys) or scattered over every file (`--pattern`), or with `--pattern
append` one insert of `--fraction` of the rows (an event table), `--changes-per-window` times (once
by default: a window of a stream that runs as often as its source changes), then measures, in a
rotated order:
- `feed_read` / `log_read`: the compiled model's select (the window's change rows) of
  `table_stream` (the feed) and `table_stream_delta_log` (the log), counted by Spark, with no write;
- `full_diff`: `VERSION AS OF before` full outer join `VERSION AS OF after` on the key, the rows
  that differ, counted;
- `feed_run` / `log_run`: `dbt run` of each model (the read, the append, the offsets row).
Both reads see the same commits of the same table, so the files the log read opens are the ones
the feed's writer rewrote. Reported: medians and the ratios (bench/results/log_read.json).

    python bench/log_read.py                 # 10M rows, 0.1% changed, 3 rounds
    python bench/log_read.py --rows 1000000 --rounds 2
    python bench/log_read.py --deletion-vectors   # the source with deletion vectors on
    python bench/log_read.py --file-rows 50000 --out /tmp/log_read_50k.json   # smaller source files
    python bench/log_read.py --deletion-vectors --pattern scattered   # changes in every file
    python bench/log_read.py --pattern append --fraction 0.1 --out /tmp/log_read_append.json   # an event table's appends
    python bench/log_read.py --changes-per-window 5 --out /tmp/log_read_5.json   # a window of 5 changes (15 commits)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    FILE_ROWS,
    TINY_HELP,
    TINY_ROWS,
    Bench,
    Measurement,
    results_path,
    run_model,
    variant_medians,
    write_results,
)

MODELS = {"feed": "table_stream", "log": "table_stream_delta_log"}


def create_source(bench: Bench, rows: int, file_rows: int, deletion_vectors: bool = False) -> None:
    for schema in ("app", "analytics"):
        bench.sql(f"drop schema if exists {schema} cascade")
        bench.sql(f"create schema {schema}")
    vectors = ", 'delta.enableDeletionVectors' = 'true'" if deletion_vectors else ""
    bench.sql(
        "create table app.src (id bigint, category string, amount double, updated_at timestamp) using delta "
        f"tblproperties ('delta.enableChangeDataFeed' = 'true'{vectors})"
    )
    bench.sql(f"set spark.sql.files.maxRecordsPerFile = {file_rows}")
    try:
        bench.sql(
            f"insert into app.src select id, concat('c', cast(id % 100 as string)), cast(id % 1000 as double) / 10, "
            f"timestamp '2026-01-01 00:00:00' from range({rows}) order by id"
        )
    finally:
        bench.sql("reset spark.sql.files.maxRecordsPerFile")


def compiled_select(bench: Bench, model: str) -> str:
    """The model's select as `dbt compile` renders it now: the window from its offset to the source's latest version."""
    bench.dbt(["compile", "-s", model])
    return (bench.project / "target" / "compiled" / "tablestream_bench" / "models" / f"{model}.sql").read_text()


def counted(bench: Bench, sql: str) -> Callable[[list[tuple[str, float]]], None]:
    return lambda statements: bench.sql(f"select count(*) from ({sql}) as __counted")


def full_diff_sql(before: int, after: int) -> str:
    return f"""
        select coalesce(n.id, o.id) as id from (select * from app.src version as of {before}) as o
        full outer join (select * from app.src version as of {after}) as n on o.id = n.id
        where o.id is null or n.id is null
          or not (o.category <=> n.category and o.amount <=> n.amount and o.updated_at <=> n.updated_at)"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--deletion-vectors",
        action="store_true",
        help="the source with deletion vectors on: an UPDATE or DELETE marks rows in its files instead of rewriting them",
    )
    parser.add_argument(
        "--file-rows",
        type=int,
        default=FILE_ROWS,
        help="rows per file of the source (the package's max_rows_per_file default): the files a change rewrites",
    )
    parser.add_argument(
        "--pattern",
        choices=("clustered", "scattered", "append"),
        default="clustered",
        help="clustered: the updates and deletes each hit one block of keys; scattered: keys spread over every file; "
        "append: one insert of --fraction of the rows a round",
    )
    parser.add_argument(
        "--changes-per-window",
        type=int,
        default=1,
        help="the changes committed before each round's reads: a stream that runs less often than its source changes",
    )
    parser.add_argument("--out", type=Path, help="default bench/results/log_read.json (log_read_dv.json with vectors)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rows, args.rounds = TINY_ROWS, 1
    out = results_path(args.out, "log_read_dv.json" if args.deletion_vectors else "log_read.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tablestream-bench-log-read-"))
    measurements: list[Measurement] = []
    rows_read: dict[str, list[int]] = {"feed_read": [], "log_read": [], "full_diff": []}
    try:
        bench = Bench(work)
        create_source(bench, args.rows, args.file_rows, args.deletion_vectors)
        bench.dbt(["run", "--full-refresh", "-s", *MODELS.values()])
        files = bench.sql("describe detail app.src")[0]["numFiles"]
        print(f"{args.rows:,} rows in {files} files: source and targets built in {time.perf_counter() - started:.0f} s")
        for round in range(1, args.rounds + 1):
            before = bench.latest_version()
            for change in range(args.changes_per_window):
                bench.change_source(
                    args.rows, args.fraction, (round - 1) * args.changes_per_window + change + 1, args.pattern
                )
            after = bench.latest_version()
            reads = {f"{name}_read": compiled_select(bench, model) for name, model in MODELS.items()}
            reads["full_diff"] = full_diff_sql(before, after)
            for name, sql in reads.items():
                rows_read[name].append(int(bench.sql(f"select count(*) from ({sql}) as __counted")[0][0]))
            actions = [(name, counted(bench, sql)) for name, sql in reads.items()]
            actions += [(f"{name}_run", run_model(bench, model)) for name, model in MODELS.items()]
            shift = round % len(actions)
            done = [
                bench.measure(variant, args.rows, args.fraction, round, action, args.pattern)
                for variant, action in actions[shift:] + actions[:shift]
            ]
            print(
                f"round {round}/{args.rounds}: " + ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done), flush=True
            )
            measurements += done
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = variant_medians(measurements)
    line = (
        f"RESULT log_read_vs_feed_read={medians['log_read'] / medians['feed_read']:.2f} "
        f"log_run_vs_feed_run={medians['log_run'] / medians['feed_run']:.2f} "
        f"log_read_vs_full_diff={medians['log_read'] / medians['full_diff']:.2f}"
    )
    print(f"\nmedian seconds ({args.rounds} rounds): " + ", ".join(f"{v} {s:.2f}" for v, s in medians.items()))
    print("rows each read returned, per round: " + ", ".join(f"{k} {v}" for k, v in rows_read.items()))
    arguments = {
        "rows": args.rows,
        "fraction": args.fraction,
        "rounds": args.rounds,
        "file_rows": args.file_rows,
        "deletion_vectors": args.deletion_vectors,
        "pattern": args.pattern,
        "changes_per_window": args.changes_per_window,
    }
    write_results(out, arguments, started, measurements, line, rows_read=rows_read)
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

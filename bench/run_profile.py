"""Benchmark: where one warm stream run's seconds go, statement by statement, against its `table`
counterpart (bench/README.md, "Where a run goes").

dbt's log times each statement's execution. On the local profile (`method: session`) a query that
returns rows runs when its rows are fetched, after dbt took that time, so a run's fetched queries
(the offsets row, a listing of groups, the key ranges) look like dbt's own work in its log. This
script times both halves of every statement in the bench's own process (the adapter's cursor,
wrapped) and leaves the remainder of the run to dbt itself: parsing, the model's Jinja, the
adapter's cache, writing artifacts.

Sources, as the benchmarks that measure these models at scale build them:

- `aggregate` (bench/aggregate.py): `app.orders` of `--rows` orders of 100,000 customers, the models
  `aggregate_stream` (stream_aggregate) and `aggregate_table` (the same GROUP BY rebuilt);
- `keyed` (bench/run.py --scale): `app.src` of `--rows` keyed rows in key-ordered files of 250,000,
  the models `stream_merge` and `rebuild` (a `table` of the source).

Each round commits a clustered 0.1% change (a third updates, a third deletes, a third new keys),
then runs both models once, in a rotated order; the first `--warmup` rounds are not kept (the
session's first runs of each kind of work are seconds slower). Reported: per model the median seconds of the run,
of its statements' execution, of their fetches, and of the rest; the round with the median run
statement by statement; a RESULT line; bench/results/run_profile_<source>.json.

    python bench/run_profile.py                                  # aggregate, 10M rows, 5 rounds
    python bench/run_profile.py --source keyed
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aggregate
from _harness import TINY_HELP, Bench, bench_workspace, machine, results_path

MODELS = {"aggregate": ("aggregate_stream", "aggregate_table"), "keyed": ("stream_merge", "rebuild")}


class Statement:
    """One statement a run sent: its first words, and the seconds it took to execute and to fetch."""

    def __init__(self, sql: str) -> None:
        sql = sql.split("*/", 1)[1] if sql.lstrip().startswith("/*") else sql
        self.sql = " ".join(sql.split())[:100]
        self.execute = 0.0
        self.fetch = 0.0


@contextmanager
def timed_statements() -> Iterator[list[Statement]]:
    """Every statement the adapter's cursors run meanwhile, timed (execution and fetch apart)."""
    from dbt.adapters.tablestream.connections import ThreadSessionCursor

    sent: list[Statement] = []
    execute, fetchall = ThreadSessionCursor.execute, ThreadSessionCursor.fetchall

    def timed_execute(cursor: Any, sql: str, *parameters: Any) -> None:
        statement = Statement(sql)
        sent.append(statement)
        cursor._timed_statement = statement
        started = time.perf_counter()
        try:
            execute(cursor, sql, *parameters)
        finally:
            statement.execute = time.perf_counter() - started

    def timed_fetchall(cursor: Any) -> Any:
        started = time.perf_counter()
        try:
            return fetchall(cursor)
        finally:
            statement = getattr(cursor, "_timed_statement", None)
            if statement is not None:
                statement.fetch += time.perf_counter() - started

    ThreadSessionCursor.execute = timed_execute  # type: ignore[method-assign]
    ThreadSessionCursor.fetchall = timed_fetchall  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        ThreadSessionCursor.execute = execute  # type: ignore[method-assign]
        ThreadSessionCursor.fetchall = fetchall  # type: ignore[method-assign]


def profile_run(bench: Bench, model: str, logged: list[tuple[str, float]] | None = None) -> dict[str, Any]:
    """One `dbt run` of `model`: its seconds, split into its statements' execution, their fetches and
    the rest; `logged` collects what dbt's log says of each statement (Bench.dbt)."""
    with timed_statements() as sent:
        started = time.perf_counter()
        bench.dbt(["run", "-s", model], logged)
        seconds = time.perf_counter() - started
    execute = sum(statement.execute for statement in sent)
    fetch = sum(statement.fetch for statement in sent)
    return {
        "model": model,
        "seconds": seconds,
        "execute": execute,
        "fetch": fetch,
        "rest": seconds - execute - fetch,
        "statements": [{"sql": s.sql, "execute": s.execute, "fetch": s.fetch} for s in sent],
    }


def prepare(bench: Bench, source: str, rows: int, pattern: str = "clustered") -> Callable[[int], None]:
    """Builds the source and both models; returns what commits round `n`'s change (`pattern`:
    clustered or scattered, bench/_harness.py's change_statements)."""
    if source == "aggregate":
        aggregate.create_source(bench, rows)
        bench.dbt(["run", "--full-refresh", "-s", *MODELS[source]])
        return lambda n: aggregate.change_source(bench, rows, n, pattern)
    bench.create_source(rows, bounded=True)
    bench.dbt(["run", "--full-refresh", "-s", *MODELS[source]])
    return lambda n: bench.change_source(rows, 0.001, n, pattern)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of a model's runs, and its median run itself."""
    ordered = sorted(runs, key=lambda run: run["seconds"])
    return {
        **{part: statistics.median(run[part] for run in runs) for part in ("seconds", "execute", "fetch", "rest")},
        "statements": len(ordered[len(ordered) // 2]["statements"]),
        "median_run": ordered[len(ordered) // 2],
    }


def median_run_lines(model: str, found: dict[str, Any]) -> list[str]:
    """A model's median run (`summary`), statement by statement: its execution and its fetch."""
    run = found["median_run"]
    return [
        f"{model}, the median run: {run['seconds']:.2f} s",
        "| execute | fetch | statement |",
        "|---|---|---|",
        *(f"| {s['execute']:.2f} | {s['fetch']:.2f} | `{s['sql'][:80]}` |" for s in run["statements"]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=tuple(MODELS), default="aggregate")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3, help="rounds run first and not kept")
    parser.add_argument("--pattern", choices=("clustered", "scattered"), default="clustered")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        # bench/aggregate.py's source holds 100,000 customers, at least one order each.
        args.rows, args.rounds, args.warmup = aggregate.CUSTOMERS, 1, 0
    suffix = "" if args.pattern == "clustered" else f"_{args.pattern}"
    out = results_path(args.out, f"run_profile_{args.source}{suffix}.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    runs: dict[str, list[dict[str, Any]]] = {model: [] for model in MODELS[args.source]}
    with bench_workspace("tablestream-bench-profile-") as work:
        bench = Bench(work)
        change = prepare(bench, args.source, args.rows, args.pattern)
        print(f"{args.rows:,} rows: source and models built in {time.perf_counter() - started:.0f} s", flush=True)
        for round in range(1 - args.warmup, args.rounds + 1):
            change(round + args.warmup)
            models = list(MODELS[args.source])
            profiled = [profile_run(bench, model) for model in models[round % 2 :] + models[: round % 2]]
            if round < 1:
                print(f"warm-up round {round + args.warmup}/{args.warmup} done", flush=True)
                continue
            for run in profiled:
                runs[run["model"]].append(run)
            print(
                f"round {round}/{args.rounds}: "
                + ", ".join(
                    f"{model} {done[-1]['seconds']:.2f} s (statements {done[-1]['execute']:.2f}, "
                    f"fetches {done[-1]['fetch']:.2f}, the rest {done[-1]['rest']:.2f})"
                    for model, done in runs.items()
                ),
                flush=True,
            )
    summaries = {model: summary(done) for model, done in runs.items()}
    for model, found in summaries.items():
        print("\n" + "\n".join(median_run_lines(model, found)))
    line = "RESULT " + " ".join(
        f"{model}_{part}={found[part]:.2f}"
        for model, found in summaries.items()
        for part in ("seconds", "execute", "fetch", "rest")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine(),
        "arguments": {"source": args.source, "rows": args.rows, "rounds": args.rounds, "warmup": args.warmup},
        "seconds": time.perf_counter() - started,
        "models": summaries,
        "runs": runs,
        "result": line,
    }
    out.write_text(json.dumps(document, indent=1) + "\n")
    print("\n" + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: a clustered 0.1% change at scale, each run in a fresh `dbt run` process, as a scheduler runs it.

`bench/run.py --scale` measures in one warm session. A scheduler starts a new process per run,
whose JVM plans and compiles every statement for the first time, so each statement the protocol
sends costs more there. Over a source of `--rows` rows written as bench/run.py writes it at scale
(key order, files of 250k rows, the change feed and deletion vectors on: `source_statements`), two
models of one temporary dbt project on the local profile (`type: tablestream`, its defaults):

- `fs_merge`: a `stream_merge` (unique_key 'id') over `source_stream('app', 'src')`;
- `fs_rebuild`: a `table` over `source('app', 'src')`, what the stream model replaces.

Both are built once (not measured). Each round commits bench/run.py's clustered 0.1% change
(`change_statements`: a third updates, a third deletes, a third new ids) from a `dbt run-operation`
process (the profile's Derby metastore takes one process at a time), then runs each model in a
`dbt run -s <model>` process of its own, the order alternating, timed from outside. The statements
of each run, their seconds and the seconds after each until the next (`statement_gaps`) come from
dbt's JSON file log.

    python bench/fresh_scale.py                          # 20M rows, 5 rounds
    python bench/fresh_scale.py --rows 1000000 --rounds 2

Writes bench/results/fresh_scale.json; its last line is a RESULT line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import TINY_HELP, bench_environment, change_statements, log, machine, results_path, source_statements
from small_window import Project, Run, statement_gaps

MERGE, REBUILD = "fs_merge", "fs_rebuild"
MODEL_SQL = {
    MERGE: (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        "select id, category, amount, updated_at, __change_type, __commit_version\n"
        "from {{ dbt_tablestream.source_stream('app', 'src') }}\n"
    ),
    REBUILD: (
        "{{ config(materialized='table') }}\nselect id, category, amount, updated_at from {{ source('app', 'src') }}\n"
    ),
}


def run_medians(runs: list[Run], models: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Per model, the median seconds of its processes, and of its statements' count and seconds."""
    return {
        model: {
            "seconds": statistics.median(run.seconds for run in runs if run.model == model),
            "statements": statistics.median(len(run.statements) for run in runs if run.model == model),
            "statement_seconds": statistics.median(run.statement_seconds for run in runs if run.model == model),
        }
        for model in models
    }


def last_run_lines(model: str, runs: list[Run], gaps: dict[tuple[str, int], list[float]]) -> list[str]:
    """The last run of `model`, statement by statement: each one's seconds and those until the next."""
    last = [run for run in runs if run.model == model][-1]
    return [
        f"\n{model}, round {last.round}: {last.seconds:.2f} s, {len(last.statements)} statements",
        "  statement s, then s until the next statement (its rows' fetch and dbt's work between), the statement",
        *(
            f"  {elapsed:7.3f} {gap:7.3f}  {sql}"
            for (sql, elapsed), gap in zip(last.statements, gaps[(model, last.round)], strict=True)
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000, help="the source's rows (default 20M)")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/fresh_scale.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rows, args.rounds = 1000, 1
    args.out = results_path(args.out, "fresh_scale.json", args.tiny)
    if args.rounds < 1 or args.rows < 1000:
        parser.error(f"--rounds must be at least 1 and --rows at least 1000, got {args.rounds} and {args.rows}")
    bench_environment()

    def statements(sql: list[str]) -> None:
        project.dbt("local", ["run-operation", "sw_sql", "--args", json.dumps({"statements": sql})])

    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tablestream-fresh-scale-"))
    runs: list[Run] = []
    gaps: dict[tuple[str, int], list[float]] = {}
    document: dict[str, Any] = {"machine": machine(), "arguments": {"rows": args.rows, "rounds": args.rounds}}
    try:
        project = Project(work, work / "warehouse", MODEL_SQL)
        statements(["create schema if not exists app", *source_statements(args.rows, bounded=True)])
        project.dbt("local", ["run"])
        log(f"source of {args.rows:,} rows and both models built in {time.perf_counter() - started:.0f} s")
        for round in range(1, args.rounds + 1):
            statements(change_statements(args.rows, 0.001, round, "clustered"))
            order = (MERGE, REBUILD) if round % 2 else (REBUILD, MERGE)
            for model in order:
                seconds, logged = project.dbt("local", ["run", "-s", model], f"{model}_{round}")
                runs.append(Run("local", model, "window", round, seconds, logged))
                gaps[(model, round)] = statement_gaps(project.logs / f"{model}_{round}" / "dbt.log")
            pair = {run.model: run.seconds for run in runs if run.round == round}
            log(f"round {round}/{args.rounds}: {MERGE} {pair[MERGE]:.1f} s, {REBUILD} {pair[REBUILD]:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratios = [
        next(r.seconds for r in runs if (r.model, r.round) == (MERGE, round))
        / next(r.seconds for r in runs if (r.model, r.round) == (REBUILD, round))
        for round in range(1, args.rounds + 1)
    ]
    medians = run_medians(runs, (MERGE, REBUILD))
    for model in (MERGE, REBUILD):
        for line in last_run_lines(model, runs, gaps):
            log(line)
    for model, values in medians.items():
        log(f"{model}: median {values['seconds']:.2f} s, {values['statement_seconds']:.2f} s in statements")
    line = (
        f"RESULT fresh_merge_vs_rebuild={statistics.median(ratios):.2f} fresh_merge_s={medians[MERGE]['seconds']:.2f} "
        f"fresh_rebuild_s={medians[REBUILD]['seconds']:.2f} rows={args.rows}"
    )
    document |= {
        "seconds": time.perf_counter() - started,
        "medians": medians,
        "ratios": ratios,
        "runs": [asdict(run) for run in runs],
        "gaps": {f"{model}_{round}": after for (model, round), after in gaps.items()},
        "result": line,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2))
    log(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: a small window, a stream run against a stock incremental model over the same 10 rows.

A run's fixed cost dominates when a window is small. Over a 10,000-row source with the change feed
on (`app.t`: id, name, amount, updated_at), three models of one temporary dbt project:

- `sw_merge`: a `stream_merge` (unique_key 'id') over `source_stream('app', 't')`;
- `sw_log`: a `table_stream` over the same source;
- `sw_incremental`: a stock dbt `incremental` model, `incremental_strategy='merge'`, the same
  unique_key, filtered on its `updated_at` watermark.

All three are built once (not measured). Each round updates 10 rows (a new amount and
`updated_at = current_timestamp()`) in one commit, then runs each model in a rotated order, each in
a `dbt run -s <model>` process of its own, as a scheduler runs it, timed from outside; then each
model once more with nothing new (the empty window). The statements of each run and their seconds
come from dbt's JSON file log (its SQLQuery and SQLQueryStatus events).

Two topologies: `local`, the `type: tablestream` profile, where every process starts its own JVM
(the change between rounds is made by a `dbt run-operation` process of its own, since the
profile's Derby metastore takes one process at a time); and `thrift`, stock dbt-spark
(`method: thrift`) against tests/cluster/local_cluster.py's cluster, started once and warmed by one
unmeasured round, the change made through the Thrift server.

    python bench/small_window.py                         # 5 rounds, both topologies
    python bench/small_window.py --rounds 3 --topologies local
    python bench/small_window.py --report bench/results/small_window.json   # bench/README.md's table

Writes bench/results/small_window.json; its last line is a RESULT line.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import ROOT, TINY_HELP, bench_environment, local_cluster, log, machine, results_path, timed_process

MODELS = ("sw_merge", "sw_log", "sw_incremental")
STOCK = "sw_incremental"
TOPOLOGIES = ("local", "thrift")
KINDS = ("window", "empty")
ROWS = 10_000
CHANGED = 10

MODEL_SQL = {
    "sw_merge": (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        "select id, name, amount, updated_at, __change_type, __commit_version\n"
        "from {{ dbt_tablestream.source_stream('app', 't') }}\n"
    ),
    "sw_log": (
        "{{ config(materialized='table_stream') }}\n"
        "select id, name, amount, updated_at, __change_type, __commit_version\n"
        "from {{ dbt_tablestream.source_stream('app', 't') }}\n"
    ),
    # dbt-spark's default file format (parquet) has no MERGE; the local profile's is delta already.
    "sw_incremental": (
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id', file_format='delta') }}\n"
        "select id, name, amount, updated_at from {{ source('app', 't') }}\n"
        "{% if is_incremental() %}\n"
        "where updated_at > (select coalesce(max(updated_at), timestamp '1900-01-01') from {{ this }})\n"
        "{% endif %}\n"
    ),
}
# `t` is this benchmark's source, `src` bench/fresh_scale.py's (bench/_harness.py's source_statements).
SOURCES_YML = "version: 2\nsources:\n  - name: app\n    tables:\n      - name: t\n      - name: src\n"
# The local topology's source statements, run by a dbt process of their own.
SQL_MACRO = (
    "{% macro sw_sql(statements) %}\n"
    "  {% for statement in statements %}{% do run_query(statement) %}{% endfor %}\n"
    "{% endmacro %}\n"
)


def create_source_sql() -> list[str]:
    return [
        "create schema if not exists app",
        "create table app.t (id bigint, name string, amount double, updated_at timestamp) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')",
        "insert into app.t select id, concat('n', cast(id as string)), cast(id % 1000 as double) / 10, "
        f"timestamp '2026-01-01 00:00:00' from range({ROWS})",
    ]


def change_sql(round: int) -> str:
    """One commit updating CHANGED neighbouring rows, a different block each round."""
    start = (round * 997 * CHANGED) % (ROWS - CHANGED)
    return (
        "update app.t set amount = amount + 1, updated_at = current_timestamp() "
        f"where id >= {start} and id < {start + CHANGED}"
    )


@dataclass
class Run:
    """One `dbt run -s <model>` process: its wall time and the statements dbt logged."""

    topology: str
    model: str
    kind: str
    round: int
    seconds: float
    statements: list[tuple[str, float]] = field(default_factory=list)

    @property
    def statement_seconds(self) -> float:
        return sum(elapsed for _, elapsed in self.statements)

    @property
    def after_first_seconds(self) -> float:
        """The statements' seconds but the first's: on the local profile the first one also waits
        for the process's Spark session to start."""
        return sum(elapsed for _, elapsed in self.statements[1:])


def statement_label(sql: str) -> str:
    """A statement's first words, without dbt's leading JSON comment."""
    text = sql.strip()
    if text.startswith("/*"):
        text = text.split("*/", 1)[-1]
    return " ".join(text.split())[:90]


def logged_statements(log_file: Path) -> list[tuple[str, float]]:
    """Each statement a dbt process sent and its seconds, from its JSON file log."""
    statements: list[tuple[str, float]] = []
    sent = "?"
    for line in log_file.read_text().splitlines():
        event = json.loads(line)
        name = event["info"]["name"]
        if name == "SQLQuery":
            sent = statement_label(str(event["data"]["sql"]))
        elif name == "SQLQueryStatus":
            statements.append((sent, float(event["data"]["elapsed"])))
    return statements


def statement_gaps(log_file: Path) -> list[float]:
    """After each statement's status, the seconds until dbt sent the next (the last: until the log's
    last event). On `method: session` a query runs when its rows are fetched, so a query's gap holds
    its own work as well as dbt's between the statements."""
    events = [json.loads(line)["info"] for line in log_file.read_text().splitlines()]
    times = [datetime.fromisoformat(event["ts"]) for event in events]
    gaps: list[float] = []
    for index, event in enumerate(events):
        if event["name"] != "SQLQueryStatus":
            continue
        following = next((i for i in range(index + 1, len(events)) if events[i]["name"] == "SQLQuery"), len(events) - 1)
        gaps.append((times[following] - times[index]).total_seconds())
    return gaps


class Project:
    """The temporary dbt project, with a `local` and a `thrift` target."""

    def __init__(
        self, work: Path, local_warehouse: Path, models: dict[str, str] | None = None, sources_yml: str = SOURCES_YML
    ) -> None:
        self.root = work / "project"
        self.logs = work / "logs"
        (self.root / "models").mkdir(parents=True)
        (self.root / "macros").mkdir()
        project = {"name": "small_window", "version": "1.0.0", "config-version": 2, "profile": "small_window"}
        (self.root / "dbt_project.yml").write_text(yaml.safe_dump(project))
        (self.root / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(ROOT)}]}))
        (self.root / "models" / "sources.yml").write_text(sources_yml)
        for name, sql in (models or MODEL_SQL).items():
            (self.root / "models" / f"{name}.sql").write_text(sql)
        (self.root / "macros" / "sw_sql.sql").write_text(SQL_MACRO)
        self.outputs: dict[str, dict[str, Any]] = {
            "local": {"type": "tablestream", "schema": "analytics", "warehouse": str(local_warehouse), "threads": 1}
        }
        self.write_profiles()
        self.dbt("local", ["deps"])

    def write_profiles(self) -> None:
        profiles = {"small_window": {"target": "local", "outputs": self.outputs}}
        (self.root / "profiles.yml").write_text(yaml.safe_dump(profiles))

    def dbt(self, target: str, args: list[str], log_name: str | None = None) -> tuple[float, list[tuple[str, float]]]:
        """dbt in a process of its own; its wall seconds and, with `log_name`, its statements."""
        command = [str(Path(sys.executable).with_name("dbt"))]
        log_dir = self.logs / (log_name or "other")
        if log_name is not None:
            shutil.rmtree(log_dir, ignore_errors=True)
        command += ["--log-format-file", "json", "--log-level-file", "debug", "--log-path", str(log_dir)]
        command += [*args, "--project-dir", str(self.root), "--profiles-dir", str(self.root)]
        if args[0] != "deps":
            command += ["--target", target]
        seconds = timed_process(command)
        return seconds, logged_statements(log_dir / "dbt.log") if log_name is not None else []


def measure(
    project: Project,
    topology: str,
    rounds: int,
    change: Callable[[str], None],
    log: Callable[[str], None],
    measured: Callable[[list[Run]], None],
    warm_rounds: int = 0,
) -> list[Run]:
    """`warm_rounds` unmeasured rounds, then `rounds` measured ones: a change of CHANGED rows, each
    model once on it (the window), then each once more on nothing new (the empty window), every
    run a process of its own, the models in an order rotated each round. `measured` gets the
    runs so far after each measured round."""
    runs: list[Run] = []
    for round in range(1 - warm_rounds, rounds + 1):
        change(change_sql(round + warm_rounds + 1000 * TOPOLOGIES.index(topology)))
        shift = round % len(MODELS)
        order = MODELS[shift:] + MODELS[:shift]
        done: list[Run] = []
        for kind in KINDS:
            for model in order:
                name = f"{topology}_{model}_{kind}_{round}"
                seconds, statements = project.dbt(topology, ["run", "-s", model], name)
                done.append(Run(topology, model, kind, round, seconds, statements))
        summary = ", ".join(f"{run.model} {run.kind} {run.seconds:.1f}s" for run in done)
        if round < 1:
            log(f"{topology}, warm-up round: {summary}")
            continue
        log(f"{topology}, round {round}/{rounds}: {summary}")
        runs += done
        measured(runs)
    return runs


def summarize(runs: list[Run]) -> dict[str, Any]:
    """Per model and kind, the medians; per stream model, the median of each round's ratio of its
    window run to the stock incremental model's (interleaved in the same round)."""
    models: dict[str, dict[str, dict[str, float]]] = {}
    for model in MODELS:
        for kind in KINDS:
            picked = [run for run in runs if (run.model, run.kind) == (model, kind)]
            if picked:
                models.setdefault(model, {})[kind] = {
                    "seconds": statistics.median(run.seconds for run in picked),
                    "statements": statistics.median(len(run.statements) for run in picked),
                    "statement_seconds": statistics.median(run.statement_seconds for run in picked),
                    "after_first_seconds": statistics.median(run.after_first_seconds for run in picked),
                }
    ratios: dict[str, float] = {}
    for model in MODELS[:2]:
        for kind in KINDS:
            per_round = []
            for round in sorted({run.round for run in runs}):
                pair = {run.model: run.seconds for run in runs if run.round == round and run.kind == kind}
                if model in pair and STOCK in pair:
                    per_round.append(pair[model] / pair[STOCK])
            ratios[f"{model}_{kind}_vs_incremental"] = statistics.median(per_round) if per_round else math.nan
    return {"models": models, "ratios": ratios}


def result_fields(topologies: dict[str, Any]) -> str:
    """The figures issue 76's targets are stated in, per topology (nan where not measured)."""
    fields: list[str] = []
    for topology in TOPOLOGIES:
        summary = topologies.get(topology, {}).get("summary", {"models": {}, "ratios": {}})
        ratios, models = summary["ratios"], summary["models"]

        def value(model: str, kind: str, key: str, models: dict[str, Any] = models) -> float:
            return float(models.get(model, {}).get(kind, {}).get(key, math.nan))

        fields += [
            f"small_merge_vs_incremental_{topology}={ratios.get('sw_merge_window_vs_incremental', math.nan):.2f}",
            f"small_log_vs_incremental_{topology}={ratios.get('sw_log_window_vs_incremental', math.nan):.2f}",
            f"small_empty_merge_statement_s_{topology}={value('sw_merge', 'empty', 'statement_seconds'):.2f}",
            f"small_empty_log_statement_s_{topology}={value('sw_log', 'empty', 'statement_seconds'):.2f}",
            f"small_incremental_s_{topology}={value(STOCK, 'window', 'seconds'):.2f}",
        ]
    return " ".join(fields)


def report(topology: str, runs: list[Run], summary: dict[str, Any], log: Callable[[str], None]) -> None:
    rounds = max(run.round for run in runs)
    log(f"\n{topology}: medians of {rounds} rounds, each run a `dbt run` process of its own")
    log(f"  {'model':<16}{'run':<8}{'seconds':>9}{'statements':>12}{'statement s':>13}{'after the first':>17}")
    for model, kinds in summary["models"].items():
        for kind, values in kinds.items():
            log(
                f"  {model:<16}{kind:<8}{values['seconds']:>9.2f}{values['statements']:>12.0f}"
                f"{values['statement_seconds']:>13.2f}{values['after_first_seconds']:>17.2f}"
            )
    for model in MODELS:
        for kind in KINDS:
            last = [run for run in runs if (run.model, run.kind, run.round) == (model, kind, rounds)]
            if not last:
                continue
            run = last[0]
            log(
                f"\n{topology} {model}, {kind}, round {rounds}: {run.seconds:.2f} s, "
                f"{len(run.statements)} statements ({run.statement_seconds:.2f} s)"
            )
            for sql, elapsed in run.statements:
                log(f"  {elapsed:7.3f}  {sql}")
    log(f"\n{topology} ratios (median of each round's ratio): " + json.dumps(summary["ratios"]))


def markdown(results: dict[str, Any]) -> str:
    """bench/README.md's table from a results JSON, so it quotes exactly what was measured."""
    lines = [
        "| topology | model | window: seconds | statements | statement s | but the first | empty window: seconds "
        "| statements | statement s | but the first |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for topology, measured in results["topologies"].items():
        runs = [Run(**{**run, "statements": [tuple(pair) for pair in run["statements"]]}) for run in measured["runs"]]
        for model, kinds in summarize(runs)["models"].items():
            cells = " | ".join(
                f"{kinds[kind]['seconds']:.1f} | {kinds[kind]['statements']:.0f} | "
                f"{kinds[kind]['statement_seconds']:.1f} | {kinds[kind]['after_first_seconds']:.1f}"
                for kind in KINDS
            )
            lines.append(f"| {topology} | `{model}` | {cells} |")
    return "\n".join([*lines, "", f"`{results['result']}`"])


def run_local(
    work: Path, project: Project, rounds: int, log: Callable[[str], None], measured: Callable[[list[Run]], None]
) -> list[Run]:
    started = time.perf_counter()

    def change(sql: str) -> None:
        project.dbt("local", ["run-operation", "sw_sql", "--args", json.dumps({"statements": [sql]})])

    project.dbt("local", ["run-operation", "sw_sql", "--args", json.dumps({"statements": create_source_sql()})])
    project.dbt("local", ["run"])
    log(f"local: source and models built in {time.perf_counter() - started:.0f} s")
    return measure(project, "local", rounds, change, log, measured)


def run_thrift(
    work: Path,
    project: Project,
    rounds: int,
    log: Callable[[str], None],
    measured: Callable[[list[Run]], None],
    warm_rounds: int = 1,
) -> list[Run]:
    started = time.perf_counter()
    cluster = local_cluster(work)
    cluster.start()
    try:
        log(f"thrift: local cluster up in {time.perf_counter() - started:.0f} s")
        project.outputs["thrift"] = cluster.profile()
        project.write_profiles()
        for statement in create_source_sql():
            cluster.sql(statement)
        project.dbt("thrift", ["run"])

        def change(sql: str) -> None:
            cluster.sql(sql)

        return measure(project, "thrift", rounds, change, log, measured, warm_rounds)
    finally:
        cluster.stop()


def write(
    out: Path, measured_on: dict[str, Any], arguments: dict[str, Any], started: float, topologies: dict[str, Any]
) -> str:
    line = "RESULT " + result_fields(topologies)
    document = {
        "machine": measured_on,
        "arguments": arguments,
        "seconds": time.perf_counter() - started,
        "topologies": topologies,
        "result_fields": result_fields(topologies),
        "result": line,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2))
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per topology (default 5)")
    parser.add_argument("--topologies", nargs="+", choices=TOPOLOGIES, default=list(TOPOLOGIES))
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/small_window.json)")
    parser.add_argument("--report", type=Path, help="print bench/README.md's table from this results JSON and stop")
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_HELP}; no Thrift warm-up round")
    args = parser.parse_args(argv)
    if args.report:
        print(markdown(json.loads(args.report.read_text())))
        return 0
    if args.tiny:
        args.rounds = 1
    args.out = results_path(args.out, "small_window.json", args.tiny)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    bench_environment()
    sys.path[:0] = [str(ROOT)]  # the Thrift cluster (tests/cluster) imports from here on
    measured_on = machine()

    started = time.perf_counter()
    arguments = {"rounds": args.rounds, "topologies": args.topologies, "rows": ROWS, "changed": CHANGED}
    work = Path(tempfile.mkdtemp(prefix="tablestream-small-window-"))
    topologies: dict[str, Any] = {}
    line = ""
    try:
        project = Project(work, work / "warehouse")
        for topology in args.topologies:

            def keep(runs: list[Run], topology: str = topology) -> None:
                """Written after each round: a run stopped or failing later keeps what it measured."""
                nonlocal line
                rounds = max(run.round for run in runs)
                topologies[topology] = {
                    "rounds": rounds,
                    "summary": summarize(runs),
                    "runs": [asdict(run) for run in runs],
                }
                line = write(args.out, measured_on, arguments, started, topologies)

            if topology == "local":
                measured = run_local(work, project, args.rounds, log, keep)
            else:
                measured = run_thrift(work, project, args.rounds, log, keep, warm_rounds=0 if args.tiny else 1)
            report(topology, measured, summarize(measured), log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

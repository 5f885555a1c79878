"""Benchmark: stream_view against the same select as a `table` model (docs/stream-view.md), in a
warm session and in fresh `dbt run` processes.

Three sources, the change feed and deletion vectors on, each written in key order in files of
250,000 rows: `app.sales`, the fact, `--rows` rows (10M by default), each sold to customer
id div (rows / customers) of product id % products; `app.customers`, the large dimension,
`--customers` rows (1M), each in segment customer_id % segments (`--segments`, 10,000 values);
`app.products`, the small one, `--products` rows (1,000), each in one of 10 categories. Two selects,
each a `stream_view` and the same select as a `table` (the rebuild it replaces):

- `view_keyed` / `view_keyed_table`: each sale joined to its customer and its product, keyed by the sale's id;
- `view_grouped` / `view_grouped_table`: the sales per customer segment and product category
  (unique_key segment, category).

Each round commits two changes: 0.1% of the sales updated in one block of neighbouring ids (a new
amount; every tenth of them sold to another customer, so the join key moves) and 0.1% of the
customers updated in one block of neighbouring ids (a new name; every other one moved to the next
segment, the grouped column). After each round every model runs once, in a rotated order.

- Fresh processes first, before this process starts a session of its own: a dbt project of the
  four models on a warehouse of its own, each change made by a `dbt run-operation` process, each
  model run by a `dbt run -s <model>` process, timed from outside; each run's statements, their
  seconds and the seconds after each (`statement_gaps`) come from dbt's JSON file log.
- Then a warm session, this process's (bench/_harness.py's Bench), `--warmup` rounds first that are
  not kept; each run's statements are timed as bench/run_profile.py times them, their execution and
  the fetch of their rows apart.

After each part's last round, each stream_view's target must equal its table row for row (EXCEPT
ALL both ways), or the benchmark fails. Reported: each model's median seconds, the statements of
the views' runs, and the RESULT line of issue 99's ratios, each with its target: a window at most
0.2x the rebuild warm and 0.5x fresh, the last (5th) run at most 1.2x the first
(bench/results/view.json).

    python bench/view.py                                   # 10M sales, 5 rounds in each part
    python bench/view.py --rows 1000000 --customers 100000 --rounds 3
    python bench/view.py --report bench/results/view.json  # bench/README.md's tables, from the JSON
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    FILE_ROWS,
    PROJECT,
    TINY_HELP,
    TINY_ROWS,
    Bench,
    Measurement,
    bench_environment,
    bench_workspace,
    log,
    results_path,
    variant_medians,
    write_results,
)
from fresh_scale import last_run_lines, run_medians
from run_profile import median_run_lines, profile_run, summary
from small_window import Project, Run, statement_gaps

CATEGORIES = 10
FRACTION = 0.001
SHAPES = ("keyed", "grouped")
# Each shape's stream_view and its table, the same select.
MODELS = {shape: (f"view_{shape}", f"view_{shape}_table") for shape in SHAPES}
FROM = (
    "from {{ source('app', 'sales') }} as s\n"
    "join {{ source('app', 'customers') }} as c on s.customer_id = c.customer_id\n"
    "join {{ source('app', 'products') }} as p on s.product_id = p.product_id\n"
)
SELECTS = {
    "keyed": "select s.id, s.amount, s.customer_id, c.name, c.segment, s.product_id, p.category\n" + FROM,
    "grouped": (
        "select c.segment, p.category, count(*) as sale_count, sum(s.amount) as revenue, max(s.amount) as largest\n"
        + FROM
        + "group by c.segment, p.category\n"
    ),
}
KEYS = {"keyed": "'id'", "grouped": "['segment', 'category']"}
MODEL_SQL = {
    **{
        view: f"{{{{ config(materialized='stream_view', unique_key={KEYS[shape]}) }}}}\n{SELECTS[shape]}"
        for shape, (view, _) in MODELS.items()
    },
    **{table: f"{{{{ config(materialized='table') }}}}\n{SELECTS[shape]}" for shape, (_, table) in MODELS.items()},
}
# Issue 99's targets: the window's run against the rebuild's, warm and fresh; the last run against the first.
TARGETS = {"warm_vs_rebuild": 0.2, "fresh_vs_rebuild": 0.5, "last_vs_first_warm": 1.2, "last_vs_first_fresh": 1.2}


def source_sql(rows: int, customers: int, products: int, segments: int) -> list[str]:
    """The statements that create the three sources (schema `app` exists), each in key order in
    files of FILE_ROWS rows, the change feed and deletion vectors on."""
    properties = "tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'true')"
    per = max(1, rows // customers)
    return [
        f"create table app.sales (id bigint, customer_id bigint, product_id bigint, amount decimal(12, 2)) "
        f"using delta {properties}",
        "create table app.customers (customer_id bigint, name string, segment int) using delta " + properties,
        "create table app.products (product_id bigint, name string, category string) using delta " + properties,
        f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}",
        f"insert into app.sales select id, least(id div {per}, {customers - 1}), id % {products}, "
        f"cast(id % 1000 as decimal(12, 2)) / 10 from range({rows}) order by id",
        "insert into app.customers select id, concat('c', cast(id as string)), "
        f"cast(id % {segments} as int) from range({customers}) order by id",
        "insert into app.products select id, concat('p', cast(id as string)), "
        f"concat('k', cast(id % {CATEGORIES} as string)) from range({products}) order by id",
        "reset spark.sql.files.maxRecordsPerFile",
    ]


def change_sql(rows: int, customers: int, segments: int, round: int) -> list[str]:
    """Round `round`'s two commits: a block of FRACTION of the sales updated (every tenth sold to
    another customer) and a block of FRACTION of the customers (every other one moved to the next segment)."""
    sold = max(1, int(rows * FRACTION))
    first_sale = (round * 7919 * sold) % max(1, rows - sold)
    moved = max(1, int(customers * FRACTION))
    first_customer = (round * 7919 * moved) % max(1, customers - moved)
    return [
        "update app.sales set amount = amount + 1, customer_id = case when id % 10 = 0 "
        f"then (customer_id + 7919) % {customers} else customer_id end "
        f"where id >= {first_sale} and id < {first_sale + sold}",
        "update app.customers set name = concat(name, '+'), segment = case when customer_id % 2 = 0 "
        f"then (segment + 1) % {segments} else segment end "
        f"where customer_id >= {first_customer} and customer_id < {first_customer + moved}",
    ]


def equal_sql() -> list[str]:
    """Queries that fail unless each stream_view's target holds its table's rows, each as often (EXCEPT ALL both ways)."""
    return [
        f"select assert_true(count(*) = 0, 'analytics.{left} holds rows analytics.{right} does not "
        f"(EXCEPT ALL): the stream_view is not its select') "
        f"from (select * from analytics.{left} except all select * from analytics.{right})"
        for view, table in MODELS.values()
        for left, right in ((view, table), (table, view))
    ]


def rotated(round: int) -> list[str]:
    models = [model for pair in MODELS.values() for model in pair]
    shift = round % len(models)
    return models[shift:] + models[:shift]


def fresh(work: Path, args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    """The fresh-process part: its runs, their medians and the seconds after each statement."""
    started = time.perf_counter()
    sources = (PROJECT / "models" / "sources.yml").read_text()
    project = Project(work, work / "warehouse", MODEL_SQL, sources)

    def statements(sql: list[str]) -> None:
        project.dbt("local", ["run-operation", "sw_sql", "--args", json.dumps({"statements": sql})])

    statements(
        ["create schema if not exists app", *source_sql(args.rows, args.customers, args.products, args.segments)]
    )
    project.dbt("local", ["run"])
    log(f"fresh: sources and models built in {time.perf_counter() - started:.0f} s")
    runs: list[Run] = []
    gaps: dict[tuple[str, int], list[float]] = {}
    for round in range(1, args.rounds + 1):
        statements(change_sql(args.rows, args.customers, args.segments, round))
        for model in rotated(round):
            seconds, logged = project.dbt("local", ["run", "-s", model], f"{model}_{round}")
            runs.append(Run("local", model, "window", round, seconds, logged))
            gaps[(model, round)] = statement_gaps(project.logs / f"{model}_{round}" / "dbt.log")
        log(f"fresh, round {round}/{args.rounds}: " + ", ".join(f"{r.model} {r.seconds:.1f}s" for r in runs[-4:]))
    statements(equal_sql())
    log("fresh: each stream_view equals its table, row for row")
    for view, _ in MODELS.values():
        for line in last_run_lines(view, runs, gaps):
            log(line)
    return {
        "medians": run_medians(runs, tuple(MODEL_SQL)),
        "runs": [asdict(run) for run in runs],
        "gaps": {f"{model}_{round}": after for (model, round), after in gaps.items()},
    }


def profiled_run(bench: Bench, model: str, kept: list[dict[str, Any]]) -> Callable[[list[tuple[str, float]]], None]:
    """A `dbt run` of `model` for Bench.measure, its statements timed into `kept` (run_profile.profile_run)."""
    return lambda logged: kept.append(profile_run(bench, model, logged))


def warm(work: Path, args: argparse.Namespace, log: Callable[[str], None]) -> tuple[list[Measurement], dict[str, Any]]:
    """The warm part: each kept run's Measurement, and per model its runs profiled (run_profile.summary)."""
    started = time.perf_counter()
    bench = Bench(work)
    for name, sql in MODEL_SQL.items():
        (bench.project / "models" / f"{name}.sql").write_text(sql)
    for schema in ("app", "analytics"):
        bench.sql(f"drop schema if exists {schema} cascade")
        bench.sql(f"create schema {schema}")
    for statement in source_sql(args.rows, args.customers, args.products, args.segments):
        bench.sql(statement)
    bench.dbt(["run", "--full-refresh", "-s", *MODEL_SQL])
    log(f"warm: sources and models built in {time.perf_counter() - started:.0f} s")
    measurements: list[Measurement] = []
    profiles: dict[str, list[dict[str, Any]]] = {model: [] for model in MODEL_SQL}
    for round in range(1 - args.warmup, args.rounds + 1):
        for statement in change_sql(args.rows, args.customers, args.segments, round):
            bench.sql(statement)
        done: list[Measurement] = []
        for model in rotated(round):
            kept: list[dict[str, Any]] = []
            done.append(bench.measure(model, args.rows, FRACTION, round, profiled_run(bench, model, kept), "warm"))
            if round >= 1:
                profiles[model].append({**kept[0], "round": round})
        summary_line = ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done)
        if round < 1:
            log(f"warm, warm-up round {round + args.warmup}/{args.warmup}: {summary_line}")
            continue
        log(f"warm, round {round}/{args.rounds}: {summary_line}")
        measurements += done
    for statement in equal_sql():
        bench.sql(statement)
    log("warm: each stream_view equals its table, row for row")
    summaries = {model: {**summary(runs), "runs": runs} for model, runs in profiles.items()}
    for view, _ in MODELS.values():
        log("\n" + "\n".join(median_run_lines(view, summaries[view])))
    return measurements, summaries


def ratios(measurements: list[Measurement], fresh_part: dict[str, Any]) -> dict[str, float]:
    """Issue 99's ratios, per select: the view's median against its table's, warm and fresh, and
    the view's last run against its first in each part."""
    warm_medians, fresh_medians = variant_medians(measurements), fresh_part["medians"]
    found: dict[str, float] = {}
    for shape, (view, table) in MODELS.items():
        warm_runs = sorted((m.round, m.seconds) for m in measurements if m.variant == view)
        fresh_runs = sorted((run["round"], run["seconds"]) for run in fresh_part["runs"] if run["model"] == view)
        found |= {
            f"{shape}_warm_vs_rebuild": warm_medians[view] / warm_medians[table],
            f"{shape}_fresh_vs_rebuild": fresh_medians[view]["seconds"] / fresh_medians[table]["seconds"],
            f"{shape}_last_vs_first_warm": warm_runs[-1][1] / warm_runs[0][1],
            f"{shape}_last_vs_first_fresh": fresh_runs[-1][1] / fresh_runs[0][1],
        }
    return found


def result_line(found: dict[str, float]) -> str:
    """The ratios, each with its target and whether it was met: `keyed_warm_vs_rebuild=0.15(<=0.2:met)`."""
    fields = []
    for name, value in found.items():
        target = TARGETS[name.split("_", 1)[1]]
        fields.append(f"{name}={value:.2f}(<={target}:{'met' if value <= target else 'missed'})")
    return "RESULT " + " ".join(fields)


def markdown(document: dict[str, Any]) -> list[str]:
    """bench/README.md's tables from view.json: each shape's medians and ratios, then each model's
    median warm run split into its statements' execution, their fetches and dbt's own work."""
    warm_medians, fresh_medians = document["medians"], document["fresh"]["medians"]
    found = document["ratios"]
    lines = [
        "| select | warm: view | warm: table | ratio | fresh: view | fresh: table | ratio "
        "| last / first, warm | fresh |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape, (view, table) in MODELS.items():
        cells = [
            f"{warm_medians[view]:.2f}",
            f"{warm_medians[table]:.2f}",
            f"{found[f'{shape}_warm_vs_rebuild']:.2f}",
            f"{fresh_medians[view]['seconds']:.2f}",
            f"{fresh_medians[table]['seconds']:.2f}",
            f"{found[f'{shape}_fresh_vs_rebuild']:.2f}",
            f"{found[f'{shape}_last_vs_first_warm']:.2f}",
            f"{found[f'{shape}_last_vs_first_fresh']:.2f}",
        ]
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    lines += ["", "| warm model, the median run | run | statements, executed | fetches | dbt's own | statements |"]
    lines.append("|---|---|---|---|---|---|")
    for model, found_run in document["profiles"].items():
        parts = " | ".join(f"{found_run[part]:.2f}" for part in ("seconds", "execute", "fetch", "rest"))
        lines.append(f"| `{model}` | {parts} | {found_run['statements']} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="the fact's rows (default 10M)")
    parser.add_argument("--customers", type=int, default=1_000_000, help="the large dimension's rows (default 1M)")
    parser.add_argument("--products", type=int, default=1_000, help="the small dimension's rows (default 1,000)")
    parser.add_argument("--segments", type=int, default=10_000, help="the customers' segments (default 10,000)")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds in each part (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="warm rounds run first and not kept (default 1)")
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/view.json)")
    parser.add_argument("--report", type=Path, help="print bench/README.md's tables from this results JSON and stop")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.report:
        document = json.loads(args.report.read_text())
        print("\n".join([*markdown(document), "", f"`{document['result']}`"]))
        return 0
    if args.tiny:
        args.rows, args.customers, args.products, args.segments = TINY_ROWS, 1_000, 100, 100
        args.rounds, args.warmup = 1, 0
    if args.rounds < 1 or args.customers > args.rows:
        parser.error(f"--rounds must be at least 1 and --customers at most --rows, got {args.rounds}, {args.customers}")
    args.out = results_path(args.out, "view.json", args.tiny)
    bench_environment()

    started = time.perf_counter()
    with bench_workspace("tablestream-bench-view-") as work:
        fresh_part = fresh(work / "fresh", args, log)
        measurements, profiles = warm(work, args, log)
    arguments = {
        key: getattr(args, key) for key in ("rows", "customers", "products", "segments", "rounds", "warmup")
    } | {"categories": CATEGORIES, "fraction": FRACTION}
    found = ratios(measurements, fresh_part)
    line = result_line(found)
    write_results(
        args.out,
        arguments,
        started,
        measurements,
        line,
        fresh=fresh_part,
        profiles={model: {k: v for k, v in found_run.items() if k != "runs"} for model, found_run in profiles.items()},
        profiled_runs={model: found_run["runs"] for model, found_run in profiles.items()},
        ratios=found,
        targets=TARGETS,
        views_equal_tables=True,
    )
    print("\n" + "\n".join(markdown(json.loads(args.out.read_text()))))
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

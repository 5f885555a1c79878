"""Benchmark: a stream against what users would run instead, on delta-spark, as ratios.

One process, one warm local session (the `tablestream` adapter's), every variant interleaved over
the same source commits:

- `stream_merge` and `table_stream` (this package);
- `cdf_incremental`: the stock incremental Databricks users write over `table_changes` (last change
  per key by `row_number()`, a soft-delete flag, `incremental_strategy='merge'`);
- `watermark`: a stock incremental filtered on `updated_at`;
- `rebuild`: a stock `table`;
- `floor`: the same net changes applied by one bare MERGE through `spark.sql`, no dbt around it;
- `noop_stream` / `noop_incremental`: `stream_merge` on an empty window, next to `watermark` with
  nothing new.

Each round commits a clustered, mixed change to the source (a third updates, a third deletes, a
third inserts), then runs every variant once, in a rotated order. Reported: the median wall time of
each variant per size, its peak RSS (driver Python and the JVM, sampled while it runs) and, for dbt
variants, the statements it sent.

    python bench/run.py --quick          # 1M and 10M rows, 0.1% changed, 3 rounds, the cold starts and
                                         # the small window (bench/small_window.py)
    python bench/run.py --cold-only      # only the README's main job, the whole example and the cold
                                         # starts, new processes (bench/results/cold.json)
    python bench/run.py --full           # 1M to 20M rows, 0.01% to 10% changed (hours here)
    python bench/run.py --sizes 100000 --rounds 2 --fractions 0.01 --skip-cold
    python bench/run.py --carryovers     # drop_carryovers on against off (bench/results/carryovers.json)
    python bench/run.py --warehouse --sizes 10000000
                                         # the reapply protocol against the marked one (bench/results/warehouse.json)
    python bench/run.py --scale          # 10M, 30M and 100M rows, clustered and scattered changes, 5 runs each
                                         # (bench/results/scale.json; 10M took 26 minutes here)
    python bench/run.py --scale --sizes 100000000 --patterns clustered
                                         # one size and pattern; scale.json keeps the others
    python bench/run.py --scale --sizes 100000000 --patterns scattered --variants stream_merge \
        cdf_incremental rebuild floor floor_expert   # some variants (a dash in the tables for the rest)

`--scale` asks whether a run costs what changed as the target grows: each size gets a source of
key-ordered files with deletion vectors (so that changing it is cheap), every variant built from
it, then 5 rounds of a clustered 0.1% change and 5 of a scattered one. Beside the dbt variants it
runs two bare MERGEs of the same net changes: `floor` on a copy of the source with Spark's default
layout, and `floor_expert` on a key-ordered copy of bounded files, with the window's key ranges in
its ON clause (what an expert would hand-write). scale.json is written after each size, and a run
of some sizes or patterns keeps the results file's others: at 100M rows the scattered rounds alone,
where every MERGE rewrites the whole table, take hours here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    BENCH,
    EXAMPLE,
    RESULTS,
    TINY_HELP,
    TINY_ROWS,
    Bench,
    ColdRun,
    Measurement,
    bench_environment,
    bench_workspace,
    log,
    machine,
    results_path,
    run_model,
    run_process,
)

STOCK_EXAMPLE = BENCH / "stock_example"
DBT_VARIANTS = ("stream_merge", "stream_merge_dv", "table_stream", "cdf_incremental", "watermark", "rebuild")
# --changes: stream_merge reading the change data feed, Delta's changelog netted by the package, and
# Delta's changelog netted by Spark (spark_net_changes), over one source with both turned on.
CHANGES_VARIANTS = ("stream_merge", "stream_merge_changes", "stream_merge_spark_net")
# --carryovers: stream_merge and table_stream with the carry-over filter (drop_carryovers, the
# default) and without it, over the same windows.
CARRYOVER_VARIANTS = ("stream_merge", "stream_merge_keep_carryovers", "table_stream", "table_stream_keep_carryovers")
# --scale: this package's write chosen per window (merge_write auto) with and without deletion
# vectors, every window merged (merge_write merge, the old MERGE) and every window's keys replaced
# (merge_write replace_where, the write of a spread-out window before the rewrite), against the
# stock incremental and a rebuild; `floor` and `floor_expert` run beside them (Bench.floor).
SCALE_VARIANTS = (
    "stream_merge",
    "stream_merge_dv",
    "stream_merge_merge_only",
    "stream_merge_replace",
    "cdf_incremental",
    "rebuild",
)
# --warehouse: the commit protocols side by side, the same models run with the marked protocol (a
# cluster's) and the reapply protocol (a SQL warehouse's: no session setting).
WAREHOUSE_VARIANTS = ("stream_merge", "stream_merge_reapply", "table_stream", "table_stream_reapply")
SCALE_SIZES = [10_000_000, 30_000_000, 100_000_000]
PATTERNS = ("clustered", "scattered")
MODE_VARIANTS = {
    "run": DBT_VARIANTS,
    "changes": CHANGES_VARIANTS,
    "carryovers": CARRYOVER_VARIANTS,
    "scale": SCALE_VARIANTS,
    "warehouse": WAREHOUSE_VARIANTS,
}


def run_size(
    bench: Bench, rows: int, fractions: list[float], rounds: int, log: Callable[[str], None], mode: str = "run"
) -> list[Measurement]:
    started = time.perf_counter()
    models = MODE_VARIANTS[mode]
    bench.create_source(rows, row_tracking=mode == "changes")
    bench.dbt(["run", "--full-refresh", "-s", *models])  # every target built from the same source version
    log(f"{rows:,} rows: source and targets built in {time.perf_counter() - started:.0f} s")
    measurements: list[Measurement] = []
    variants: list[tuple[str, Callable[[list[tuple[str, float]]], None]]] = [
        *((model, run_model(bench, model)) for model in models),
        ("floor", lambda statements: bench.floor()),
    ]
    for fraction in fractions:
        for round in range(1, rounds + 1):
            bench.change_source(rows, fraction, round)
            shift = round % len(variants)
            done: list[Measurement] = []
            for variant, action in variants[shift:] + variants[:shift]:
                done.append(bench.measure(variant, rows, fraction, round, action))
            if mode == "run":
                done.append(bench.measure("noop_stream", rows, fraction, round, run_model(bench, "stream_merge")))
                done.append(bench.measure("noop_incremental", rows, fraction, round, run_model(bench, "watermark")))
            summary = ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done)
            log(f"{rows:,} rows, {fraction:.2%} changed, round {round}/{rounds}: {summary}")
            measurements += done
    return measurements


def run_scale(
    bench: Bench,
    rows: int,
    rounds: int,
    log: Callable[[str], None],
    patterns: tuple[str, ...] = PATTERNS,
    only: tuple[str, ...] = (*SCALE_VARIANTS, "floor", "floor_expert"),
) -> list[Measurement]:
    """Every --scale variant over one source of `rows` rows: `rounds` clustered changes, then
    `rounds` scattered ones (of `patterns`), each applied by every variant in a rotated order;
    with the clustered pattern, what liquid clustering would cost. `only`: the variants to run."""
    started = time.perf_counter()
    bench.create_source(rows, bounded=True)
    bench.dbt(["run", "--full-refresh", "-s", *(model for model in SCALE_VARIANTS if model in only)])
    log(f"{rows:,} rows: source and targets built in {time.perf_counter() - started:.0f} s")
    variants: list[tuple[str, Callable[[list[tuple[str, float]]], None]]] = [
        *((model, run_model(bench, model)) for model in SCALE_VARIANTS),
        ("floor", lambda statements: bench.floor()),
        ("floor_expert", lambda statements: bench.floor_expert()),
    ]
    variants = [(name, action) for name, action in variants if name in only]
    measurements: list[Measurement] = []
    for offset, pattern in enumerate(PATTERNS):
        if pattern not in patterns:
            continue
        for round in range(1, rounds + 1):
            bench.change_source(rows, 0.001, offset * rounds + round, pattern)
            shift = round % len(variants)
            done = [
                bench.measure(variant, rows, 0.001, round, action, pattern)
                for variant, action in variants[shift:] + variants[:shift]
            ]
            summary = ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done)
            log(f"{rows:,} rows, {pattern}, round {round}/{rounds}: {summary}")
            measurements += done
    if "clustered" in patterns:
        measurements += clustering(bench, rows, log)
    return measurements


def clustering(bench: Bench, rows: int, log: Callable[[str], None]) -> list[Measurement]:
    """What liquid clustering (`CLUSTER BY`, dbt-databricks' `liquid_clustered_by`) would cost a
    target: open-source Delta clusters only in OPTIMIZE. A clustered copy of the source is built
    and clustered (`cluster_build`), gets one clustered 0.1% change by a bare MERGE, and is
    clustered again (`cluster_optimize`, what each run would add to keep it clustered)."""
    done: list[Measurement] = []

    def timed(variant: str, statements: list[str]) -> None:
        done.append(
            bench.measure(variant, rows, 0.001, 1, lambda _: [bench.sql(sql) for sql in statements], "clustering")
        )

    try:
        timed(
            "cluster_build",
            [
                "create table analytics.clustered using delta cluster by (id) as select * from app.src",
                "optimize analytics.clustered",
            ],
        )
        bench.floor_after["clustered"] = bench.latest_version()
        bench.change_source(rows, 0.001, 1000, "clustered")
        bench.floor("clustered")
        timed("cluster_optimize", ["optimize analytics.clustered"])
    except Exception as error:  # a result to record (e.g. CLUSTER BY refused), not a failure of the benchmark
        log(f"{rows:,} rows, clustering: {str(error).splitlines()[0][:200]}")
        return done
    log(f"{rows:,} rows, clustering: " + ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done))
    return done


def scale_table(measurements: list[Measurement]) -> dict[str, dict[int, dict[str, dict[str, float]]]]:
    """Per pattern, size and variant: the median run, the first and the last of the consecutive
    runs, and the peak RSS."""
    table: dict[str, dict[int, dict[str, dict[str, float]]]] = {}
    for pattern in PATTERNS:
        for rows in sorted({m.rows for m in measurements}):
            for variant in (*SCALE_VARIANTS, "floor", "floor_expert"):
                picked = sorted(
                    (m for m in measurements if (m.pattern, m.rows, m.variant) == (pattern, rows, variant)),
                    key=lambda m: m.round,
                )
                if not picked:
                    continue
                table.setdefault(pattern, {}).setdefault(rows, {})[variant] = {
                    "seconds": statistics.median(m.seconds for m in picked),
                    "first_s": picked[0].seconds,
                    "last_s": picked[-1].seconds,
                    "python_rss_mb": max(m.python_rss for m in picked) / 2**20,
                    "jvm_rss_mb": max(m.jvm_rss for m in picked) / 2**20,
                }
    return table


def scale_result_line(table: dict[str, dict[int, dict[str, dict[str, float]]]]) -> str:
    """The ratios the issue's targets are stated in (docs: bench/README.md), each pattern at its
    largest size measured (the deletion-vector ratios at the largest size that has that variant);
    nan where a pattern or variant has not been measured."""
    nan = float("nan")
    merge = "stream_merge"

    def value(pattern: str, rows: int, variant: str, key: str = "seconds") -> float:
        return table.get(pattern, {}).get(rows, {}).get(variant, {}).get(key, nan)

    def ratio(pattern: str, rows: int, variant: str, other: str) -> float:
        return value(pattern, rows, variant) / value(pattern, rows, other)

    def largest(pattern: str, variant: str = merge) -> int:
        return max((rows for rows, cell in table.get(pattern, {}).items() if variant in cell), default=0)

    def smallest(pattern: str) -> int:
        return min(table.get(pattern, {}), default=0)

    def worst(values: list[float]) -> float:
        return max((v for v in values if v == v), default=nan)

    cells = [(pattern, rows) for pattern in PATTERNS for rows in table.get(pattern, {})]
    clustered, scattered = largest("clustered"), largest("scattered")
    small = smallest("clustered")
    return (
        f"RESULT clustered_vs_rebuild={ratio('clustered', clustered, merge, 'rebuild'):.2f} "
        f"scattered_vs_rebuild={ratio('scattered', scattered, merge, 'rebuild'):.2f} "
        f"clustered_growth={value('clustered', clustered, merge) / value('clustered', small, merge):.2f} "
        f"max_vs_floor_expert={worst([ratio(p, r, merge, 'floor_expert') for p, r in cells]):.2f} "
        f"max_vs_cdf_incremental={worst([ratio(p, r, merge, 'cdf_incremental') for p, r in cells]):.2f} "
        f"max_last_vs_first={worst([value(p, r, merge, 'last_s') / value(p, r, merge, 'first_s') for p, r in cells]):.2f} "
        f"dv_clustered={ratio('clustered', largest('clustered', 'stream_merge_dv'), 'stream_merge_dv', merge):.2f} "
        f"dv_scattered={ratio('scattered', largest('scattered', 'stream_merge_dv'), 'stream_merge_dv', merge):.2f} "
        f"dv_scattered_vs_rebuild={ratio('scattered', largest('scattered', 'stream_merge_dv'), 'stream_merge_dv', 'rebuild'):.2f} "
        f"merge_only_scattered_vs_rebuild="
        f"{ratio('scattered', largest('scattered', 'stream_merge_merge_only'), 'stream_merge_merge_only', 'rebuild'):.2f} "
        f"merge_only_clustered_vs_rebuild="
        f"{ratio('clustered', largest('clustered', 'stream_merge_merge_only'), 'stream_merge_merge_only', 'rebuild'):.2f} "
        f"replace_scattered_vs_rebuild="
        f"{ratio('scattered', largest('scattered', 'stream_merge_replace'), 'stream_merge_replace', 'rebuild'):.2f} "
        "scattered_vs_rebuild_by_size="
        + ",".join(
            f"{int(rows) // 1_000_000}M:{ratio('scattered', rows, merge, 'rebuild'):.2f}"
            for rows in sorted(table.get("scattered", {}), key=int)
        )
        + " "
        f"jvm_mb={value('clustered', small, merge, 'jvm_rss_mb'):.0f}->{value('clustered', clustered, merge, 'jvm_rss_mb'):.0f}"
    )


def scale_markdown(results: dict[str, Any]) -> str:
    """bench/README.md's --scale tables from scale.json: median seconds per pattern, size and variant,
    and stream_merge's first and last consecutive run."""
    lines: list[str] = []
    for pattern, by_size in results["table"].items():
        variants = [
            name for name in (*SCALE_VARIANTS, "floor", "floor_expert") if any(name in c for c in by_size.values())
        ]
        lines += [
            f"| {pattern} 0.1% | " + " | ".join(variants) + " | stream_merge first / last run |",
            "|---|" + "---|" * (len(variants) + 1),
        ]
        for rows in sorted(by_size, key=int):
            # A variant left out at a size (--variants) shows as a dash; bench/README.md says why.
            cells = " | ".join(
                f"{by_size[rows][name]['seconds']:.2f}" if name in by_size[rows] else "-" for name in variants
            )
            merge = by_size[rows]["stream_merge"]
            lines.append(f"| {int(rows) // 1_000_000}M | {cells} | {merge['first_s']:.2f} / {merge['last_s']:.2f} |")
        lines.append("")
    if results.get("clustering"):
        lines += [
            "| liquid clustering (`CLUSTER BY (id)`) | build and OPTIMIZE | OPTIMIZE after one 0.1% change |",
            "|---|---|---|",
        ]
        for rows, seconds in sorted(results["clustering"].items(), key=lambda item: int(item[0])):
            lines.append(
                f"| {int(rows) // 1_000_000}M | {seconds.get('cluster_build_s', float('nan')):.2f} "
                f"| {seconds.get('cluster_optimize_s', float('nan')):.2f} |"
            )
        lines.append("")
    return "\n".join([*lines, f"`{results['result']}`"])


def small_window(log: Callable[[str], None]) -> dict[str, Any]:
    """bench/small_window.py's default measurement, in a process of its own (it starts its own dbt
    processes and the Thrift cluster); its results, also in bench/results/small_window.json."""
    out = RESULTS / "small_window.json"
    started = time.perf_counter()
    subprocess.run([sys.executable, str(BENCH / "small_window.py"), "--out", str(out)], check=True)
    log(f"small window: {time.perf_counter() - started:.0f} s")
    results: dict[str, Any] = json.loads(out.read_text())
    return results


def cold_start(work: Path, rounds: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The README's main job (job_s), the whole example (`main.py --tour`, tour_s: it builds every
    model the cold builds read), then `dbt build` of the example in new processes with nothing new
    (cold_build_s), the same DAG with stock materializations (cold_stock_s, bench/stock_example)
    and `tablestream status` (pending_s), interleaved, `rounds` of each."""
    python = sys.executable
    dbt = str(Path(python).parent / "dbt")
    job = run_process([python, str(EXAMPLE / "main.py")])
    log(f"example main job: {job.seconds:.0f} s")
    tour = run_process([python, str(EXAMPLE / "main.py"), "--tour"])
    log(f"the whole example (main.py --tour): {tour.seconds:.0f} s")
    stock = work / "stock_example"
    shutil.copytree(STOCK_EXAMPLE, stock)
    shutil.copytree(EXAMPLE / "seeds", stock / "seeds")
    for shared in (
        "sources.yml",
        "orders_enriched.sql",
        "order_totals.sql",
        "order_status_history.sql",
        "landing_orders.sql",
    ):
        shutil.copy(EXAMPLE / "models" / shared, stock / "models")  # stock in the example already
    target = {"type": "tablestream", "schema": "stock", "warehouse": str(EXAMPLE / "warehouse"), "threads": 2}
    (stock / "profiles.yml").write_text(
        yaml.safe_dump({"stock_example": {"target": "dev", "outputs": {"dev": target}}})
    )
    stock_vars = ["--vars", json.dumps({"landing": str(EXAMPLE / "landing")})]

    def build(project: Path, name: str, extra: list[str]) -> ColdRun:
        log_dir = work / "logs" / name
        shutil.rmtree(log_dir, ignore_errors=True)
        command = [dbt, "--log-format-file", "json", "--log-level-file", "debug", "--log-path", str(log_dir), "build"]
        return run_process([*command, "--project-dir", str(project), "--profiles-dir", str(project), *extra], log_dir)

    build(stock, "stock_first", stock_vars)  # its first build reads everything; not measured
    runs: dict[str, list[ColdRun]] = {"cold_build": [], "cold_stock": [], "pending": []}
    for round in range(1, rounds + 1):
        runs["cold_build"].append(build(EXAMPLE, f"example_{round}", []))
        runs["cold_stock"].append(build(stock, f"stock_{round}", stock_vars))
        status = [
            str(Path(python).parent / "tablestream"),
            "status",
            "--project-dir",
            str(EXAMPLE),
            "--profiles-dir",
            str(EXAMPLE),
        ]
        runs["pending"].append(run_process(status))
        log(
            f"cold start, round {round}/{rounds}: "
            + ", ".join(f"{name} {measured[-1].seconds:.1f}s" for name, measured in runs.items())
        )
    summary: dict[str, Any] = {"job_s": job.seconds, "tour_s": tour.seconds}
    for name, measured in runs.items():
        summary[f"{name}_s"] = statistics.median(run.seconds for run in measured)
        counts = [run.statements for run in measured if run.statements is not None]
        if counts:
            summary[f"{name}_statements"] = statistics.median(counts)
            summary[f"{name}_statement_s"] = statistics.median(run.statement_seconds or 0.0 for run in measured)
        summary[f"{name}_runs"] = [run.__dict__ for run in measured]
    return summary


def medians(measurements: list[Measurement]) -> dict[int, dict[str, dict[str, float | None]]]:
    table: dict[int, dict[str, dict[str, float | None]]] = {}
    for rows in sorted({m.rows for m in measurements}):
        table[rows] = {}
        present = {m.variant for m in measurements if m.rows == rows}
        for variant in [
            name
            for name in (
                *DBT_VARIANTS,
                *CHANGES_VARIANTS[1:],
                *CARRYOVER_VARIANTS,
                *WAREHOUSE_VARIANTS,
                "floor",
                "noop_stream",
                "noop_incremental",
            )
            if name in present
        ]:
            picked = [m for m in measurements if m.rows == rows and m.variant == variant]
            counts = [m.statements for m in picked if m.statements is not None]
            table[rows][variant] = {
                "seconds": statistics.median(m.seconds for m in picked),
                "python_rss_mb": max(m.python_rss for m in picked) / 2**20,
                "jvm_rss_mb": max(m.jvm_rss for m in picked) / 2**20,
                "statements": statistics.median(counts) if counts else None,
            }
    return table


def cold_only(work: Path, out: Path, rounds: int, log: Callable[[str], None]) -> int:
    """`--cold-only`: `cold_start` alone, its RESULT line and JSON."""
    started = time.perf_counter()
    cold = cold_start(work, rounds, log)
    line = (
        f"RESULT job_s={cold['job_s']:.0f} tour_s={cold['tour_s']:.0f} cold_build_s={cold['cold_build_s']:.1f} "
        f"cold_stock_s={cold['cold_stock_s']:.1f} cold_ratio={cold['cold_build_s'] / cold['cold_stock_s']:.2f} "
        f"pending_s={cold['pending_s']:.2f}"
    )
    document = {
        "machine": machine(),
        "arguments": {"rounds": rounds},
        "seconds": time.perf_counter() - started,
        "cold_start": cold,
        "result": line,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2))
    log(line)
    return 0


def result_line(table: dict[int, dict[str, dict[str, float | None]]], cold: dict[str, Any] | None) -> str:
    small, large = min(table), max(table)

    def seconds(rows: int, variant: str) -> float:
        value = table[rows][variant]["seconds"]
        assert value is not None
        return value

    stream = seconds(large, "stream_merge")
    if "stream_merge_keep_carryovers" in table[large]:
        return (
            f"RESULT merge_filter_ratio={stream / seconds(large, 'stream_merge_keep_carryovers'):.2f} "
            f"log_filter_ratio={seconds(large, 'table_stream') / seconds(large, 'table_stream_keep_carryovers'):.2f} "
            f"merge_vs_floor={stream / seconds(large, 'floor'):.2f}"
        )
    if "stream_merge_reapply" in table[large]:
        return (
            f"RESULT merge_reapply_vs_marked={seconds(large, 'stream_merge_reapply') / stream:.2f} "
            f"log_reapply_vs_marked={seconds(large, 'table_stream_reapply') / seconds(large, 'table_stream'):.2f} "
            f"merge_reapply_vs_floor={seconds(large, 'stream_merge_reapply') / seconds(large, 'floor'):.2f}"
        )
    if "stream_merge_changes" in table[large]:
        changes = seconds(large, "stream_merge_changes")
        return (
            f"RESULT changes_vs_table_changes={changes / stream:.2f} "
            f"spark_net_vs_package_net={seconds(large, 'stream_merge_spark_net') / changes:.2f} "
            f"changes_vs_floor={changes / seconds(large, 'floor'):.2f}"
        )
    line = (
        f"RESULT vs_rebuild={seconds(large, 'rebuild') / stream:.2f} "
        f"vs_cdf_incremental={stream / seconds(large, 'cdf_incremental'):.2f} "
        f"vs_floor={stream / seconds(large, 'floor'):.2f} "
        f"size_growth={stream / seconds(small, 'stream_merge'):.2f} "
        f"noop_ratio={seconds(large, 'noop_stream') / seconds(large, 'noop_incremental'):.2f}"
    )
    if cold is not None:
        line += f" cold_ratio={cold['cold_build_s'] / cold['cold_stock_s']:.2f} pending_s={cold['pending_s']:.2f}"
    return line


def plot(table: dict[int, dict[str, dict[str, float | None]]], cold: dict[str, Any] | None, path: Path) -> bool:
    """Median seconds per variant and size, and the cold-start figures; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = sorted(table)
    variants = list(table[sizes[0]])
    figure, (runs, starts) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / len(sizes)
    for index, rows in enumerate(sizes):
        values = [table[rows][variant]["seconds"] or 0.0 for variant in variants]
        positions = [position + index * width for position in range(len(variants))]
        bars = runs.bar(positions, values, width, label=f"{rows:,} rows")
        runs.bar_label(bars, fmt="%.1f", fontsize=7)
    runs.set_xticks([position + width * (len(sizes) - 1) / 2 for position in range(len(variants))])
    runs.set_xticklabels(variants, rotation=30, ha="right")
    runs.set_ylabel("median seconds per run")
    runs.set_title("one run after a 0.1% clustered change, warm session")
    runs.legend()
    if cold is not None:
        labels = ["dbt build\n(example)", "dbt build\n(stock DAG)", "tablestream\nstatus"]
        bars = starts.bar(labels, [cold["cold_build_s"], cold["cold_stock_s"], cold["pending_s"]], color="gray")
        starts.bar_label(bars, fmt="%.1f", fontsize=8)
        starts.set_title("new process, nothing new")
    else:
        starts.axis("off")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def markdown(results: dict[str, Any]) -> str:
    """bench/README.md's tables from a results JSON, so it quotes exactly what was measured."""
    table = {int(rows): variants for rows, variants in results["medians"].items()}
    variants = list(next(iter(table.values())))
    matrix = results.get("matrix") or {str(results.get("headline_fraction", "")): results["medians"]}
    lines = [
        ("| changed | rows | " if len(matrix) > 1 else "| rows | ") + " | ".join(variants) + " |",
        ("|---|---|" if len(matrix) > 1 else "|---|") + "---|" * len(variants),
    ]
    for fraction, by_size in matrix.items():
        for rows in sorted(by_size, key=int):
            cells = " | ".join(f"{by_size[rows][name]['seconds']:.2f}" for name in variants)
            changed = f"{float(fraction):.2%} | " if len(matrix) > 1 else ""
            lines.append(f"| {changed}{int(rows) // 1_000_000}M | {cells} |")
    lines += [
        "",
        "| variant | statements | "
        + " | ".join(f"peak RSS at {rows // 1_000_000}M, Python / JVM (MB)" for rows in sorted(table))
        + " |",
        "|---|---|" + "---|" * len(table),
    ]
    for name in variants:
        count = table[max(table)][name]["statements"]
        memory = " | ".join(
            f"{table[rows][name]['python_rss_mb']:.0f} / {table[rows][name]['jvm_rss_mb']:.0f}"
            for rows in sorted(table)
        )
        lines.append(f"| {name} | {'' if count is None else f'{count:.0f}'} | {memory} |")
    cold = results.get("cold_start")
    if cold:
        lines += ["", *cold_markdown(cold)]
    return "\n".join([*lines, "", f"`{results['result']}`"])


def cold_markdown(cold: dict[str, Any]) -> list[str]:
    return [
        "| new process, nothing new | median seconds | statements |",
        "|---|---|---|",
        f"| `dbt build` of the example (cold_build_s) | {cold['cold_build_s']:.1f} | {cold['cold_build_statements']:.0f} |",
        f"| `dbt build` of the same DAG, stock (cold_stock_s) | {cold['cold_stock_s']:.1f} | {cold['cold_stock_statements']:.0f} |",
        f"| `tablestream status` (pending_s) | {cold['pending_s']:.2f} | |",
        f"| the README's main job (job_s) | {cold['job_s']:.0f} | |",
        *([f"| the whole example, `main.py --tour` (tour_s) | {cold['tour_s']:.0f} | |"] if "tour_s" in cold else []),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1M and 10M rows, 0.1%% changed, 3 rounds")
    parser.add_argument("--full", action="store_true", help="1M, 5M, 10M and 20M rows, 0.01%% to 10%% changed")
    parser.add_argument("--sizes", type=int, nargs="+", help="rows (default 1M and 10M; --scale: 10M, 30M, 100M)")
    parser.add_argument(
        "--fractions", type=float, nargs="+", default=[0.001], help="the share of rows changed per round"
    )
    parser.add_argument("--rounds", type=int, help="rounds per size (default 3; --scale: 5 per pattern)")
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/run.json, run_full.json)")
    parser.add_argument("--skip-cold", action="store_true", help="leave out the main job and the cold starts")
    parser.add_argument(
        "--cold-only",
        action="store_true",
        help="only the main job and the cold starts, --quick's first part (bench/results/cold.json)",
    )
    parser.add_argument(
        "--changes",
        action="store_true",
        help="stream_read: changelog against table_changes, netted by the package or by Spark (bench/results/changes.json)",
    )
    parser.add_argument(
        "--carryovers",
        action="store_true",
        help="drop_carryovers on (the default) against off, for stream_merge and table_stream (bench/results/carryovers.json)",
    )
    parser.add_argument(
        "--warehouse",
        action="store_true",
        help="the reapply protocol (a SQL warehouse's) against the marked one, stream_merge and table_stream "
        "(bench/results/warehouse.json)",
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help="10M, 30M and 100M rows, clustered and scattered 0.1%% changes, 5 runs each (bench/results/scale.json)",
    )
    parser.add_argument(
        "--patterns",
        nargs="+",
        choices=PATTERNS,
        default=list(PATTERNS),
        help="--scale: the change patterns to measure (default both); the results file keeps the others",
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=(*SCALE_VARIANTS, "floor", "floor_expert"),
        default=[*SCALE_VARIANTS, "floor", "floor_expert"],
        help="--scale: the variants to run (default all); the results file keeps the others' cells at other sizes",
    )
    parser.add_argument("--report", type=Path, help="print bench/README.md's tables from this results JSON and stop")
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_HELP}; no cold start, no small window")
    args = parser.parse_args(argv)
    if args.report:
        results = json.loads(args.report.read_text())
        if "table" in results:
            print(scale_markdown(results))
        elif "medians" in results:
            print(markdown(results))
        else:  # --cold-only's
            print("\n".join([*cold_markdown(results["cold_start"]), "", f"`{results['result']}`"]))
        return 0
    args.sizes = args.sizes or (SCALE_SIZES if args.scale else [1_000_000, 10_000_000])
    args.rounds = args.rounds or (5 if args.scale else 3)
    if args.quick:
        args.sizes, args.fractions, args.rounds = [1_000_000, 10_000_000], [0.001], 3
    if args.full:
        args.sizes, args.fractions, args.rounds = (
            [1_000_000, 5_000_000, 10_000_000, 20_000_000],
            [0.0001, 0.001, 0.01, 0.1],
            3,
        )
    if args.tiny:
        # The cold starts and --quick's small window run the example and dbt in processes of their
        # own, minutes even on tiny data: bench/README.md says which part no tiny run covers.
        args.sizes, args.fractions, args.rounds = [TINY_ROWS], [0.001], 1
        args.quick = args.full = False
        args.skip_cold = True
    mode = (
        "cold"
        if args.cold_only
        else "changes"
        if args.changes
        else "carryovers"
        if args.carryovers
        else "warehouse"
        if args.warehouse
        else "scale"
        if args.scale
        else "run"
    )
    args.out = results_path(
        args.out, f"{mode}.json" if mode != "run" else "run_full.json" if args.full else "run.json", args.tiny
    )
    args.skip_cold = args.skip_cold or mode != "run"
    headline = 0.001 if 0.001 in args.fractions else args.fractions[0]
    bench_environment()

    started = time.perf_counter()
    if args.cold_only:
        with bench_workspace("tablestream-bench-") as work:
            return cold_only(work, args.out, args.rounds, log)
    cold: dict[str, Any] | None = None
    small_window_results: dict[str, Any] | None = None
    with bench_workspace("tablestream-bench-") as work:
        # Before this process starts its own Spark session, so the new processes have the machine.
        if not args.skip_cold:
            cold = cold_start(work, args.rounds, log)
        if args.quick and mode == "run":
            small_window_results = small_window(log)
        bench = Bench(work)
        measurements: list[Measurement] = []
        # --scale keeps the sizes and patterns it does not measure from its results file, and writes
        # the file after each size: 100M rows alone takes hours here, so cells can be measured apart.
        kept = scale_measurements(args.out, args.sizes, args.patterns) if mode == "scale" else []
        for rows in args.sizes:
            if mode == "scale":
                measurements += run_scale(bench, rows, args.rounds, log, tuple(args.patterns), tuple(args.variants))
                write_scale(args, kept + measurements, time.perf_counter() - started, log)
            else:
                measurements += run_size(bench, rows, args.fractions, args.rounds, log, mode)
    if mode == "scale":
        return 0
    matrix = {fraction: medians([m for m in measurements if m.fraction == fraction]) for fraction in args.fractions}
    table = matrix[headline]
    for fraction, by_size in matrix.items():
        for rows, variants in by_size.items():
            log(f"\nmedians at {rows:,} rows ({fraction:.2%} changed, {args.rounds} rounds):")
            log(f"  {'variant':<18}{'seconds':>9}{'statements':>12}{'python MB':>11}{'JVM MB':>9}")
            for variant, values in variants.items():
                count = values["statements"]
                log(
                    f"  {variant:<18}{values['seconds']:>9.2f}{'' if count is None else int(count):>12}"
                    f"{values['python_rss_mb']:>11.0f}{values['jvm_rss_mb']:>9.0f}"
                )
    largest = max(args.sizes)
    shown = {
        "run": ("stream_merge", "noop_stream"),
        "changes": ("stream_merge", "stream_merge_changes"),
        "warehouse": ("stream_merge", "stream_merge_reapply", "table_stream_reapply"),
    }
    for variant in shown.get(mode, ("stream_merge", "stream_merge_keep_carryovers")):
        last = [m for m in measurements if m.rows == largest and m.fraction == headline and m.variant == variant][-1]
        log(f"\n{variant} at {largest:,} rows, round {last.round}: {last.statements} statements, {last.seconds:.2f} s")
        for sql, elapsed in last.statement_log:
            log(f"  {elapsed:7.3f}  {sql}")
    if cold is not None:
        log(f"\ncold start (new processes, nothing new, median of {args.rounds}):")
        log(f"  main job {cold['job_s']:.1f} s, the whole example {cold['tour_s']:.1f} s")
        for name in ("cold_build", "cold_stock", "pending"):
            statements = cold.get(f"{name}_statements")
            sent = f", {statements:.0f} statements ({cold[f'{name}_statement_s']:.1f} s)" if statements else ""
            log(f"  {name + '_s':<16}{cold[f'{name}_s']:7.2f} s{sent}")
    smallest, largest_size = min(table), max(table)
    for variant in ("stream_merge", "noop_stream") if mode == "run" else ("stream_merge",):
        before, after = table[smallest][variant], table[largest_size][variant]
        log(
            f"peak RSS of {variant}, {smallest:,} -> {largest_size:,} rows: JVM {before['jvm_rss_mb']:.0f} -> "
            f"{after['jvm_rss_mb']:.0f} MB, driver Python {before['python_rss_mb']:.0f} -> {after['python_rss_mb']:.0f} MB"
        )
    line = result_line(table, cold) + (f" {small_window_results['result_fields']}" if small_window_results else "")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "machine": machine(),
                "arguments": {"sizes": args.sizes, "fractions": args.fractions, "rounds": args.rounds},
                "seconds": time.perf_counter() - started,
                "headline_fraction": headline,
                "medians": table,
                "matrix": {str(fraction): by_size for fraction, by_size in matrix.items()},
                "cold_start": cold,
                "small_window": small_window_results,
                "measurements": [m.__dict__ for m in measurements],
                "result": line,
            },
            indent=2,
        )
    )
    png = args.out.with_suffix(".png")
    log(f"plot: {png}" if plot(table, cold, png) else "plot skipped: pip install '.[bench]' for matplotlib")
    log(line)
    return 0


def scale_measurements(path: Path, sizes: list[int], patterns: list[str]) -> list[Measurement]:
    """The measurements of a results file that this run does not measure again (none if there is
    no file): other sizes, and at these sizes other patterns (clustering goes with clustered)."""
    if not path.exists():
        return []
    remeasured = {*patterns, *(["clustering"] if "clustered" in patterns else [])}
    return [
        Measurement(**{**m, "statement_log": [tuple(pair) for pair in m.get("statement_log", [])]})
        for m in json.loads(path.read_text())["measurements"]
        if m["rows"] not in sizes or m["pattern"] not in remeasured
    ]


def write_scale(
    args: argparse.Namespace, measurements: list[Measurement], seconds: float, log: Callable[[str], None]
) -> None:
    """scale.json, its plot and the RESULT line of a --scale run, over every size measured so far."""
    table = scale_table(measurements)
    line = scale_result_line(table)
    clustered: dict[str, dict[str, float]] = {}
    for m in measurements:
        if m.pattern == "clustering":
            clustered.setdefault(str(m.rows), {})[f"{m.variant}_s"] = m.seconds
    results = {
        "machine": machine(),
        "arguments": {"sizes": args.sizes, "rounds": args.rounds, "fraction": 0.001, "patterns": list(PATTERNS)},
        "seconds": seconds,
        "table": table,
        "clustering": clustered,
        # Only stream_merge keeps its statements: where its time goes, against the floors.
        "measurements": [
            {k: v for k, v in m.__dict__.items() if k != "statement_log" or m.variant == "stream_merge"}
            for m in measurements
        ],
        "result": line,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    log("\n" + scale_markdown(json.loads(json.dumps(results))))
    png = args.out.with_suffix(".png")
    log(f"plot: {png}" if plot_scale(table, png) else "plot skipped: pip install '.[bench]' for matplotlib")
    log(line)


def plot_scale(table: dict[str, dict[int, dict[str, dict[str, float]]]], path: Path) -> bool:
    """Median seconds per variant against rows, one panel per change pattern; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, panels = plt.subplots(1, len(table), figsize=(12, 5), sharey=True, squeeze=False)
    for panel, (pattern, by_size) in zip(panels[0], table.items(), strict=True):
        sizes = sorted(by_size)
        # A variant left out at some size (--variants) is drawn through the sizes that have it.
        for variant in dict.fromkeys(variant for rows in sizes for variant in by_size[rows]):
            measured = [rows for rows in sizes if variant in by_size[rows]]
            panel.plot(measured, [by_size[rows][variant]["seconds"] for rows in measured], marker="o", label=variant)
        panel.set_xscale("log")
        panel.set_yscale("log")
        panel.set_xlabel("target rows")
        panel.set_title(f"{pattern} 0.1% change, median of consecutive runs")
    panels[0][0].set_ylabel("seconds per run")
    panels[0][0].legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: a stream run costs what changed, not the size of the source (DESIGN.md section 8).

One process, one warm SparkSession of the embedded engine. For each source size and workload,
every round applies one batch of changes to the keyed source `app.src` and then runs, in an
order that rotates from round to round:

  stream_merge   the stream_merge model (dbt run, in-process)
  table_stream   the table_stream change log (dbt run, in-process)
  handwritten    the same work by hand on the same engine: read the window's change feed, keep the
                 last change per key, one MERGE through the engine's Delta writer (the floor)
  rebuild        a `table` model over the whole source (dbt run)
  incremental    a stock dbt incremental model filtering on a batch watermark (dbt run)
  empty_window   the stream_merge model again with nothing new (dbt run)

Medians over the rounds are reported. `--quick` is the CI-size check; its last line is
`RESULT vs_rebuild=.. vs_incremental=.. vs_handwritten=.. size_growth=.. noop_s=..`.

    python bench/run.py --quick
    python bench/run.py --sizes 1000000 5000000 --fractions 0.0001 0.001 0.01 0.1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import yaml
from deltalake import DeltaTable, write_deltalake

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
VARIANTS = ("stream_merge", "table_stream", "handwritten", "rebuild", "incremental", "empty_window")
MODELS = {
    "stream_merge": "stream_merge_target",
    "table_stream": "change_log",
    "rebuild": "rebuilt_target",
    "incremental": "incremental_target",
    "empty_window": "stream_merge_target",
}
CDF = {"delta.enableChangeDataFeed": "true"}
ROWS_PER_FILE = 25_000


@dataclass(frozen=True)
class Workload:
    size: int
    fraction: float
    layout: str  # clustered | scattered
    kind: str  # mixed | insert | update | delete

    @property
    def name(self) -> str:
        return f"{self.size}-{self.fraction:g}-{self.layout}-{self.kind}"


@dataclass
class Measurement:
    workload: Workload
    variant: str
    wall_s: list[float] = field(default_factory=list)
    node_s: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "size": self.workload.size,
            "fraction": self.workload.fraction,
            "layout": self.workload.layout,
            "kind": self.workload.kind,
            "variant": self.variant,
            "median_wall_s": round(statistics.median(self.wall_s), 4),
            "median_node_s": round(statistics.median(self.node_s), 4) if self.node_s else None,
            "wall_s": [round(value, 4) for value in self.wall_s],
            "node_s": [round(value, 4) for value in self.node_s],
        }


def source_rows(ids: np.ndarray, batch: int, rng: np.random.Generator) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "grp": pa.array(ids // ROWS_PER_FILE, pa.int64()),
            "name": pa.array([f"n{i}" for i in ids], pa.string()),
            "amount": pa.array(rng.integers(0, 1_000_000, len(ids)), pa.int64()),
            "batch": pa.array(np.full(len(ids), batch), pa.int64()),
        }
    )


class Bench:
    """A warehouse with the keyed source, the dbt project, and the hand-written consumer's state."""

    def __init__(self, work: Path, size: int, seed: int = 7) -> None:
        from dbt.cli.main import dbtRunner

        self.work = work
        self.size = size
        self.rng = np.random.default_rng(seed)
        self.warehouse = work / "warehouse"
        self.project = work / "project"
        shutil.copytree(BENCH / "project", self.project)
        (self.project / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(ROOT)}]}))
        profile = {"type": "tablestream", "schema": "analytics", "warehouse": str(self.warehouse), "threads": 1}
        (self.project / "profiles.yml").write_text(
            yaml.safe_dump({"tablestream_bench": {"target": "dev", "outputs": {"dev": profile}}})
        )
        self.runner = dbtRunner()
        self.next_id = size
        self.batch = 0
        self.hand_offset = -1

    @property
    def source_path(self) -> str:
        return str(self.warehouse / "app.db" / "src")

    @property
    def hand_path(self) -> str:
        return str(self.warehouse / "analytics.db" / "handwritten_target")

    def dbt(self, *args: str) -> tuple[float, float | None]:
        """Run dbt in-process; return its wall time and the node's own execution time."""
        started = time.perf_counter()
        result = self.runner.invoke(
            [*args, "--project-dir", str(self.project), "--profiles-dir", str(self.project), "--quiet"]
        )
        wall = time.perf_counter() - started
        if not result.success:
            raise RuntimeError(f"dbt {' '.join(args)} failed: {result.exception or result.result}")
        results = getattr(result.result, "results", None) or []
        return wall, (results[0].execution_time if results else None)

    def create_source(self) -> None:
        files = max(1, self.size // ROWS_PER_FILE)
        for index in range(files):
            ids = np.arange(index * ROWS_PER_FILE, min((index + 1) * ROWS_PER_FILE, self.size))
            write_deltalake(
                self.source_path,
                source_rows(ids, 0, self.rng),
                mode="append",
                configuration=CDF if index == 0 else None,
            )

    def first_runs(self) -> None:
        self.dbt("deps")
        for model in ("stream_merge_target", "change_log", "rebuilt_target", "incremental_target"):
            self.dbt("run", "-s", model)
        from dbt_tablestream.embedded._delta import write_table

        table = DeltaTable(self.source_path)
        self.hand_offset = table.version()
        write_table(self.hand_path, table.to_pyarrow_table(), "overwrite")

    def apply_changes(self, workload: Workload) -> int:
        """One batch of changes to the source, in one MERGE commit; returns rows changed."""
        self.batch += 1
        count = max(3, round(self.size * workload.fraction))
        existing = DeltaTable(self.source_path).to_pyarrow_table(columns=["id"]).column("id").to_numpy()
        shares = {"mixed": (1, 1, 1), "insert": (0, 0, 1), "update": (1, 0, 0), "delete": (0, 1, 0)}[workload.kind]
        parts = [count * share // sum(shares) for share in shares]
        touched = parts[0] + parts[1]
        if workload.layout == "clustered":
            # The newest rows: a contiguous id range in one or two files, next to where inserts land.
            chosen = np.sort(existing)[-touched:] if touched else np.array([], dtype=np.int64)
        else:
            chosen = self.rng.choice(existing, size=touched, replace=False) if touched else np.array([], dtype=np.int64)
        updates, deletes = chosen[: parts[0]], chosen[parts[0] :]
        inserts = np.arange(self.next_id, self.next_id + parts[2])
        self.next_id += parts[2]
        changed = pa.concat_tables(
            [
                source_rows(updates, self.batch, self.rng).append_column(
                    "op", pa.array(["U"] * len(updates), pa.string())
                ),
                source_rows(deletes, self.batch, self.rng).append_column(
                    "op", pa.array(["D"] * len(deletes), pa.string())
                ),
                source_rows(inserts, self.batch, self.rng).append_column(
                    "op", pa.array(["I"] * len(inserts), pa.string())
                ),
            ]
        )
        columns = ["id", "grp", "name", "amount", "batch"]
        (
            DeltaTable(self.source_path)
            .merge(changed, "t.id = s.id", source_alias="s", target_alias="t", streamed_exec=False)
            .when_matched_update({c: f"s.{c}" for c in columns if c != "id"}, predicate="s.op = 'U'")
            .when_matched_delete(predicate="s.op = 'D'")
            .when_not_matched_insert({c: f"s.{c}" for c in columns}, predicate="s.op = 'I'")
            .execute()
        )
        return count

    def handwritten(self) -> float:
        """The floor: the window's change feed, the last change per key, one MERGE."""
        from dbt_tablestream.embedded._arrow import normalize_table
        from dbt_tablestream.embedded._delta import MergeSpec, merge_table

        started = time.perf_counter()
        table = DeltaTable(self.source_path)
        through = table.version()
        if through > self.hand_offset:
            changes = normalize_table(pa.table(table.load_cdf(self.hand_offset + 1, through).read_all()))
            changes = changes.filter(pc.not_equal(changes["_change_type"], "update_preimage"))
            order = pc.sort_indices(changes, sort_keys=[("id", "ascending"), ("_commit_version", "descending")])
            changes = changes.take(order)
            ids = changes["id"].to_numpy()
            first = np.ones(len(ids), dtype=bool)
            first[1:] = ids[1:] != ids[:-1]
            latest = changes.filter(pa.array(first)).select(["id", "grp", "name", "amount", "batch", "_change_type"])
            spec = MergeSpec(
                keys=["id"],
                update_columns=["grp", "name", "amount", "batch"],
                update_when="source._change_type <> 'delete'",
                insert_when="source._change_type <> 'delete'",
                delete_when="source._change_type = 'delete'",
            )
            merge_table(self.hand_path, latest, spec)
            self.hand_offset = through
        return time.perf_counter() - started


def run_workload(bench: Bench, workload: Workload, rounds: int, log: Callable[[str], None]) -> list[Measurement]:
    measurements = {variant: Measurement(workload, variant) for variant in VARIANTS}
    ordered = [variant for variant in VARIANTS if variant != "empty_window"]
    for round_index in range(rounds):
        bench.apply_changes(workload)
        rotation = ordered[round_index % len(ordered) :] + ordered[: round_index % len(ordered)]
        for variant in rotation:
            if variant == "handwritten":
                measurements[variant].wall_s.append(bench.handwritten())
                continue
            wall, node = bench.dbt("run", "-s", MODELS[variant])
            measurements[variant].wall_s.append(wall)
            if node is not None:
                measurements[variant].node_s.append(node)
        wall, node = bench.dbt("run", "-s", MODELS["empty_window"])
        measurements["empty_window"].wall_s.append(wall)
        if node is not None:
            measurements["empty_window"].node_s.append(node)
        log(
            f"  {workload.name} round {round_index + 1}/{rounds}: "
            + ", ".join(f"{v} {measurements[v].wall_s[-1]:.2f}s" for v in VARIANTS)
        )
    return list(measurements.values())


def median_of(results: list[dict[str, Any]], variant: str, key: str = "median_wall_s", **where: Any) -> float:
    rows = [r for r in results if r["variant"] == variant and all(r[k] == v for k, v in where.items())]
    if not rows:
        raise KeyError((variant, where))
    return float(rows[0][key])


def result_line(results: list[dict[str, Any]], small: int, large: int) -> str:
    at = {"fraction": 0.001, "layout": "clustered", "kind": "mixed"}
    merge = median_of(results, "stream_merge", size=large, **at)
    node = median_of(results, "stream_merge", "median_node_s", size=large, **at)
    hand = median_of(results, "handwritten", size=large, **at)
    return (
        f"RESULT vs_rebuild={median_of(results, 'rebuild', size=large, **at) / merge:.2f}"
        f" vs_incremental={median_of(results, 'incremental', size=large, **at) / merge:.2f}"
        f" vs_handwritten={node / hand:.2f}"
        f" size_growth={merge / median_of(results, 'stream_merge', size=small, **at):.2f}"
        f" noop_s={median_of(results, 'empty_window', size=large, **at):.2f}"
        f" vs_handwritten_invocation={merge / hand:.2f}"
    )


def machine() -> dict[str, Any]:
    import deltalake
    import pyspark
    from dbt.version import __version__ as dbt_version

    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "deltalake": deltalake.__version__,
        "dbt_core": str(dbt_version),
    }


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_fraction, by_size) = plt.subplots(1, 2, figsize=(12, 4.5))
    largest = max(r["size"] for r in results)
    for variant in ("stream_merge", "handwritten", "rebuild", "incremental", "empty_window"):
        points = sorted(
            (r["fraction"], r["median_wall_s"])
            for r in results
            if r["variant"] == variant and r["size"] == largest and r["layout"] == "clustered" and r["kind"] == "mixed"
        )
        if points:
            by_fraction.plot(*zip(*points, strict=True), marker="o", label=variant)
        sizes = sorted(
            (r["size"], r["median_wall_s"])
            for r in results
            if r["variant"] == variant
            and r["fraction"] == 0.001
            and r["layout"] == "clustered"
            and r["kind"] == "mixed"
        )
        if sizes:
            by_size.plot(*zip(*sizes, strict=True), marker="o", label=variant)
    by_fraction.set(
        xscale="log",
        xlabel="fraction of rows changed",
        ylabel="median run time (s)",
        title=f"{largest:,} rows, clustered mixed changes",
    )
    by_size.set(xlabel="source rows", ylabel="median run time (s)", title="0.1% clustered mixed changes")
    for axis in (by_fraction, by_size):
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI-size: two sizes, 0.1%% clustered mixed, 3 rounds")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.0001, 0.001, 0.01, 0.1])
    parser.add_argument("--layouts", nargs="+", default=["clustered", "scattered"])
    parser.add_argument("--kinds", nargs="+", default=["mixed", "insert", "update", "delete"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="results file (default bench/results/<mode>.json)")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.fractions, args.layouts, args.kinds, args.rounds = (
            [1_000_000, 5_000_000],
            [0.001],
            ["clustered"],
            ["mixed"],
            3,
        )
    # dbt's anonymous usage events try the network at the end of each invocation; not our cost.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", flush=True)

    results: list[dict[str, Any]] = []
    for size in sorted(args.sizes):
        with tempfile.TemporaryDirectory(prefix="tablestream-bench-") as directory:
            bench = Bench(Path(directory), size)
            log(f"source of {size:,} rows in {max(1, size // ROWS_PER_FILE)} files")
            bench.create_source()
            bench.first_runs()
            for fraction in args.fractions:
                for layout in args.layouts:
                    for kind in args.kinds:
                        workload = Workload(size, fraction, layout, kind)
                        for measurement in run_workload(bench, workload, args.rounds, log):
                            results.append(measurement.summary())
    mode = "quick" if args.quick else "full"
    out = args.out or RESULTS / f"{mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine(), "rounds": args.rounds, "results": results}, indent=1))
    plot(results, out.with_suffix(".png"))
    log(f"wrote {out} and {out.with_suffix('.png')}")
    if 0.001 in args.fractions and "clustered" in args.layouts and "mixed" in args.kinds and len(args.sizes) > 1:
        print(result_line(results, min(args.sizes), max(args.sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

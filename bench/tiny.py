"""The maintained benchmarks that run in one process, each `--tiny`, one after another on one local
session: the check that none of them is broken (tests/functional/test_benchmarks.py runs those that
fit the default suite). A tiny run is a benchmark's smallest data and one round through the code of its
full run; its figures are no measurement.

Before each benchmark it prints `BENCHMARK <name>`; each then prints what its full run prints and
writes its JSON to `--out-dir` (a temporary folder by default). A benchmark fails if it raises, if
its last RESULT line has other keys than its full run's (RESULT_KEYS) or if its JSON does not hold
that line. It runs every one named even after a failure, and exits 1 if any failed.

    python bench/tiny.py                      # all of them
    python bench/tiny.py aggregate mirror     # some

The benchmarks that start processes of their own run `--tiny` alone (bench/README.md, below its
table: small_window.py, fresh_scale.py, local_start.py, pending.py and run.py's cold starts); but
view.py, whose fresh part runs `dbt` processes on a warehouse of their own beside this one's session.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import re
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import bench_environment, share_session

from dbt.adapters.tablestream._class_archive import CLASS_ARCHIVE_SETTING

# Each benchmark: its script and arguments beside --tiny.
IN_PROCESS: dict[str, tuple[str, list[str]]] = {
    "run": ("run", []),
    "run_scale": ("run", ["--scale"]),
    "run_carryovers": ("run", ["--carryovers"]),
    "run_warehouse": ("run", ["--warehouse"]),
    "run_changes": ("run", ["--changes"]),
    "aggregate": ("aggregate", []),
    "view": ("view", []),
    "events": ("events", []),
    "history": ("history", []),
    "log_read": ("log_read", []),
    "long_run": ("long_run", []),
    "mirror": ("mirror", []),
    "run_profile": ("run_profile", []),
    "year": ("year", []),
    "directory": ("directory", []),
    "ingest": ("ingest", []),
}
# The keys of each benchmark's RESULT line as its full run prints them (bench/README.md quotes
# them), a number in a key standing for the size or share its data gives it (`_10m`, `_1.0%`).
# bench/run.py's are those of its in-session part: a tiny run has no cold starts and no small window.
RESULT_KEYS = {
    "run": "vs_rebuild vs_cdf_incremental vs_floor size_growth noop_ratio",
    "run_scale": "clustered_vs_rebuild scattered_vs_rebuild clustered_growth max_vs_floor_expert max_vs_cdf_incremental "
    "max_last_vs_first dv_clustered dv_scattered dv_scattered_vs_rebuild merge_only_scattered_vs_rebuild "
    "merge_only_clustered_vs_rebuild replace_scattered_vs_rebuild scattered_vs_rebuild_by_size jvm_mb",
    "run_carryovers": "merge_filter_ratio log_filter_ratio merge_vs_floor",
    "run_warehouse": "merge_reapply_vs_marked log_reapply_vs_marked merge_reapply_vs_floor",
    "run_changes": "changes_vs_table_changes spark_net_vs_package_net changes_vs_floor",
    "aggregate": "clustered_stream_aggregate_vs_table_Nm clustered_cdf_incremental_vs_table_Nm "
    "extremes_stream_aggregate_vs_table_Nm extremes_cdf_incremental_vs_table_Nm targets_equal_group_by",
    "view": "keyed_warm_vs_rebuild keyed_fresh_vs_rebuild keyed_last_vs_first_warm keyed_last_vs_first_fresh "
    "grouped_warm_vs_rebuild grouped_fresh_vs_rebuild grouped_last_vs_first_warm grouped_last_vs_first_fresh",
    "events": "events_vs_plain_N%",
    "history": "scd2_vs_plain",
    "log_read": "log_read_vs_feed_read log_run_vs_feed_run log_read_vs_full_diff",
    "long_run": "first_s median_s last_s last_vs_first median_vs_first files median_span",
    "mirror": "mirror_vs_rebuild mirror_dv_vs_rebuild feed_rows_vs_changes",
    "run_profile": " ".join(
        f"{model}_{part}"
        for model in ("aggregate_stream", "aggregate_table")
        for part in ("seconds", "execute", "fetch", "rest")
    ),
    "year": "noop_fresh_s noop_year_s noop_ratio status_fresh_s status_year_s log_files",
    "directory": "files first_s changes_s unchanged_s spark_start_s",
    "ingest": "cdc_sync_N_rows_per_s append_sync_N_rows_per_s append_background_N_rows_per_s",
}
# The session lives for the few minutes of the tiny runs: the C1 JIT alone starts it and runs its
# first statements sooner, and a class archive's dump at its exit would cost more than it saves
# (CONTRIBUTING.md, "Settings the tests' sessions use").
SHORT_LIVED_SESSION = {
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m",
    CLASS_ARCHIVE_SETTING: "false",
}


class Tee(io.StringIO):
    """What a benchmark prints, kept and passed on to this process's output."""

    def __init__(self, out: Any) -> None:
        super().__init__()
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text)
        self.out.flush()
        return super().write(text)


def result_keys(line: str) -> set[str]:
    """A RESULT line's keys, each number after an underscore (a size, a share) as N."""
    return {re.sub(r"(?<=_)\d+(\.\d+)?", "N", field.split("=", 1)[0]) for field in line.split()[1:]}


def check(name: str, printed: str, out: Path) -> str | None:
    """What is wrong with a benchmark's tiny run, by what it printed and the JSON it wrote; None if nothing."""
    results = [line for line in printed.splitlines() if line.startswith("RESULT ")]
    if not results:
        return "no RESULT line"
    if result_keys(results[-1]) != set(RESULT_KEYS[name].split()):
        return f"its RESULT keys are not its full run's ({RESULT_KEYS[name]}): {results[-1]}"
    if not out.exists() or json.loads(out.read_text()).get("result") != results[-1]:
        return f"{out} does not hold its RESULT line"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="name", help=f"of {', '.join(IN_PROCESS)} (default all)")
    parser.add_argument("--out-dir", type=Path, help="their results JSON files, <name>.json")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(IN_PROCESS))
    if unknown:
        parser.error(f"not a benchmark that runs in one process: {' '.join(unknown)}")
    out_dir: Path = args.out_dir or Path(tempfile.mkdtemp(prefix="tablestream-bench-tiny-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    bench_environment()
    warehouse = Path(tempfile.mkdtemp(prefix="tablestream-bench-tiny-warehouse-"))
    started = time.perf_counter()
    share_session(warehouse, SHORT_LIVED_SESSION)
    took = {"session": time.perf_counter() - started}
    failed: list[str] = []
    try:
        for name in args.names or IN_PROCESS:
            print(f"BENCHMARK {name}", flush=True)
            began = time.perf_counter()
            script, arguments = IN_PROCESS[name]
            out = out_dir / f"{name}.json"
            printed = Tee(sys.stdout)
            try:
                with contextlib.redirect_stdout(printed):
                    importlib.import_module(script).main([*arguments, "--tiny", "--out", str(out)])
                wrong = check(name, printed.getvalue(), out)
            except (Exception, SystemExit):  # a benchmark's refusal (SystemExit) fails it too
                wrong = traceback.format_exc()
            took[name] = time.perf_counter() - began
            if wrong:
                print(f"BENCHMARK {name} failed: {wrong}", flush=True)
                failed.append(name)
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)
    print("BENCHMARKS done: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in took.items()), flush=True)
    if failed:
        print(f"failed: {' '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

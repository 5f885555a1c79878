"""The maintained benchmarks that run in one process, each `--tiny`, one after another on one local
session: the check that none of them is broken (tests/functional/test_benchmarks.py runs it in the
default suite). A tiny run is a benchmark's smallest data and one round through the code of its
full run; its figures are no measurement.

Before each benchmark it prints `BENCHMARK <name>`; each then prints what its full run prints, its
RESULT line last, and writes its JSON to `--out-dir` (a temporary folder by default). It runs every
one named even after a failure, and exits 1 if any failed.

    python bench/tiny.py                      # all of them
    python bench/tiny.py aggregate mirror     # some

The benchmarks that start processes of their own run `--tiny` alone (bench/README.md's table:
small_window.py, fresh_scale.py, local_start.py, pending.py and run.py's cold starts).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import share_session

from dbt.adapters.tablestream._class_archive import CLASS_ARCHIVE_SETTING

# Each benchmark: its script and arguments beside --tiny.
IN_PROCESS = {
    "run": ("run", []),
    "run_scale": ("run", ["--scale"]),
    "aggregate": ("aggregate", []),
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
# The session lives for the few minutes of the tiny runs: the C1 JIT alone starts it and runs its
# first statements sooner, and a class archive's dump at its exit would cost more than it saves
# (CONTRIBUTING.md, "Settings the tests' sessions use").
SHORT_LIVED_SESSION = {
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m",
    CLASS_ARCHIVE_SETTING: "false",
}


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
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warehouse = Path(tempfile.mkdtemp(prefix="tablestream-bench-tiny-warehouse-"))
    started = time.perf_counter()
    share_session(warehouse, SHORT_LIVED_SESSION)
    took = {"session": time.perf_counter() - started}
    failed: list[str] = []
    try:
        for name in args.names or IN_PROCESS:
            print(f"BENCHMARK {name}", flush=True)
            began = time.perf_counter()
            try:
                script, arguments = IN_PROCESS[name]
                importlib.import_module(script).main([*arguments, "--tiny", "--out", str(out_dir / f"{name}.json")])
            except Exception:
                traceback.print_exc(file=sys.stdout)
                failed.append(name)
            took[name] = time.perf_counter() - began
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)
    print("BENCHMARKS done: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in took.items()), flush=True)
    if failed:
        print(f"failed: {' '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

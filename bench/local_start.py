"""Benchmark: a new process's local Spark start, resolving delta-spark's packages with Ivy, reusing
the jars an earlier start recorded, and mapping the class archive (docs/local-profile.md, "Starting").

Each round starts three processes in turn, in an order rotated per round. Each starts the local
profile's session (`LocalSpark.root`, the adapter's own start) on a warehouse of its own, then
sends its first Delta statements (a CREATE TABLE AS SELECT of 10 rows and a DESCRIBE HISTORY):

- `resolve`: Ivy resolves `spark.jars.packages`, from a copy of the Ivy cache whose record is
  removed before each start (nothing is fetched: the copy holds every jar);
- `recorded`: the start reads the record of an earlier start and passes `spark.jars`, with the
  class archive turned off;
- `archive`: the default, the recorded jars and the class archive, which one unmeasured start
  wrote at its exit into an Ivy home that held no archive (its process's seconds, the dump
  included, are the JSON's `dump_start`).

Every start runs on an Ivy home of its own (`spark.jars.ivy`) in a temporary folder: the shared
one (~/.ivy2.5.2) keeps the class archives and the jars' record that the other processes on this
machine start from, so the benchmark reads it and writes nothing there.

Each run's `process_s` is its process's wall time, from launch to exit.

    python bench/local_start.py                 # 5 rounds
    python bench/local_start.py --rounds 3

Writes bench/results/local_start.json; its last line is a RESULT line. Needs one earlier start on
this machine (any dbt run on the local profile), so that the Ivy cache holds the jars.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import TINY_HELP, results_path

VARIANTS = ("resolve", "recorded", "archive")

# The child process: what it measures it prints as one JSON line, last.
CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
began = time.monotonic()
from dbt.adapters.tablestream._session import LocalSpark
spark = LocalSpark.root(Path(tempfile.mkdtemp(prefix="local-start-")), json.loads(sys.argv[1]))
started = time.monotonic()
spark.sql("create table t using delta as select id from range(10)")
spark.sql("describe history t limit 1").collect()
print(json.dumps({"start_s": started - began, "first_statements_s": time.monotonic() - started}))
"""


def start(overrides: dict[str, str]) -> dict[str, float]:
    began = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(overrides)], capture_output=True, text=True, cwd=tempfile.gettempdir()
    )
    if ran.returncode != 0:
        raise SystemExit(f"a start failed:\n{ran.stdout}\n{ran.stderr}")
    return {**json.loads(ran.stdout.strip().splitlines()[-1]), "process_s": time.monotonic() - began}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/local_start.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rounds = 1
    args.out = results_path(args.out, "local_start.json", args.tiny)
    from dbt.adapters.tablestream._class_archive import CLASS_ARCHIVE_SETTING
    from dbt.adapters.tablestream._session import IVY_HOME, delta_package, recorded_jars_file

    ivy = Path(IVY_HOME).expanduser()
    if not (ivy / "jars").is_dir():
        raise SystemExit(f"{ivy / 'jars'} is missing: run any dbt command on the local profile once first")
    record = recorded_jars_file({"spark.jars.packages": delta_package()})
    if record is None or not record.is_file():
        raise SystemExit(f"{ivy / 'tablestream'} holds no record of the jars: run any dbt command on the local profile")
    private = Path(tempfile.mkdtemp(prefix="local-start-ivy-"))
    # `resolve` resolves from a copy of the cache; `recorded` and `archive` share a home holding
    # only a copy of the record, whose jars stay where the shared cache keeps them.
    resolving, recorded = private / "resolving", private / "recorded"
    for folder in ("cache", "jars"):
        shutil.copytree(ivy / folder, resolving / folder)
    (recorded / "tablestream").mkdir(parents=True)
    shutil.copy2(record, recorded / "tablestream" / record.name)
    overrides: dict[str, dict[str, str]] = {
        "resolve": {"spark.jars.ivy": str(resolving)},
        "recorded": {"spark.jars.ivy": str(recorded), CLASS_ARCHIVE_SETTING: "false"},
        "archive": {"spark.jars.ivy": str(recorded)},
    }
    runs: dict[str, list[dict[str, float]]] = {variant: [] for variant in VARIANTS}
    try:
        dump_start = start(overrides["archive"])
        print(f"the start that writes the class archive: {dump_start}", flush=True)
        for round_number in range(args.rounds):
            order = VARIANTS[round_number % 3 :] + VARIANTS[: round_number % 3]
            for variant in order:
                shutil.rmtree(resolving / "tablestream", ignore_errors=True)
                runs[variant].append(start(overrides[variant]))
                print(f"round {round_number + 1} {variant}: {runs[variant][-1]}", flush=True)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    medians: dict[str, Any] = {
        variant: {key: round(statistics.median(run[key] for run in runs[variant]), 2) for key in runs[variant][0]}
        for variant in VARIANTS
    }
    document = {"rounds": args.rounds, "medians": medians, "dump_start": dump_start, "runs": runs}
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    fields = [
        f"{figure}_{variant}_s={medians[variant][f'{figure}_s']}"
        for figure in ("start", "first_statements", "process")
        for variant in VARIANTS
    ]
    print("RESULT " + " ".join(fields) + f" dump_process_s={dump_start['process_s']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: many runs of one stream model in a row, and what they do to its target's files.

`--scale`'s source (bench/run.py): `--rows` keyed rows written in key order in files of 250,000,
deletion vectors on, and its `stream_merge` target built in the same layout. Then `--runs` rounds,
each a clustered 0.1% change (a block of keys updated, the next block deleted, new keys above the
highest) and one warm `dbt run` of the model. A MERGE writes the rows of the files it rewrites
together with the window's new keys, in as many files as Spark's shuffle leaves, so the key range
of a rewritten file can widen run after run; the question is whether the runs' cost follows.

Reported per run: its seconds, what its write did (Delta's operationMetrics: files removed and
added, target rows copied), and then the target's file count and the median and widest key span of
its files. RESULT: the first, the median and the last run, their ratios, and the layout at the
start and the end; bench/results/long_run.json.

    python bench/long_run.py                          # stream_merge, 10M rows, 60 runs: 15 minutes here
    python bench/long_run.py --rows 1000000 --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import TINY_HELP, TINY_ROWS, Bench, bench_workspace, machine, results_path

WRITE_METRICS = ("numTargetFilesRemoved", "numTargetFilesAdded", "numTargetRowsCopied")


def layout(bench: Bench, model: str) -> dict[str, int]:
    """The target's files: how many, and the median and widest span of the keys each holds."""
    spans = sorted(
        int(row["span"])
        for row in bench.sql(f"select max(id) - min(id) as span from analytics.{model} group by input_file_name()")
    )
    return {"files": len(spans), "median_span": spans[len(spans) // 2], "widest_span": spans[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--model", default="stream_merge", help="a model of bench/project over app.src")
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/long_run.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rows, args.runs = TINY_ROWS, 1
    args.out = results_path(args.out, "long_run.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    runs: list[dict[str, Any]] = []
    with bench_workspace("tablestream-bench-long-run-") as work:
        bench = Bench(work)
        bench.create_source(args.rows, bounded=True)
        bench.dbt(["run", "--full-refresh", "-s", args.model])
        built = layout(bench, args.model)
        print(f"{args.rows:,} rows: built in {time.perf_counter() - started:.0f} s, {built}", flush=True)
        for number in range(1, args.runs + 1):
            bench.change_source(args.rows, 0.001, number, "clustered")
            began = time.perf_counter()
            bench.dbt(["run", "-s", args.model])
            seconds = time.perf_counter() - began
            metrics = bench.sql(f"describe history analytics.{args.model} limit 1")[0]["operationMetrics"] or {}
            runs.append(
                {
                    "run": number,
                    "seconds": seconds,
                    **{name: int(metrics.get(name, 0)) for name in WRITE_METRICS},
                    **layout(bench, args.model),
                }
            )
            done = runs[-1]
            print(
                f"run {number}/{args.runs}: {seconds:.2f} s, files removed {done['numTargetFilesRemoved']} added "
                f"{done['numTargetFilesAdded']}, rows copied {done['numTargetRowsCopied']:,}; the target: "
                f"{done['files']} files, median span {done['median_span']:,} keys, widest {done['widest_span']:,}",
                flush=True,
            )
    first, last = runs[0]["seconds"], runs[-1]["seconds"]
    median = statistics.median(run["seconds"] for run in runs)
    line = (
        f"RESULT first_s={first:.2f} median_s={median:.2f} last_s={last:.2f} last_vs_first={last / first:.2f} "
        f"median_vs_first={median / first:.2f} files={built['files']}->{runs[-1]['files']} "
        f"median_span={built['median_span']}->{runs[-1]['median_span']}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine(),
        "arguments": {"rows": args.rows, "runs": args.runs, "model": args.model},
        "seconds": time.perf_counter() - started,
        "built": built,
        "runs": runs,
        "result": line,
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

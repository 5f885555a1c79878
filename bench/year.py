"""Benchmark: a no-op run and `tablestream status` after a year of runs' offsets rows.

One warm local session (bench/run.py's Bench), a `stream_merge` model over a small source:

1. `fresh`: `rounds` no-op runs of the model (nothing new in the source: the run reads the
   position, finds an empty window and appends its offsets row) on a log of a few rows, and
   `tablestream status` (delta-rs, a new process);
2. then `commits` more rows of the stream in the log, one Delta commit each, written fast by
   delta-rs (the stream's latest row again, so its position does not move): a year of runs at
   about two an hour;
3. no-op runs until one of them has compacted the log (every `tablestream_compact_every`-th run of
   a stream, default 50), as a year of runs would have all along;
4. `year`: `rounds` no-op runs and `tablestream status` again.

Reported: the medians, the log's files before and after the compaction, and the ratio
year / fresh (bench/results/year.json).

    python bench/year.py                      # 20,000 commits, 5 rounds
    python bench/year.py --commits 2000       # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import RESULTS, Bench, machine, run_process

STREAM = "stream_merge__app_src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=20_000, help="offsets rows appended, one commit each")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "year.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import pyarrow.compute as pc
    from deltalake import DeltaTable, write_deltalake

    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tablestream-year-"))
    status = [str(Path(sys.executable).parent / "tablestream"), "status", "--json"]
    try:
        bench = Bench(work)
        bench.create_source(100_000)
        bench.dbt(["run", "-s", "stream_merge"])
        status += ["--project-dir", str(bench.project), "--profiles-dir", str(bench.project)]
        log_path = str(bench.warehouse / "analytics.db" / "tablestream_offsets")

        def noop() -> float:
            begun = time.perf_counter()
            bench.dbt(["run", "-s", "stream_merge"])
            return time.perf_counter() - begun

        def measure(name: str) -> dict[str, Any]:
            runs = [noop() for _ in range(args.rounds)]
            statuses = [run_process(status).seconds for _ in range(args.rounds)]
            files = len(DeltaTable(log_path).file_uris())
            print(
                f"{name}: no-op run {statistics.median(runs):.2f} s, status {statistics.median(statuses):.2f} s, "
                f"{files} log files",
                flush=True,
            )
            return {
                "noop_s": statistics.median(runs),
                "noop_runs": runs,
                "status_s": statistics.median(statuses),
                "status_runs": statuses,
                "log_files": files,
            }

        fresh = measure("fresh")
        table = DeltaTable(log_path)
        rows = table.to_pyarrow_table()
        latest = (
            rows.filter(pc.equal(rows["stream_name"], STREAM)).sort_by([("committed_at", "descending")]).slice(0, 1)
        )
        begun = time.perf_counter()
        for index in range(args.commits):
            write_deltalake(table, latest, mode="append")
            if (index + 1) % 2000 == 0:
                print(f"  {index + 1:,} commits in {time.perf_counter() - begun:.0f} s", flush=True)
        uncompacted = len(DeltaTable(log_path).file_uris())
        until_compacted = 0
        while not any(entry.get("operation") == "OPTIMIZE" for entry in DeltaTable(log_path).history(1)):
            noop()
            until_compacted += 1
            if until_compacted > 100:
                raise RuntimeError("no run compacted the offsets log within 100 runs")
        print(f"{uncompacted} log files; compacted by the {until_compacted}th no-op run after them", flush=True)
        year = measure("year")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = (
        f"RESULT noop_fresh_s={fresh['noop_s']:.2f} noop_year_s={year['noop_s']:.2f} "
        f"noop_ratio={year['noop_s'] / fresh['noop_s']:.2f} status_fresh_s={fresh['status_s']:.2f} "
        f"status_year_s={year['status_s']:.2f} log_files={uncompacted}->{year['log_files']}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "machine": machine(),
                "arguments": {"commits": args.commits, "rounds": args.rounds},
                "seconds": time.perf_counter() - started,
                "fresh": fresh,
                "year": year,
                "uncompacted_log_files": uncompacted,
                "runs_until_compacted": until_compacted,
                "result": result,
            },
            indent=2,
        )
    )
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

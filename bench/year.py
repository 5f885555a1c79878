"""Benchmark: a no-op run and `tablestream status` after a year of runs' offsets rows.

One warm local session (bench/_harness.py's Bench), a `stream_merge` model over a small source:

1. `fresh`: after `warmup` no-op runs (a warm JVM, as the year's runs have), `rounds` no-op runs
   of the model (nothing new in the source: the run reads the position, finds an empty window and
   appends its offsets row) on a log of a few rows, and
   `tablestream status` (delta-rs, a new process);
2. then `commits` more rows of the stream in the log, one Delta commit each, written fast by
   delta-rs (the stream's latest row again, so its position does not move): a year of runs at
   about two an hour. Every `tablestream_compact_every`-th of them (default 50) is followed by a
   delta-rs compaction, as the runs themselves compact the log (with Spark's auto-compaction);
   without it each append would slow with the files before it, and the 20,000 would take hours;
3. no-op runs until one of them has compacted the log itself, to show the package's compaction
   takes over from there;
4. `year`: `rounds` no-op runs and `tablestream status` again.

The appended commits land within minutes, so their log files are then dated as a year of runs
would have left them (`date_as_a_year`), and Delta's own log cleanup, at the next checkpoint a
run writes, drops those older than 30 days, as it would have all year. The year is still harsher
than a real one in one way: the compactions' removed files stay in the log's state as tombstones
(a real log drops them after 7 days, by the time recorded in each remove action).

Reported: the medians, the log's files before and after the package's compaction, and the ratio
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

from _harness import TINY_HELP, Bench, bench_environment, machine, results_path, run_process

STREAM = "stream_merge__app_src"


def date_as_a_year(delta_log: Path, commits: int) -> int:
    """Date the log's commit and checkpoint files as a year of runs would have left them: the last
    `commits` versions spread evenly over the past 365 days, each file at its version's time.
    Delta's log cleanup goes by these times (MetadataCleanup: files older than
    delta.logRetentionDuration, 30 days, before the latest checkpoint), so the next checkpoint a
    run writes removes what a real year's would have. Returns the entries in the folder."""
    entries = list(delta_log.iterdir())
    versions = {entry: int(entry.name.split(".")[0]) for entry in entries if entry.name.split(".")[0].isdigit()}
    latest = max(versions.values())
    now, spacing = time.time(), 365 * 24 * 3600 / commits
    for entry, version in versions.items():
        moment = now - max(latest - version, 0) * spacing
        os.utime(entry, (moment, moment))
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=20_000, help="offsets rows appended, one commit each")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=10, help="no-op runs before the fresh ones, not measured")
    parser.add_argument("--compact-every", type=int, default=50, help="as the var tablestream_compact_every")
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/year.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.warmup, args.rounds = 0, 1
        # As many commits as make the first no-op run after them a compacting one: a run compacts
        # when its stream's rows in the log, the build's and its own counted, reach a multiple.
        args.commits = -(2 + args.warmup + args.rounds) % args.compact_every
    args.out = results_path(args.out, "year.json", args.tiny)
    bench_environment()
    import pyarrow.compute as pc
    from deltalake import DeltaTable, write_deltalake
    from deltalake.transaction import PostCommitHookProperties

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

        for _ in range(args.warmup):  # the JVM's JIT warms up over the first runs; year's runs are warm
            noop()
        fresh = measure("fresh")
        table = DeltaTable(log_path)
        rows = table.to_pyarrow_table()
        latest = (
            rows.filter(pc.equal(rows["stream_name"], STREAM)).sort_by([("committed_at", "descending")]).slice(0, 1)
        )
        # Checkpoints as Spark writes them; no expired-log cleanup, which lists the whole
        # _delta_log after every commit (none of these commits is 30 days old anyway).
        hooks = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)
        begun = time.perf_counter()
        for index in range(args.commits):
            write_deltalake(table, latest, mode="append", post_commithook_properties=hooks)
            if args.compact_every > 0 and (index + 1) % args.compact_every == 0:
                table.optimize.compact(post_commithook_properties=hooks)
            if (index + 1) % 1000 == 0 or index + 1 == args.commits:
                elapsed = time.perf_counter() - begun
                print(
                    f"  {index + 1:,} of {args.commits:,} commits in {elapsed:.0f} s "
                    f"({(index + 1) / elapsed:.1f} a second), log version {table.version()}",
                    flush=True,
                )
        append_seconds = time.perf_counter() - begun
        log_entries_written = date_as_a_year(Path(log_path) / "_delta_log", args.commits)
        appended = DeltaTable(log_path)
        uncompacted, appended_version = len(appended.file_uris()), appended.version()

        def compacted_by_a_run() -> bool:
            latest = DeltaTable(log_path).history(1)[0]
            return latest.get("operation") == "OPTIMIZE" and int(latest["version"]) > appended_version

        until_compacted = 0
        while not compacted_by_a_run():
            noop()
            until_compacted += 1
            if until_compacted > 100:
                raise RuntimeError("no run compacted the offsets log within 100 runs")
        print(
            f"{uncompacted} log files after the appends; a run compacted the log {until_compacted} no-op runs later",
            flush=True,
        )
        year = measure("year")
        log_version = DeltaTable(log_path).version()
        log_entries_kept = len(list((Path(log_path) / "_delta_log").iterdir()))
        print(
            f"_delta_log: {log_entries_written:,} entries after the appends, {log_entries_kept:,} after Delta's cleanup"
        )
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
                "arguments": {
                    "commits": args.commits,
                    "rounds": args.rounds,
                    "warmup": args.warmup,
                    "compact_every": args.compact_every,
                },
                "append_seconds": append_seconds,
                "log_version": log_version,
                "delta_log_entries": {"after_appends": log_entries_written, "after_cleanup": log_entries_kept},
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

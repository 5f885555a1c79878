"""Benchmark: what `tablestream pending` costs next to the run it lets a scheduler skip.

On the example project, after its whole example (`example_project/main.py --tour`), in new processes,
interleaved, `rounds` of each:

- `pending`: `tablestream pending --exit-code` (delta-rs; no JVM, no dbt);
- `cold_build`: `dbt build` of the example with nothing new, what a schedule without the check
  runs every time.

Then one source commit, and `pending` again, which must now list the stream models. Reported: the
medians and the ratio cold_build / pending (bench/results/pending.json).

    python bench/pending.py              # 3 rounds
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import EXAMPLE, TINY_HELP, machine, results_path, run_process


def pending(command: list[str]) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done.returncode, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/pending.json)")
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_HELP}; the example's whole build still runs first")
    args = parser.parse_args(argv)
    if args.tiny:
        args.rounds = 1
    args.out = results_path(args.out, "pending.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    bin_dir = Path(sys.executable).parent
    dirs = ["--project-dir", str(EXAMPLE), "--profiles-dir", str(EXAMPLE)]
    job = run_process([sys.executable, str(EXAMPLE / "main.py"), "--tour"])
    print(f"the whole example (main.py --tour): {job.seconds:.0f} s", flush=True)
    check = [str(bin_dir / "tablestream"), "pending", "--exit-code", *dirs]
    build = [str(bin_dir / "dbt"), "build", *dirs]
    runs: dict[str, list[float]] = {"pending": [], "cold_build": []}
    for round in range(1, args.rounds + 1):
        seconds, code, listed = pending(check)
        if code != 1 or listed:
            raise RuntimeError(f"after the whole example nothing should be pending; got {code}: {listed}")
        runs["pending"].append(seconds)
        runs["cold_build"].append(run_process(build).seconds)
        print(
            f"round {round}/{args.rounds}: pending {runs['pending'][-1]:.2f}s, cold_build {runs['cold_build'][-1]:.1f}s",
            flush=True,
        )
    # A producer commit to the source: now the stream models over it are pending.
    from deltalake import DeltaTable, write_deltalake

    orders = EXAMPLE / "warehouse" / "app.db" / "orders"
    last = DeltaTable(str(orders)).to_pyarrow_table()
    write_deltalake(str(orders), last.slice(0, 1), mode="append")
    seconds, code, listed = pending(check)
    if code != 0 or not listed.strip():
        raise RuntimeError(f"after a source commit a stream should be pending; got {code}: {listed}")
    results = {
        "machine": machine(),
        "arguments": vars(args) | {"out": str(args.out)},
        "pending_s": statistics.median(runs["pending"]),
        "cold_build_s": statistics.median(runs["cold_build"]),
        "pending_after_commit_s": seconds,
        "pending_after_commit": listed.split(),
        "runs": runs,
    }
    results["result"] = (
        f"RESULT pending_s={results['pending_s']:.2f} cold_build_s={results['cold_build_s']:.1f} "
        f"build_vs_pending={results['cold_build_s'] / results['pending_s']:.0f}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"listed after a source commit: {' '.join(listed.split())} ({seconds:.2f}s)")
    print(results["result"])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: listing and diffing a landing folder of 10,000 files into a directory table.

Three `dbt run`s of a `directory_table` model over one folder, in one process (the first also
starts Spark, which is reported apart): the first lists and fingerprints every file, the second
follows 30 changes (10 replaced, 10 removed, 10 added), the third finds nothing and commits
nothing. Each line reports the wall time of the whole `dbt run` and the model's own time.

    python bench/directory.py            # writes bench/results/directory.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import ROOT, TINY_HELP, bench_warehouse, machine, results_path


def write_files(folder: Path, count: int) -> None:
    for index in range(count):
        path = folder / f"day{index % 30:02d}" / f"part-{index:05d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"order_id": index, "amount": index * 1.5}) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/directory.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.files = 30  # the second run's 10 replaced and 10 removed, and 10 left alone
    args.out = results_path(args.out, "directory.json", args.tiny)
    os.environ.setdefault("DO_NOT_TRACK", "1")
    from dbt.cli.main import dbtRunner

    work = Path(tempfile.mkdtemp(prefix="tablestream-directory-"))
    try:
        landing, project, warehouse = work / "landing", work / "project", bench_warehouse(work)
        write_files(landing, args.files)
        (project / "models").mkdir(parents=True)
        (project / "dbt_project.yml").write_text(
            yaml.safe_dump({"name": "directory_bench", "version": "1.0.0", "config-version": 2, "profile": "bench"})
        )
        (project / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(ROOT)}]}))
        target = {"type": "tablestream", "schema": "analytics", "warehouse": str(warehouse), "threads": 1}
        (project / "profiles.yml").write_text(yaml.safe_dump({"bench": {"target": "dev", "outputs": {"dev": target}}}))
        (project / "models" / "files.sql").write_text(
            f"{{{{ config(materialized='directory_table', location='{landing}', include=['*.json']) }}}}\n"
        )
        runner = dbtRunner()
        dirs = ["--project-dir", str(project), "--profiles-dir", str(project), "--quiet"]
        assert runner.invoke(["deps", *dirs]).success
        started = time.perf_counter()
        assert runner.invoke(["debug", *dirs]).success  # starts Spark
        spark_start = time.perf_counter() - started

        def run(label: str) -> dict[str, Any]:
            began = time.perf_counter()
            result = runner.invoke(["run", *dirs])
            wall = time.perf_counter() - began
            assert result.success, result.exception
            node = result.result.results[0]
            version = DeltaTable(str(warehouse / "analytics.db" / "files")).version()
            line = {
                "run": label,
                "wall_s": round(wall, 2),
                "node_s": round(node.execution_time, 2),
                "code": node.adapter_response.get("code"),
                "table_version": version,
            }
            print(f"{label:<40} {wall:6.2f} s (model {node.execution_time:.2f} s), table version {version}", flush=True)
            return line

        runs = [run(f"first: list and fingerprint {args.files:,} files")]
        files = sorted(landing.rglob("*.json"))
        for path in files[:10]:
            path.write_text(path.read_text() * 2)
            os.utime(path, (time.time() + 10, time.time() + 10))
        for path in files[10:20]:
            path.unlink()
        write_files(landing / "new", 10)
        runs.append(run("second: 10 replaced, 10 removed, 10 added"))
        runs.append(run("third: no change"))
        assert runs[2]["table_version"] == runs[1]["table_version"], "an unchanged folder must commit nothing"
        line = (
            f"RESULT files={args.files} first_s={runs[0]['wall_s']:.2f} changes_s={runs[1]['wall_s']:.2f} "
            f"unchanged_s={runs[2]['wall_s']:.2f} spark_start_s={spark_start:.2f}"
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {
                    "machine": machine(),
                    "files": args.files,
                    "spark_start_s": round(spark_start, 2),
                    "runs": runs,
                    "result": line,
                },
                indent=1,
            )
        )
        print(f"Spark start {spark_start:.1f} s (not included above); wrote {args.out}")
        print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

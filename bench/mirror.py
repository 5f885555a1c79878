"""Benchmark: a snapshot_mirror run next to a rebuild of the same snapshot, on delta-spark
(docs/snapshot-mirror.md).

`app.export` holds `--rows` keyed rows, as a nightly full export does. Each round changes a
scattered `--fraction` of its keys (a third updated, a third deleted, a third new ids), then runs,
in a rotated order:
- `mirror`: `snapshot_mirror` (bench/project/models/snapshot_mirror.sql), the one MERGE;
- `mirror_dv`: the same on a mirror with deletion vectors on (`delta.enableDeletionVectors`),
  where a MERGE writes the changed rows and marks the old ones instead of copying their files;
- `rebuild`: `materialized='table'` of the same select (bench/project/models/snapshot_rebuild.sql).
The mirror reads only the export's current rows, so changing it in place or replacing it whole is
the same snapshot to the mirror. Reported: median seconds per run, and per round what each
mirror's MERGE wrote (Delta's operation metrics) and its change feed's rows, next to the keys the
round changed (bench/results/mirror.json).

    python bench/mirror.py                 # 10M rows, 0.1% changed, 3 rounds
    python bench/mirror.py --rows 1000000 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import TINY_HELP, TINY_ROWS, Bench, Measurement, results_path, run_model, variant_medians, write_results

MIRRORS = {"mirror": "snapshot_mirror", "mirror_dv": "snapshot_mirror_dv"}
MODELS = {**MIRRORS, "rebuild": "snapshot_rebuild"}


def create_export(bench: Bench, rows: int) -> None:
    for schema in ("app", "analytics"):
        bench.sql(f"drop schema if exists {schema} cascade")
        bench.sql(f"create schema {schema}")
    bench.sql(
        "create table app.export using delta as select id, concat('c', cast(id % 100 as string)) as category, "
        f"cast(id % 1000 as double) / 10 as amount, timestamp '2026-01-01 00:00:00' as updated_at from range({rows})"
    )


def change_export(bench: Bench, rows: int, fraction: float, round: int) -> dict[str, int]:
    """A scattered change of `fraction` of the keys; the keys updated, deleted and inserted."""
    part = max(1, int(rows * fraction) // 3)
    stride = max(2, rows // part)
    fresh = rows + round * part
    updated = f"id < {rows} and id % {stride} = {round % stride}"
    deleted = f"id < {rows} and id % {stride} = {(round + stride // 2) % stride}"
    changed = {
        "updated": int(bench.sql(f"select count(*) from app.export where {updated}")[0][0]),
        "deleted": int(bench.sql(f"select count(*) from app.export where {deleted}")[0][0]),
        "inserted": part,
    }
    bench.sql(f"update app.export set amount = amount + 1, updated_at = current_timestamp() where {updated}")
    bench.sql(f"delete from app.export where {deleted}")
    bench.sql(f"insert into app.export select id, 'new', 1.0, current_timestamp() from range({fresh}, {fresh + part})")
    return changed


def last_write(bench: Bench, model: str) -> dict[str, Any]:
    """What the model's last commit wrote (Delta's operation metrics) and the change rows its feed holds for it."""
    table = f"analytics.{model}"
    history = bench.sql(f"describe history {table} limit 1")[0]
    version = int(history["version"])
    metrics = {k: int(v) for k, v in (history["operationMetrics"] or {}).items() if str(v).isdigit()}
    feed = dict(
        (row[0], int(row[1]))
        for row in bench.sql(
            f"select _change_type, count(*) from table_changes('{table}', {version}, {version}) group by 1"
        )
    )
    return {"version": version, "operation": history["operation"], "metrics": metrics, "feed": feed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/mirror.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rows, args.rounds = TINY_ROWS, 1
    args.out = results_path(args.out, "mirror.json", args.tiny)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tablestream-bench-mirror-"))
    measurements: list[Measurement] = []
    rounds: list[dict[str, Any]] = []
    try:
        bench = Bench(work)
        create_export(bench, args.rows)
        bench.dbt(["run", "--full-refresh", "-s", *MODELS.values()])
        bench.sql("alter table analytics.snapshot_mirror_dv set tblproperties ('delta.enableDeletionVectors' = 'true')")
        files = {name: bench.sql(f"describe detail analytics.{model}")[0]["numFiles"] for name, model in MODELS.items()}
        print(f"{args.rows:,} rows; files {files}: built in {time.perf_counter() - started:.0f} s", flush=True)
        for round in range(1, args.rounds + 1):
            changed = change_export(bench, args.rows, args.fraction, round)
            actions = [(name, run_model(bench, model)) for name, model in MODELS.items()]
            shift = round % len(actions)
            done = [
                bench.measure(variant, args.rows, args.fraction, round, action)
                for variant, action in actions[shift:] + actions[:shift]
            ]
            written = {name: last_write(bench, model) for name, model in MIRRORS.items()}
            for model in MIRRORS.values():
                equal = bench.sql(
                    f"select count(*) from ((select * from app.export except all select * from analytics.{model}) "
                    f"union all (select * from analytics.{model} except all select * from app.export))"
                )[0][0]
                if equal:
                    raise RuntimeError(f"round {round}: {model} differs from the export in {equal} rows")
            rounds.append({"round": round, "changed": changed, "written": written})
            print(
                f"round {round}/{args.rounds}: changed {changed}; "
                + ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done)
                + "; "
                + "; ".join(f"{name} wrote {w['metrics']} feed {w['feed']}" for name, w in written.items()),
                flush=True,
            )
            measurements += done
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = variant_medians(measurements)
    last = rounds[-1]
    changes = sum(last["changed"].values())
    feed_rows = {
        name: sum(v for k, v in w["feed"].items() if k != "update_preimage") for name, w in last["written"].items()
    }
    line = (
        f"RESULT mirror_vs_rebuild={medians['mirror'] / medians['rebuild']:.2f} "
        f"mirror_dv_vs_rebuild={medians['mirror_dv'] / medians['rebuild']:.2f} "
        f"feed_rows_vs_changes={feed_rows['mirror'] / changes:.2f}"
    )
    print(f"\nmedian seconds ({args.rounds} rounds): " + ", ".join(f"{v} {s:.2f}" for v, s in medians.items()))
    arguments = {"rows": args.rows, "fraction": args.fraction, "rounds": args.rounds}
    write_results(args.out, arguments, started, measurements, line, rounds=rounds)
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

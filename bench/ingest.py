"""Benchmark: the realtime writer's throughput (dbt_tablestream.ingest) on the embedded engine's storage.

Each case writes rows into a fresh Delta table through `connect(warehouse=...)` and reports rows
per second from the first `apply()` to the end of `close()` (every row committed), with the
number of commits. No Spark is involved: a flush is one delta-rs append or MERGE.

    python bench/ingest.py            # about a minute here; writes bench/results/ingest.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from dbt_tablestream.ingest import (
    PRIMARY_KEY_PROPERTY,
    FlushMode,
    RealtimeOperation,
    RealtimeOptionsBuilder,
    RowOperator,
    connect,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import TINY_HELP, machine, results_path

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int64())])


def run_case(rows: int, keys: int | None, flush_rows: int, mode: FlushMode) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tablestream-ingest-") as directory:
        warehouse = Path(directory)
        path = str(warehouse / "app.db" / "events")
        write_deltalake(path, SCHEMA.empty_table(), configuration={"delta.enableChangeDataFeed": "true"})
        if keys:
            DeltaTable(path).alter.set_table_properties({PRIMARY_KEY_PROPERTY: "id"}, raise_if_not_exists=False)
        options = RealtimeOptionsBuilder().with_flush_mode(mode).with_mutation_buffer_lines_num(flush_rows).build()
        rng = random.Random(1)
        started = time.perf_counter()
        with connect(warehouse=warehouse) as conn:
            operate = RealtimeOperation.CDC if keys else RealtimeOperation.APPEND_ONLY
            stream = conn.get_realtime_stream("app", "events", operate=operate, options=options)
            for index in range(rows):
                if keys and rng.random() < 0.2:
                    row = stream.create_row(RowOperator.DELETE_IGNORE).set_value("id", rng.randrange(keys))
                else:
                    operator = RowOperator.UPSERT if keys else RowOperator.INSERT
                    key = rng.randrange(keys) if keys else index
                    row = stream.create_row(operator).set_value("id", key)
                    row.set_value("name", f"n{index}").set_value("amount", index)
                stream.apply(row)
        seconds = time.perf_counter() - started
        return {
            "rows": rows,
            "keys": keys,
            "operation": "CDC (75% upsert, 25% delete)" if keys else "APPEND_ONLY",
            "flush_rows": flush_rows,
            "flush_mode": stream.options.flush_mode.name,
            "commits": stream.stats.commits,
            "seconds": round(seconds, 2),
            "rows_per_second": round(rows / seconds),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", type=Path, help="the results JSON (default bench/results/ingest.json)")
    parser.add_argument("--tiny", action="store_true", help=TINY_HELP)
    args = parser.parse_args(argv)
    if args.tiny:
        args.rows = 2_000  # two flushes of the 1,000-row cases
    args.out = results_path(args.out, "ingest.json", args.tiny)
    cases = [
        (args.rows, 10_000, 1_000, FlushMode.AUTO_FLUSH_SYNC),
        (args.rows, 10_000, 10_000, FlushMode.AUTO_FLUSH_SYNC),
        (args.rows, None, 1_000, FlushMode.AUTO_FLUSH_SYNC),
        (args.rows, None, 1_000, FlushMode.AUTO_FLUSH_BACKGROUND),
        (args.rows, None, 10_000, FlushMode.AUTO_FLUSH_BACKGROUND),
    ]
    results = []
    for rows, keys, flush_rows, mode in cases:
        result = run_case(rows, keys, flush_rows, mode)
        results.append(result)
        print(
            f"{result['operation']:<30} {result['flush_mode']:<22} flushes of {flush_rows:>6,} rows: "
            f"{result['rows_per_second']:>8,} rows/s ({result['commits']} commits, {result['seconds']} s)",
            flush=True,
        )
    line = "RESULT " + " ".join(
        f"{'cdc' if result['keys'] else 'append'}_{result['flush_mode'].removeprefix('AUTO_FLUSH_').lower()}_"
        f"{result['flush_rows']}_rows_per_s={result['rows_per_second']}"
        for result in results
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine(), "results": results, "result": line}, indent=1))
    print(f"wrote {args.out}")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

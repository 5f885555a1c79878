"""Where a stream_view window's time goes: run for issue 99 at 0cdaf85 (2026-12-07); bench/README.md,
"Views", keeps what it found.

bench/view.py's keyed view (`view_keyed`: each sale joined to its customer and its product) over its
sources (10M sales, 1M customers, 1,000 products, each in key order in files of 250,000 rows, the
change feed and deletion vectors on), built by `dbt run`, then two of its rounds of changes, the
view run after each. The statements the last run sent are then timed again in this warm session,
each part alone, `--repeats` times, over the same versions (every read in them is pinned):
- `feed_<input>`: the input's change feed over the window, counted (`table_changes`);
- `net_<input>`: the window's rows netted per whole row (stream_view_net_rows_sql), counted;
- `variant_<n>`: each select of the keys' listing (stream_view_keys_sql), counted: a changed
  input's removed rows with the other inputs as of the window's start, or its added rows with the
  others as of its end;
- `keys`: the listing as sent (the variants' UNION), counted;
- `changes`: the change rows as sent (stream_view_changes_sql over the listed keys), counted;
- `keys_hinted`: the same with a `BROADCAST` hint in each netted read's definition;
- `nets_written`: each changed input's netted rows written to a Delta table (whose size Spark then
  knows), and `keys_over_written_nets`: the listing reading them there;
- `rebuild_select`: the view's select over the sources as they are, counted;
- `rebuild`: that select written as a table (`CREATE OR REPLACE TABLE ... AS`), what a `table`
  model's run does.

    python bench/experiments/view_keys.py        # 10M sales: 6 minutes here
    python bench/experiments/view_keys.py --rows 1000000 --customers 100000 --out /tmp/view_keys.json
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import view
from _harness import RESULTS, Bench, write_points

MODEL = "view_keyed"
SCRATCH = "analytics.view_keys_listed"
JOINS = ("SortMergeJoin", "BroadcastHashJoin", "ShuffledHashJoin")


def created_select(sent: list[str], scratch: str) -> str:
    """The select of the statement that wrote the scratch table `<view>__tablestream_<scratch>`."""
    marker = f"__tablestream_{scratch} using delta as"
    (statement,) = [sql for sql in sent if marker in sql]
    return statement.split(marker, 1)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--customers", type=int, default=1_000_000)
    parser.add_argument("--products", type=int, default=1_000)
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "view_keys.json")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tablestream-view-keys-") as work:
        bench = Bench(Path(work))
        (bench.project / "models" / f"{MODEL}.sql").write_text(view.MODEL_SQL[MODEL])
        for schema in ("app", "analytics"):
            bench.sql(f"drop schema if exists {schema} cascade")
            bench.sql(f"create schema {schema}")
        for statement in view.source_sql(args.rows, args.customers, args.products, args.segments):
            bench.sql(statement)
        bench.dbt(["run", "-s", MODEL])
        for round in (1, 2):
            for statement in view.change_sql(args.rows, args.customers, args.segments, round):
                bench.sql(statement)
            sent: list[str] = []
            bench.dbt(["run", "-s", MODEL], sql_sent=sent)
        keys_sql, changes_sql = created_select(sent, "keys"), created_select(sent, "changes")
        definitions, _, listing = keys_sql.partition("\n)\nselect ")
        definitions += "\n)\n"
        variants = ("select " + listing).split("\nunion\n")
        inputs = dict(re.findall(r"(__tablestream_read_\d+)_net as \(.*?table_changes\('app\.(\w+)'", keys_sql, re.S))
        bench.sql(f"create or replace table {SCRATCH} using delta as {keys_sql}")
        changes_sql = re.sub(r"analytics\.view_keyed__tablestream_keys", SCRATCH, changes_sql)
        rebuild_select = re.sub(r"\{\{ source\('app', '(\w+)'\) \}\}", r"app.\1", view.SELECTS["keyed"])

        def timed(statements: list[str]) -> list[float]:
            seconds = []
            for _ in range(args.repeats):
                began = time.perf_counter()
                for statement in statements:
                    bench.sql(statement)
                seconds.append(time.perf_counter() - began)
            return seconds

        # Each part's statements, timed together.
        parts: dict[str, list[str]] = {}
        for read, table in inputs.items():
            feed = re.search(rf"table_changes\('app\.{table}', \d+, \d+\)", keys_sql)
            assert feed is not None, table
            parts[f"feed_{table}"] = [f"select count(*) from {feed.group(0)}"]
            parts[f"net_{table}"] = [f"{definitions}select count(*) from {read}_net"]
        for number, variant in enumerate(variants):
            parts[f"variant_{number}"] = [f"{definitions}select count(*) from ({variant})"]
        parts["keys"] = [f"select count(*) from ({keys_sql})"]
        hinted = re.sub(r"(__tablestream_read_\d+_(?:minus|plus) as \(\nselect )", r"\1/*+ BROADCAST */ ", keys_sql)
        parts["keys_hinted"] = [f"select count(*) from ({hinted})"]
        nets = re.findall(r"(__tablestream_read_(\d+)_net) as \(\n(.*?)\n\),", keys_sql, re.S)
        parts["nets_written"] = [
            f"create or replace table analytics.view_keys_net_{number} using delta as {body}"
            for _, number, body in nets
        ]
        over_nets = keys_sql
        for name, number, body in nets:
            over_nets = over_nets.replace(
                f"{name} as (\n{body}\n)", f"{name} as (\nselect * from analytics.view_keys_net_{number}\n)"
            )
        parts["keys_over_written_nets"] = [f"select count(*) from ({over_nets})"]
        assert hinted != keys_sql and over_nets != keys_sql, "the listing's netted reads were not found"
        parts["changes"] = [f"select count(*) from ({changes_sql})"]
        parts["rebuild_select"] = [f"select count(*) from ({rebuild_select})"]
        parts["rebuild"] = [f"create or replace table analytics.view_keys_rebuilt using delta as {rebuild_select}"]

        def joins(name: str) -> dict[str, int]:
            """How Spark joins in a part's select: its physical plan's joins by kind."""
            (statement,) = parts[name]
            plan = bench.sql(f"explain {statement}")[0][0]
            return {kind: plan.count(kind) for kind in JOINS}

        point: dict[str, Any] = {
            "variants": variants,
            "keys_listed": bench.sql(f"select count(*) from {SCRATCH}")[0][0],
            "joins": {name: joins(name) for name in ("keys", "keys_hinted")},
        }
        for name, statements in parts.items():
            point[name] = timed(statements)
            if name == "nets_written":  # the listing over the written rows is planned once they exist
                point["joins"]["keys_over_written_nets"] = joins("keys_over_written_nets")
            print(f"{name}: {' '.join(f'{s:.2f}' for s in point[name])}", flush=True)
        listed = {name: bench.sql(parts[name][0])[0][0] for name in ("keys", "keys_hinted", "keys_over_written_nets")}
        assert set(listed.values()) == {point["keys_listed"]}, f"the listings differ: {listed}"
    line = "RESULT " + " ".join(f"{name}={statistics.median(point[name]):.2f}" for name in parts)
    write_points(args.out, vars(args), started, [point], line)


if __name__ == "__main__":
    main()

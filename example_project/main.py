"""The example's main job: a stream picks up exactly the changes made between two runs.

Run from anywhere: `python example_project/main.py` runs the main job, steps 1-5 below on the
two orders models; `python example_project/main.py --tour` runs the whole example, everything
below. Either keeps its warehouse in example_project/warehouse and starts from an empty one.

1. The application's `app.orders` is a Delta table on the local Spark catalog (created with SQL by
   the run-operation `create_app_tables`); its first orders are written with delta-rs.
2. `enable_change_tracking` turns on its change data feed.
3. `dbt build`: the table stream `orders_changes` starts from a snapshot (3 INSERT rows).
4. The application changes its orders through the realtime writer (dbt_tablestream.ingest):
   a new order, a delivery, a cancellation, a removal, one flush (one Delta commit) each.
5. `dbt build` again: `orders_changes` appends exactly those changes, nothing else, and the
   stream_merge model `orders_current` MERGEs them, so it equals the source again.

The tour adds the other models. A landing folder of JSON files is loaded incrementally: the
directory table `landing_files` lists it, `landing_file_events` logs its file events, and
`landing_loaded` reads only the files that arrived or were replaced (a replaced file's old records
and a removed file's records go away); `landing_orders` flattens the records.

The stream_merge model `order_history` keeps every version of every order (SCD type 2): each
status change is a version dated by its commit, and the removal closes the order's last version.

A CRM's nightly full export, `exports/customers.json`, is replaced whole every night and has no
change feed: the `snapshot_mirror` model `customers_mirror` keeps a Delta copy of it whose MERGE
writes only what changed, and the stream_merge model `customers_current` streams the mirror. The
third night's export is the second's again: the mirror writes nothing and the stream sees nothing.

And a CDC feed: `app.order_events` receives order events from the realtime writer in APPEND_ONLY
mode, out of order, with a redelivered duplicate and a late event after a delete. The stream_merge
model `order_events_current` keeps, per order, the event with the greatest sequence.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
from dbt.cli.main import dbtRunner
from deltalake import DeltaTable, write_deltalake

from dbt_tablestream.cli import main as tablestream
from dbt_tablestream.ingest import FlushMode, RealtimeOperation, RealtimeOptionsBuilder, RowOperator, connect

PROJECT = Path(__file__).resolve().parent
WAREHOUSE = PROJECT / "warehouse"
ORDERS = WAREHOUSE / "app.db" / "orders"
CHANGES = WAREHOUSE / "analytics.db" / "orders_changes"
LANDING = PROJECT / "landing"
EXPORTS = PROJECT / "exports"
# The CRM's nightly exports: (customer_id, name, segment). Night 2 changes Ben's segment, drops Cy
# and adds Dee; night 3 reloads night 2 unchanged.
NIGHTS = [
    [(1, "Ann", "retail"), (2, "Ben", "retail"), (3, "Cy", "wholesale")],
    [(1, "Ann", "retail"), (2, "Ben", "wholesale"), (4, "Dee", "retail")],
]
# The main job's models; --tour builds every model.
MAIN_JOB = ("orders_changes", "orders_current")
SYNC_WRITES = RealtimeOptionsBuilder().with_flush_mode(FlushMode.AUTO_FLUSH_SYNC).build()


def orders(rows: list[tuple[int, str, str, str]]) -> pa.Table:
    return pa.table(
        {
            "order_id": pa.array([r[0] for r in rows], pa.int64()),
            "customer": pa.array([r[1] for r in rows], pa.string()),
            "amount": pa.array([Decimal(r[2]) for r in rows], pa.decimal128(10, 2)),
            "status": pa.array([r[3] for r in rows], pa.string()),
        }
    )


def dbt(*args: str) -> None:
    result = dbtRunner().invoke([*args, "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)])
    if not result.success:
        sys.exit(f"dbt {args[0]} failed: {result.exception or 'see the log above'}")


def appended_since(version: int | None) -> list[dict]:
    """Rows the change log gained after its Delta version ``version`` (all rows when None)."""
    remaining = DeltaTable(str(CHANGES)).to_pyarrow_table().to_pylist()
    if version is not None:
        for row in DeltaTable(str(CHANGES), version=version).to_pyarrow_table().to_pylist():
            remaining.remove(row)
    return remaining


def show_appended(title: str, since_version: int | None) -> None:
    rows = appended_since(since_version)
    print(f"\n== {title}: orders_changes appended {len(rows)} rows")
    for row in sorted(rows, key=lambda r: (r["__commit_version"], r["order_id"], r["__change_type"])):
        print(
            f"   {row['__change_type']:<13} v{row['__commit_version']:<3} order {row['order_id']} "
            f"{row['customer']:<6} {row['amount']:>8} {row['status']}"
        )


def land(name: str, records: list[tuple[int, str, float]]) -> None:
    LANDING.mkdir(parents=True, exist_ok=True)
    path = LANDING / name
    path.write_text("".join(json.dumps({"order_id": i, "customer": c, "amount": a}) + "\n" for i, c, a in records))
    # A replacement must look changed even within the file system's timestamp resolution.
    stamp = time.time() + len(list(LANDING.iterdir()))
    os.utime(path, (stamp, stamp))


def show_landing() -> None:
    events = DeltaTable(str(WAREHOUSE / "analytics.db" / "landing_file_events")).to_pyarrow_table().to_pylist()
    print(f"\n== analytics.landing_file_events (a stream on the directory table landing_files): {len(events)} events")
    for row in sorted(events, key=lambda r: (r["__commit_version"], r["relative_path"], r["__change_type"])):
        print(
            f"   {row['__change_type']:<13} v{row['__commit_version']:<3} {row['relative_path']:<16} {row['size']} bytes"
        )
    loaded = DeltaTable(str(WAREHOUSE / "analytics.db" / "landing_loaded")).to_pyarrow_table().to_pylist()
    rows = sorted(
        (row["relative_path"], record["order_id"], record["customer"], record["amount"])
        for row in loaded
        for record in row["records"]
    )
    print(f"\n== analytics.landing_orders (the current files' records only): {len(rows)} rows")
    for relative_path, order_id, customer, amount in rows:
        print(f"   {relative_path:<16} order {order_id} {customer:<6} {amount:>8}")
    expected = [("partner_a.json", 101, "Erin", 125.0), ("partner_c.json", 301, "Heidi", 9.99)]
    if rows != expected:
        sys.exit(f"landing_orders holds {rows}, expected {expected}")


def export(customers: list[tuple[int, str, str]]) -> None:
    """Tonight's full export replaces last night's."""
    EXPORTS.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"customer_id": i, "name": n, "segment": s}) + "\n" for i, n, s in customers]
    (EXPORTS / "customers.json").write_text("".join(lines))


def mirror_version() -> int:
    return DeltaTable(str(WAREHOUSE / "analytics.db" / "customers_mirror")).version()


def show_customers(title: str, since_version: int) -> list[tuple[int, int, str, str, str]]:
    """What the mirror's change feed recorded after `since_version`, and customers_current."""
    mirror = DeltaTable(str(WAREHOUSE / "analytics.db" / "customers_mirror"))
    recorded = []
    if mirror.version() > since_version:
        feed = pa.table(mirror.load_cdf(starting_version=since_version + 1).read_all()).to_pylist()
        recorded = sorted(
            (r["_commit_version"], r["customer_id"], r["_change_type"], r["name"], r["segment"]) for r in feed
        )
    print(f"\n== {title}: the mirror's change feed recorded {len(recorded)} rows")
    for version, customer_id, change, name, segment in recorded:
        print(f"   {change:<17} v{version:<3} customer {customer_id} {name:<4} {segment}")
    current = DeltaTable(str(WAREHOUSE / "analytics.db" / "customers_current")).to_pyarrow_table().to_pylist()
    rows = sorted((r["customer_id"], r["name"], r["segment"]) for r in current)
    print(f"   analytics.customers_current (stream_merge over the mirror): {rows}")
    if rows != sorted(NIGHTS[-1]):
        sys.exit(f"customers_current holds {rows}, expected {sorted(NIGHTS[-1])}")
    return recorded


# Order events: (order_id, op, seq, status, amount). A NULL amount is a partial update.
EVENTS_BEFORE = [(1, "c", 1, "placed", "1000.00"), (2, "c", 2, "placed", "2000.00"), (1, "u", 3, "paid", None)]
EVENTS_AFTER = [
    # One flush, out of order: order 2's seq 6 arrives before its seq 4; order 1 is deleted.
    [(2, "u", 6, "shipped", None), (3, "c", 5, "placed", "300.00"), (2, "u", 4, "paid", None), (1, "d", 7, None, None)],
    # The next flush: a late event for order 1 (seq 5, older than its delete), order 2's seq 4
    # delivered again, and order 3 paid.
    [(1, "u", 5, "late", "1.00"), (2, "u", 4, "paid", None), (3, "u", 8, "paid", None)],
]


def send_events(flushes: list[list[tuple]]) -> None:
    """Each list is one flush of the realtime writer in APPEND_ONLY mode: one Delta commit."""
    with connect(warehouse=WAREHOUSE) as conn:
        writer = conn.get_realtime_stream(
            "app", "order_events", operate=RealtimeOperation.APPEND_ONLY, options=SYNC_WRITES
        )
        for flush in flushes:
            for order_id, op, seq, status, amount in flush:
                row = writer.create_row(RowOperator.INSERT).set_value("order_id", order_id).set_value("op", op)
                row.set_value("seq", seq).set_value("status", status)
                row.set_value("amount", Decimal(amount) if amount is not None else None)
                writer.apply(row)
            writer.flush()


def show_order_events() -> None:
    current = DeltaTable(str(WAREHOUSE / "analytics.db" / "order_events_current")).to_pyarrow_table().to_pylist()
    rows = sorted((row["order_id"], row["seq"], row["status"], str(row["amount"])) for row in current)
    print(
        f"\n== analytics.order_events_current (stream_merge with sequence_by over app.order_events): {len(rows)} rows"
    )
    for order_id, seq, status, amount in rows:
        print(f"   order {order_id} seq {seq:<2} {status:<8} {amount:>8}")
    # Order 1 was deleted at seq 7, and its late seq 5 did not bring it back; order 2 is at seq 6
    # whatever arrived after; order 3's partial update kept its amount.
    expected = [(2, 6, "shipped", "2000.00"), (3, 8, "paid", "300.00")]
    if rows != expected:
        sys.exit(f"order_events_current holds {rows}, expected {expected}")


def show_order_history() -> None:
    history = DeltaTable(str(WAREHOUSE / "analytics.db" / "order_history")).to_pyarrow_table().to_pylist()
    rows = sorted(history, key=lambda row: (row["order_id"], row["dbt_valid_from"], row["dbt_is_deleted"]))
    print(f"\n== analytics.order_history (stream_merge with scd_type 2 over app.orders): {len(rows)} versions")
    for row in rows:
        valid_to = row["dbt_valid_to"].strftime("%H:%M:%S.%f")[:-3] if row["dbt_valid_to"] else "current"
        state = "deleted" if row["dbt_is_deleted"] else row["status"]
        print(f"   order {row['order_id']} {state:<10} {row['dbt_valid_from']:%H:%M:%S.%f}"[:-3] + f" -> {valid_to}")
    # Orders 1 and 3 changed status (two versions each), order 2 was removed (its version closed and
    # a deletion record), order 4 is new.
    versions = [(row["order_id"], "deleted" if row["dbt_is_deleted"] else row["status"]) for row in rows]
    expected = [
        (1, "placed"),
        (1, "cancelled"),
        (2, "placed"),
        (2, "deleted"),
        (3, "shipped"),
        (3, "delivered"),
        (4, "placed"),
    ]
    if versions != expected:
        sys.exit(f"order_history holds {versions}, expected {expected}")


def show_orders_current() -> None:
    current = DeltaTable(str(WAREHOUSE / "analytics.db" / "orders_current")).to_pyarrow_table().to_pylist()
    mirrored = sorted(current, key=lambda r: r["order_id"]) == sorted(
        DeltaTable(str(ORDERS)).to_pyarrow_table().to_pylist(), key=lambda r: r["order_id"]
    )
    print(f"\n== analytics.orders_current (stream_merge), equal to app.orders: {mirrored}")
    for row in sorted(current, key=lambda r: r["order_id"]):
        print(f"   order {row['order_id']} {row['customer']:<6} {row['amount']:>8} {row['status']}")
    if not mirrored:
        sys.exit("orders_current does not mirror app.orders")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--tour",
        action="store_true",
        help="the whole example: also the landing folder, the nightly export's mirror, the CDC events and the "
        "SCD2 history (every model, three builds)",
    )
    tour = parser.parse_args(argv).tour
    # The main job builds the two orders models (and their tests); the tour builds every model.
    select = [] if tour else ["--select", *MAIN_JOB]
    started = time.monotonic()
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    shutil.rmtree(LANDING, ignore_errors=True)
    shutil.rmtree(EXPORTS, ignore_errors=True)
    if tour:
        export(NIGHTS[0])
        # The landing folder (a volume): two files of orders from a partner, as JSON lines.
        land("partner_a.json", [(101, "Erin", 120.0), (102, "Frank", 80.5)])
        land("partner_b.json", [(201, "Grace", 42.0)])
    dbt("deps")
    dbt("run-operation", "create_app_tables")
    write_deltalake(
        str(ORDERS),
        orders([(1, "Alice", "1000.00", "placed"), (2, "Bob", "2000.00", "placed"), (3, "Carol", "500.00", "shipped")]),
        mode="append",
    )
    if tour:
        send_events([EVENTS_BEFORE])
    dbt("run-operation", "dbt_tablestream.enable_change_tracking", "--args", "{relation: app.orders}")
    dbt("build", *select)
    show_appended("first run (snapshot of the source)", None)
    log_version = DeltaTable(str(CHANGES)).version()

    # The application changes its orders through the realtime writer: a new order, a delivery,
    # a cancellation, a removal. Each flush is one Delta commit, so one source version.
    with connect(warehouse=WAREHOUSE) as conn:
        writer = conn.get_realtime_stream(
            "app", "orders", operate=RealtimeOperation.CDC, primary_key=["order_id"], options=SYNC_WRITES
        )
        for order_id, customer, amount, status in [
            (4, "Dave", "3000.00", "placed"),
            (3, "Carol", "500.00", "delivered"),
            (1, "Alice", "1000.00", "cancelled"),
        ]:
            row = writer.create_row(RowOperator.UPSERT)
            row.set_value("order_id", order_id).set_value("customer", customer)
            row.set_value("amount", Decimal(amount)).set_value("status", status)
            writer.apply(row)
            writer.flush()
        writer.apply(writer.create_row(RowOperator.DELETE_IGNORE).set_value("order_id", 2))
    print(f"\n== the realtime writer committed {writer.stats.commits} flushes to app.orders")
    if not tour:
        dbt("build", *select)
        show_appended("second run (only what changed in between)", log_version)
        show_orders_current()
        print(f"\nmain job finished in {time.monotonic() - started:.1f} s (the whole example: main.py --tour)")
        return
    # The landing folder changes too: partner_a.json is replaced, partner_b.json removed, and
    # partner_c.json arrives. The next build reads only partner_a.json and partner_c.json.
    land("partner_a.json", [(101, "Erin", 125.0)])
    (LANDING / "partner_b.json").unlink()
    land("partner_c.json", [(301, "Heidi", 9.99)])
    send_events(EVENTS_AFTER)
    mirrored_at = mirror_version()
    export(NIGHTS[1])
    dbt("build")
    show_appended("second run (only what changed in between)", log_version)
    show_landing()
    show_order_events()
    show_order_history()
    changed = show_customers("night 2's export (Ben changed, Cy gone, Dee new)", mirrored_at)
    if [(c, change) for _, c, change, _, _ in changed] != [
        (2, "update_postimage"),
        (2, "update_preimage"),
        (3, "delete"),
        (4, "insert"),
    ]:
        sys.exit(f"the mirror recorded {changed}, expected Ben's update, Cy's delete and Dee's insert")
    mirrored_at = mirror_version()
    export(NIGHTS[1])
    dbt("build", "--select", "customers_export+")
    if show_customers("night 3's export (night 2's again)", mirrored_at):
        sys.exit("an unchanged reload must record no change")

    show_orders_current()

    print("\n== analytics.order_status_history")
    history = DeltaTable(str(WAREHOUSE / "analytics.db" / "order_status_history")).to_pyarrow_table().to_pylist()
    for row in sorted(history, key=lambda r: (r["order_id"], r["since_version"])):
        print(f"   order {row['order_id']}: {row['status']} since v{row['since_version']}")
    print("\n== tablestream status")
    tablestream(["status", "--project-dir", str(PROJECT)])

    print(f"\nthe whole example finished in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()

"""The example's main job: an orders source changes between two `dbt build` runs.

Run from anywhere: `python example_project/main.py`. It keeps its warehouse in
example_project/warehouse and starts from an empty one each time.
"""

from __future__ import annotations

import shutil
import sys
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
from dbt.cli.main import dbtRunner
from deltalake import DeltaTable, write_deltalake

PROJECT = Path(__file__).resolve().parent
WAREHOUSE = PROJECT / "warehouse"
ORDERS = WAREHOUSE / "app.db" / "orders"


def orders(rows: list[tuple[int, str, str, str]]) -> pa.Table:
    return pa.table(
        {
            "order_id": pa.array([r[0] for r in rows], pa.int64()),
            "customer": pa.array([r[1] for r in rows], pa.string()),
            "amount": pa.array([Decimal(r[2]) for r in rows], pa.decimal128(10, 2)),
            "status": pa.array([r[3] for r in rows], pa.string()),
        }
    )


def dbt_build() -> None:
    result = dbtRunner().invoke(["build", "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)])
    if not result.success:
        sys.exit(f"dbt build failed: {result.exception or 'see the log above'}")


def show(title: str) -> None:
    print(f"\n== {title}")
    for name in ("order_totals", "orders_current"):
        table = DeltaTable(str(WAREHOUSE / "analytics.db" / name))
        rows = sorted(table.to_pyarrow_table().to_pylist(), key=lambda row: str(list(row.values())[0]))
        print(f"analytics.{name} (Delta version {table.version()}):")
        for row in rows:
            print("   ", row)


def main() -> None:
    started = time.monotonic()
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    write_deltalake(
        str(ORDERS),
        orders([(1, "Alice", "1000.00", "placed"), (2, "Bob", "2000.00", "placed"), (3, "Carol", "500.00", "shipped")]),
        configuration={"delta.enableChangeDataFeed": "true"},
    )
    dbt_build()
    show("after the first run")

    # The application changes its orders: a new order, a delivery and a cancellation.
    write_deltalake(str(ORDERS), orders([(4, "Dave", "3000.00", "placed")]), mode="append")
    source = DeltaTable(str(ORDERS))
    source.update(updates={"status": "'delivered'"}, predicate="order_id = 3")
    source.update(updates={"status": "'cancelled'"}, predicate="order_id = 1")
    dbt_build()
    show("after the source changed and the second run")
    print(f"\nmain job finished in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()

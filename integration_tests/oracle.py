"""How the expected seeds were derived: the steps of macros/steps.sql replayed on Python dicts, and
each model's rule applied to them, with no engine. Rewrites seeds/expected/*.csv.

    python integration_tests/oracle.py
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from typing import Any

SEEDS = Path(__file__).resolve().parent / "seeds" / "expected"
Order = tuple[int, str, int, str]
Account = tuple[str, int, str, int]


class Table:
    """A keyed table and the change rows each commit of a step records."""

    def __init__(self, key: Any) -> None:
        self.rows: dict[Any, tuple[Any, ...]] = {}
        self.key = key
        self.commits: list[list[tuple[tuple[Any, ...], str]]] = []

    def insert(self, *rows: tuple[Any, ...]) -> None:
        self.commits.append([(row, "INSERT") for row in rows])
        self.rows.update({self.key(row): row for row in rows})

    def update(self, where: Any, change: Any) -> None:
        commit = []
        for key, row in sorted(self.rows.items()):
            if where(row):
                new = change(row)
                commit += [(row, "UPDATE_BEFORE"), (new, "UPDATE_AFTER")]
                self.rows[key] = new
        self.commits.append(commit)

    def delete(self, where: Any) -> None:
        gone = [row for row in self.rows.values() if where(row)]
        self.commits.append([(row, "DELETE") for row in gone])
        for row in gone:
            del self.rows[self.key(row)]


def steps() -> list[tuple[Table, Table]]:
    """The source tables after each step, with that step's commits."""
    orders, accounts = Table(lambda r: r[0]), Table(lambda r: (r[0], r[1]))
    after: list[tuple[Table, Table]] = []

    def mark() -> None:
        snapshot_orders, snapshot_accounts = Table(orders.key), Table(accounts.key)
        snapshot_orders.rows, snapshot_orders.commits = dict(orders.rows), list(orders.commits)
        snapshot_accounts.rows, snapshot_accounts.commits = dict(accounts.rows), list(accounts.commits)
        after.append((snapshot_orders, snapshot_accounts))
        orders.commits, accounts.commits = [], []

    orders.insert((1, "ann", 10, "new"), (2, "bob", 20, "new"), (3, "cy", 30, "new"))
    accounts.insert(("eu", 1, "alpha", 100), ("us", 1, "beta", 200), ("us", 2, "gamma", 300))
    mark()
    orders.insert((4, "dee", 40, "new"), (5, "eve", 50, "new"))
    orders.update(lambda r: r[0] == 1, lambda r: (r[0], r[1], r[2], "paid"))
    orders.delete(lambda r: r[0] == 2)
    accounts.update(lambda r: r[:2] == ("eu", 1), lambda r: (*r[:3], 150))
    mark()
    orders.update(lambda r: r[0] == 4, lambda r: (r[0], r[1], r[2] + 1, r[3]))
    orders.update(lambda r: r[0] == 4, lambda r: (r[0], r[1], r[2] + 1, r[3]))
    orders.delete(lambda r: r[0] == 3)
    orders.insert((3, "cy", 33, "again"), (9, "zed", 90, "new"))
    orders.delete(lambda r: r[0] == 9)
    accounts.delete(lambda r: r[:2] == ("us", 2))
    accounts.insert(("us", 3, "delta", 400))
    mark()
    # MERGE: key 5 matched (updated), key 6 not matched (inserted), in one commit.
    merged = [
        ((5, "eve", 50, "new"), "UPDATE_BEFORE"),
        ((5, "eva", 55, "paid"), "UPDATE_AFTER"),
        ((6, "fay", 60, "new"), "INSERT"),
    ]
    orders.commits.append(merged)
    orders.rows[5], orders.rows[6] = (5, "eva", 55, "paid"), (6, "fay", 60, "new")
    accounts.update(lambda r: r[0] == "us", lambda r: (r[0], r[1], r[2].upper(), r[3] + 1))
    mark()
    orders.delete(lambda r: r[0] == 1)
    orders.insert((1, "ann", 11, "reopened"))
    orders.update(lambda r: r[0] == 6, lambda r: (r[0], r[1], r[2], "paid"))
    mark()
    return after


# The events each step appends to order_events, a commit a tuple: (order_id, op, lsn, amount, status).
EVENTS: list[list[list[tuple[int, str, int, int, str]]]] = [
    [[(1, "c", 1, 10, "new"), (2, "u", 4, 21, "new"), (2, "c", 2, 20, "new"), (3, "c", 3, 30, "new")]],
    [[(1, "u", 6, 10, "paid"), (2, "u", 3, 99, "late"), (3, "u", 5, 31, "new")], [(2, "d", 7, 21, "new")]],
    [[(2, "u", 5, 55, "zombie"), (1, "u", 6, 10, "paid"), (4, "c", 9, 40, "new"), (4, "u", 8, 39, "older")]],
    [[(2, "c", 10, 200, "back"), (3, "d", 11, 31, "new")]],
    [[(3, "u", 10, 0, "late"), (1, "u", 12, 12, "done")]],
]


def events_current(step: int) -> list[tuple[int, int, int, str]]:
    """Per key the event with the greatest lsn of all sent so far, unless it is a delete."""
    newest: dict[int, tuple[int, str, int, int, str]] = {}
    for commit in (commit for commits in EVENTS[: step + 1] for commit in commits):
        for event in commit:
            if event[0] not in newest or event[2] > newest[event[0]][2]:
                newest[event[0]] = event
    return [(key, lsn, amount, status) for key, op, lsn, amount, status in newest.values() if op != "d"]


# The folders each step writes into the landing directory, one file each; a folder written again
# holds a new file (a new name) in place of the old one.
DIRECTORY_WRITES: dict[int, list[str]] = {0: ["batch_0"], 1: ["batch_1"], 3: ["batch_0"], 4: ["batch_2"]}


def directory_tables() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The listing (a folder per file) and the stream of its file events after each step."""
    listing: set[str] = set()
    events: list[tuple[str, str]] = []
    files, logged = [], []
    for step in range(len(EVENTS)):
        for folder in DIRECTORY_WRITES.get(step, []):
            if folder in listing:
                events.append((folder, "DELETE"))
            events.append((folder, "INSERT"))
            listing.add(folder)
        files += [(step, folder) for folder in listing]
        logged += [(step, *event) for event in events]
    return files, logged


class History:
    """An SCD type 2 history tracking status, with hard_deletes new_record: per key its versions
    as [row, deleted, current]."""

    def __init__(self, rows: dict[int, Order]) -> None:
        self.versions: dict[int, list[list[Any]]] = {key: [[row, False, True]] for key, row in rows.items()}

    def apply(self, commit: list[tuple[tuple[Any, ...], str]]) -> None:
        last: dict[int, tuple[tuple[Any, ...], str]] = {}
        for row, change in commit:
            if change != "UPDATE_BEFORE":
                last[row[0]] = (row, change)  # of a key's changes in one commit only the last counts
        for key, (row, change) in last.items():
            versions = self.versions.setdefault(key, [])
            current = next((version for version in versions if version[2]), None)
            if change == "DELETE":
                if current is not None and not current[1]:
                    current[2] = False
                    versions.append([row, True, True])
            elif current is not None and not current[1] and current[0][3] == row[3]:
                current[0] = row  # no tracked column changed: the current version is updated in place
            else:
                if current is not None:
                    current[2] = False
                versions.append([row, False, True])

    def rows(self) -> list[tuple[Any, ...]]:
        return [(*row, deleted, current) for versions in self.versions.values() for row, deleted, current in versions]


def totals(rows: list[Order]) -> list[tuple[Any, ...]]:
    """The orders_totals model's GROUP BY (status, order_id % 2) over the source's rows: count(*),
    count(large_amount) (the amounts of at least 40), sum, avg, min and max of amount."""
    groups: dict[tuple[str, int], list[int]] = {}
    for order_id, _, amount, status in rows:
        groups.setdefault((status, order_id % 2), []).append(amount)
    grouped: list[tuple[Any, ...]] = []
    for (status, parity), amounts in groups.items():
        large = [amount for amount in amounts if amount >= 40]
        total = sum(amounts)
        grouped.append(
            (status, parity, len(amounts), len(large), total, total / len(amounts), min(amounts), max(amounts))
        )
    return grouped


def net(commits: list[list[tuple[tuple[Any, ...], str]]], key: Any) -> dict[Any, Any]:
    """Per key touched in the window: its row at the window's end, or None if it is gone."""
    touched: dict[Any, Any] = {}
    for commit in commits:
        for row, change in commit:
            if change in ("INSERT", "UPDATE_AFTER"):
                touched[key(row)] = row
            elif change == "DELETE":
                touched[key(row)] = None
    return touched


def write(name: str, header: list[str], rows: list[tuple[Any, ...]]) -> None:
    SEEDS.mkdir(parents=True, exist_ok=True)
    with (SEEDS / f"expected_{name}.csv").open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["step", *header])
        out.writerows(sorted(rows, key=lambda r: tuple(str(v) for v in r)))


def orders_accounts(orders: Table, accounts: Table) -> list[tuple[Any, ...]]:
    """The orders_accounts view: each order with the US account of its number (name, balance), or NULLs."""
    us = {account_id: (name, balance) for region, account_id, name, balance in accounts.rows.values() if region == "us"}
    return [
        (order_id, amount, status, *us.get(order_id, (None, None)))
        for order_id, _, amount, status in orders.rows.values()
    ]


def main() -> None:
    history = steps()
    order_columns = ["order_id", "customer", "amount", "status"]
    logs: dict[str, Counter[tuple[Any, ...]]] = {
        name: Counter()
        for name in (
            "orders_log",
            "orders_appends",
            "orders_since_latest",
            "orders_since_earliest",
            "orders_since_version",
            "orders_current_changes",
        )
    }
    tables: dict[str, list[tuple[Any, ...]]] = {
        name: []
        for name in (
            *logs,
            "orders_current",
            "orders_soft",
            "orders_ignore_deletes",
            "accounts_current",
            "order_events_current",
            "orders_history",
            "orders_totals",
            "orders_accounts",
        )
    }
    soft: dict[int, tuple[Any, ...]] = {}
    ignored: dict[int, Order] = {}
    accounts: dict[Any, Account] = {}
    current: dict[int, Order] = {}
    history_table = History({})
    for step, (orders, account_table) in enumerate(history):
        changes = [(row, change) for commit in orders.commits for row, change in commit]
        if step == 0:
            snapshot = [(row, "INSERT") for row in orders.rows.values()]
            for name in ("orders_log", "orders_appends", "orders_since_earliest"):
                logs[name].update(snapshot)
            current = dict(orders.rows)
            soft = {k: (*row, False) for k, row in orders.rows.items()}
            ignored = dict(orders.rows)
            accounts = dict(account_table.rows)
            history_table = History(orders.rows)
            logs["orders_current_changes"].update(snapshot)
        else:
            for name in ("orders_log", "orders_since_latest", "orders_since_earliest", "orders_since_version"):
                logs[name].update(changes)
            logs["orders_appends"].update((row, change) for row, change in changes if change == "INSERT")
            for key, row in net(orders.commits, lambda r: r[0]).items():
                before = current.get(key)
                if row is None:
                    if before is not None:
                        logs["orders_current_changes"][(before, "DELETE")] += 1
                        del current[key]
                        soft[key] = (*before, True)
                elif before is None:
                    logs["orders_current_changes"][(row, "INSERT")] += 1
                    current[key] = row
                    soft[key] = (*row, False)
                elif before != row:
                    logs["orders_current_changes"].update([(before, "UPDATE_BEFORE"), (row, "UPDATE_AFTER")])
                    current[key] = row
                    soft[key] = (*row, False)
                if row is not None:
                    kept = ignored.get(key)
                    ignored[key] = row if kept is None else (row[0], kept[1], row[2], row[3])  # customer excluded
            for commit in orders.commits:
                history_table.apply(commit)
            for key, row in net(account_table.commits, lambda r: (r[0], r[1])).items():
                kept = accounts.get(key)
                if row is None:
                    accounts.pop(key, None)
                else:
                    accounts[key] = row if kept is None else (*kept[:3], row[3])  # only balance is updated
        for name, log in logs.items():
            tables[name] += [(step, *row, change) for (row, change), count in log.items() for _ in range(count)]
        tables["orders_current"] += [(step, *row) for row in current.values()]
        tables["orders_soft"] += [(step, *row) for row in soft.values()]
        tables["orders_ignore_deletes"] += [(step, *row) for row in ignored.values()]
        tables["accounts_current"] += [(step, *row) for row in accounts.values()]
        tables["order_events_current"] += [(step, *row) for row in events_current(step)]
        tables["orders_history"] += [(step, *row) for row in history_table.rows()]
        # A stream_aggregate equals its GROUP BY over the source as of the window's end.
        tables["orders_totals"] += [(step, *row) for row in totals(list(orders.rows.values()))]
        # A stream_view equals its select over the sources as of the window's end.
        tables["orders_accounts"] += [(step, *row) for row in orders_accounts(orders, account_table)]
    for name in logs:
        write(name, [*order_columns, "__change_type"], tables[name])
    write("orders_current", order_columns, tables["orders_current"])
    write("orders_soft", [*order_columns, "_deleted"], tables["orders_soft"])
    write("orders_ignore_deletes", order_columns, tables["orders_ignore_deletes"])
    write("accounts_current", ["region", "account_id", "name", "balance"], tables["accounts_current"])
    files, file_events = directory_tables()
    write("landing_files", ["folder"], files)
    write("landing_file_events", ["folder", "__change_type"], file_events)
    write("order_events_current", ["order_id", "lsn", "amount", "status"], tables["order_events_current"])
    write("orders_history", [*order_columns, "dbt_is_deleted", "is_current"], tables["orders_history"])
    write("orders_accounts", ["order_id", "amount", "status", "account_name", "balance"], tables["orders_accounts"])
    write(
        "orders_totals",
        ["status", "parity", "orders", "large_orders", "revenue", "mean_amount", "smallest", "largest"],
        tables["orders_totals"],
    )


if __name__ == "__main__":
    main()

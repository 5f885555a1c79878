"""The writes one window can get, side by side: run for issue 78 at b011dd7 (2026-12-05) and for
issue 97 at 9d60a34 (2026-12-06, the rewrite from itself); bench/README.md, "Writes for one window"
and "The write of a window", keep what it decided: `merge_write: auto`, a clustered window merged
(by copying files on a deletion-vector target), a scattered one replaced by vectors on a
deletion-vector target and rewritten from itself on a copy-on-write one.

The ways one stream window's net changes can be written to a keyed Delta target, side
by side in one warm local session, with nothing of dbt's or the package's around them: which write
a window should get, measured before the package chooses one (issue: scattered changes).

`app.src` holds `--rows` keyed rows with the change feed and deletion vectors on, in key order in
files of 250,000 rows (bench/run.py's `--scale` source). Each candidate has its own target, a copy
in that layout (with deletion vectors on or off as the candidate needs). Each round commits a mixed
0.1% change to the source (`--pattern`: scattered over every file, or clustered in blocks of
neighbouring keys; bench/_harness.py's `change_statements`), nets the window into a small table (per key
its last change; not timed, every candidate reads the same one) and times, in a rotated order:
- `merge`: MERGE with update, delete and insert clauses into a copy-on-write target, the window's
  key ranges in its ON clause (what `stream_merge` writes today);
- `merge_inline`: `merge` with the window's query as its source, as a run and `--scale`'s floors
  write it, where the others read the netted window's table (whose size Spark knows);
- `merge_dv`: the same MERGE into a target with deletion vectors;
- `merge_dv_copying`: `merge_dv` with Delta's `merge.deletionVectors.persistent` off: the MERGE
  copies the touched files as on a copy-on-write target, and leaves the vectors other writes made;
- `merge_dv_bloom`: `merge_dv` with Spark's runtime bloom filter allowed on any target size
  (`spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold`; 10 GB by default);
- `replace_where_dv`: `INSERT INTO t WITH (txnAppId, txnVersion) REPLACE WHERE id IN (<the
  window's keys>) SELECT <its upserts>` into a target with deletion vectors, Delta's row-by-row
  constraint check of the inserted rows off (`replaceWhere.constraintCheck.enabled`); the keys are
  collected to the driver inside the timing, as a run would;
- `replace_where_dv_checked`: the same with the constraint check on (Delta's default);
- `replace_where_dv_ranges`: `replace_where_dv_checked` with the window's key ranges beside the IN
  list in its predicate (Delta skips files by an IN list only as one [min, max], by ranges per
  range); `replace_where_ranges` the same into a copy-on-write target;
- `replace_where`: `replace_where_dv` into a copy-on-write target (the DELETE inside rewrites the
  files holding a listed key, with no join);
- `rewrite`: the target rewritten from itself, `INSERT OVERWRITE t WITH (txnAppId, txnVersion)
  SELECT <t's rows> LEFT ANTI JOIN <the window's keys, broadcast> UNION ALL <its upserts>`, each
  file read by one task (`spark.sql.files.openCostInBytes` above any split), as `stream_merge`
  writes a window whose keys fall in half the target's files or more (stream_rewrite_sql);
  `rewrite_unaligned` the same with Spark's packing of files into tasks, `rewrite_sorted` the
  same in key order (a global sort, as a build writes) and `rewrite_dv` into a target with
  deletion vectors;
- `range_rewrite`: `INSERT INTO t REPLACE WHERE <the window's key ranges> SELECT <t's rows in
  them> LEFT ANTI JOIN <the window's keys> UNION ALL <its upserts>`, the rewrite of the ranges
  alone (`range_rewrite_dv` into a target with deletion vectors);
- `rebuild`: the target rebuilt from the source (CREATE OR REPLACE ... AS SELECT, key order, files
  of 250,000 rows).
After each round every target is compared with the source, by a count and two order-free hashes
of its rows (`--no-check` skips it). Also recorded:
the size of a replaceWhere commit's commitInfo, and whether repeating its statement with the same
txnAppId and txnVersion is skipped (no new version), the idempotence a write must have.

    python bench/experiments/scattered_writes.py          # 10M rows, scattered, 5 rounds
    python bench/experiments/scattered_writes.py --rows 1000000 --rounds 2 --out /tmp/writes.json
    python bench/experiments/scattered_writes.py --pattern clustered --out bench/results/scattered_writes_clustered.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import (
    FILE_ROWS,
    RESULTS,
    Bench,
    Measurement,
    change_statements,
    key_ranges_condition,
    net_window_sql,
    source_statements,
    write_results,
)

# Each candidate and its target: (table, deletion vectors on).
TARGETS = {
    "merge": ("analytics.cow", False),
    "merge_inline": ("analytics.cow_inline", False),
    "merge_dv": ("analytics.dv", True),
    "merge_dv_bloom": ("analytics.dv_bloom", True),
    "merge_dv_copying": ("analytics.dv_copying", True),
    "replace_where": ("analytics.rw_cow", False),
    "replace_where_dv": ("analytics.rw", True),
    "replace_where_dv_checked": ("analytics.rw_checked", True),
    "replace_where_dv_ranges": ("analytics.rw_ranges", True),
    "replace_where_ranges": ("analytics.rw_cow_ranges", False),
    "rewrite": ("analytics.rewrite", False),
    "rewrite_unaligned": ("analytics.rewrite_unaligned", False),
    "rewrite_sorted": ("analytics.rewrite_sorted", False),
    "rewrite_dv": ("analytics.rewrite_dv", True),
    "range_rewrite": ("analytics.range_rewrite", False),
    "range_rewrite_dv": ("analytics.range_rewrite_dv", True),
    "rebuild": ("analytics.rebuild", False),
}
COLUMNS = "id, category, amount, updated_at"
BLOOM_THRESHOLD = "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold"
MERGE_VECTORS = "spark.databricks.delta.merge.deletionVectors.persistent"
CONSTRAINT_CHECK = "spark.databricks.delta.replaceWhere.constraintCheck.enabled"
OPEN_COST = "spark.sql.files.openCostInBytes"


class Writes:
    def __init__(self, bench: Bench, rows: int) -> None:
        self.bench = bench
        self.rows = rows
        self.after = 0

    def sql(self, statement: str) -> list[object]:
        return self.bench.sql(statement)

    def bounded(self, statement: str) -> None:
        """`statement` with the writes' file bound (the package's max_rows_per_file)."""
        self.sql(f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}")
        try:
            self.sql(statement)
        finally:
            self.sql("reset spark.sql.files.maxRecordsPerFile")

    def create(self, candidates: list[str]) -> None:
        """The source, and the targets of `candidates`."""
        for schema in ("app", "analytics"):
            self.sql(f"drop schema if exists {schema} cascade")
            self.sql(f"create schema {schema}")
        for statement in source_statements(self.rows, bounded=True):
            self.sql(statement)
        for table, vectors in (TARGETS[candidate] for candidate in candidates):
            properties = f"tblproperties ('delta.enableDeletionVectors' = '{str(vectors).lower()}')"
            self.bounded(f"create table {table} using delta {properties} as select {COLUMNS} from app.src order by id")
        self.after = self.latest()
        self.window = ""

    def latest(self) -> int:
        return int(self.sql("describe history app.src limit 1")[0]["version"])  # type: ignore[index]

    def next_window(self, round: int, pattern: str) -> int:
        """Commits the round's change and nets its window into app.window; returns its last version."""
        for statement in change_statements(self.rows, 0.001, round, pattern):
            self.sql(statement)
        through = self.latest()
        self.window = f"select {COLUMNS}, _change_type from ({net_window_sql(self.after, through)})"
        self.sql(f"create or replace table app.window using delta as {self.window}")
        self.after = through
        return through

    def merge(self, table: str, ranges: str, source: str = "app.window") -> None:
        self.bounded(
            f"""
            merge into {table} as t using {source} as s
            on t.id = s.id and {ranges}
            when matched and s._change_type = 'delete' then delete
            when matched then update set t.category = s.category, t.amount = s.amount, t.updated_at = s.updated_at
            when not matched and s._change_type <> 'delete' then insert ({COLUMNS})
              values (s.id, s.category, s.amount, s.updated_at)
            """
        )

    def replace_where_sql(self, table: str, through: int, with_ranges: bool = False) -> str:
        keys = [row[0] for row in self.sql("select id from app.window order by id")]  # type: ignore[index]
        listed = ", ".join(str(key) for key in keys) or "null"
        ranges = f" and {key_ranges_condition(keys, column='id')}" if with_ranges and keys else ""
        return (
            f"insert into {table} with ('txnAppId' = 'bench/{table}', 'txnVersion' = '{through}') "
            f"replace where id in ({listed}){ranges} "
            f"select {COLUMNS} from app.window where _change_type <> 'delete'"
        )

    def replace_where(self, table: str, through: int, checked: bool, with_ranges: bool = False) -> None:
        statement = self.replace_where_sql(table, through, with_ranges)
        if not checked:
            self.sql(f"set {CONSTRAINT_CHECK} = false")
        try:
            self.bounded(statement)
        finally:
            self.sql(f"reset {CONSTRAINT_CHECK}")

    def rewrite(
        self, table: str, through: int, ranges: str | None = None, order: bool = False, aligned: bool = True
    ) -> None:
        """rewrite_sql, each file read by one task (the package's `aligned` layout) unless not `aligned`."""
        if aligned:
            self.sql(f"set {OPEN_COST} = {1 << 40}")
        try:
            self.bounded(self.rewrite_sql(table, through, ranges, order))
        finally:
            self.sql(f"reset {OPEN_COST}")

    def rewrite_sql(self, table: str, through: int, ranges: str | None, order: bool) -> str:
        """The target rewritten from itself in one marked commit: its rows (in `ranges`, or all of
        them) less the window's keys (a broadcast anti join: the target is not shuffled), plus the
        window's upserts; `ranges` replaced by REPLACE WHERE, else the whole table overwritten."""
        kept = f"select /*+ broadcast(w) */ {', '.join('t.' + c for c in COLUMNS.split(', '))} from {table} as t"
        kept += " left anti join app.window as w on t.id = w.id"
        kept += f" where {ranges}" if ranges else ""
        rows = f"{kept} union all select {COLUMNS} from app.window where _change_type <> 'delete'"
        rows = f"select * from ({rows}) order by id" if order else rows
        options = f"with ('txnAppId' = 'bench/{table}', 'txnVersion' = '{through}')"
        if ranges:
            return f"insert into {table} {options} replace where {ranges.replace('t.id', 'id')} {rows}"
        return f"insert overwrite {table} {options} {rows}"

    def candidates(self, through: int) -> dict[str, Callable[[], None]]:
        keys = [row[0] for row in self.sql("select id from app.window order by id")]  # type: ignore[index]
        ranges = key_ranges_condition(keys)

        def bloom() -> None:
            self.sql(f"set {BLOOM_THRESHOLD} = 1")
            try:
                self.merge(TARGETS["merge_dv_bloom"][0], ranges)
            finally:
                self.sql(f"reset {BLOOM_THRESHOLD}")

        def copying() -> None:
            self.sql(f"set {MERGE_VECTORS} = false")
            try:
                self.merge(TARGETS["merge_dv_copying"][0], ranges)
            finally:
                self.sql(f"reset {MERGE_VECTORS}")

        return {
            "merge": lambda: self.merge(TARGETS["merge"][0], ranges),
            "merge_dv_copying": copying,
            "merge_inline": lambda: self.merge(TARGETS["merge_inline"][0], ranges, f"({self.window})"),
            "merge_dv": lambda: self.merge(TARGETS["merge_dv"][0], ranges),
            "merge_dv_bloom": bloom,
            "replace_where": lambda: self.replace_where(TARGETS["replace_where"][0], through, False),
            "replace_where_dv": lambda: self.replace_where(TARGETS["replace_where_dv"][0], through, False),
            "replace_where_dv_checked": lambda: self.replace_where(
                TARGETS["replace_where_dv_checked"][0], through, True
            ),
            "replace_where_dv_ranges": lambda: self.replace_where(
                TARGETS["replace_where_dv_ranges"][0], through, True, with_ranges=True
            ),
            "replace_where_ranges": lambda: self.replace_where(
                TARGETS["replace_where_ranges"][0], through, True, with_ranges=True
            ),
            "rewrite": lambda: self.rewrite(TARGETS["rewrite"][0], through),
            "rewrite_unaligned": lambda: self.rewrite(TARGETS["rewrite_unaligned"][0], through, aligned=False),
            "rewrite_sorted": lambda: self.rewrite(TARGETS["rewrite_sorted"][0], through, order=True, aligned=False),
            "rewrite_dv": lambda: self.rewrite(TARGETS["rewrite_dv"][0], through),
            "range_rewrite": lambda: self.rewrite(TARGETS["range_rewrite"][0], through, ranges),
            "range_rewrite_dv": lambda: self.rewrite(TARGETS["range_rewrite_dv"][0], through, ranges),
            "rebuild": lambda: self.bounded(
                f"create or replace table {TARGETS['rebuild'][0]} using delta "
                f"as select {COLUMNS} from app.src order by id"
            ),
        }

    def fingerprint(self, table: str) -> tuple[object, ...]:
        """The table's rows as a count and two order-free hashes of them (one scan)."""
        row = self.sql(
            f"select count(*), sum(cast(hash({COLUMNS}) as bigint)), bit_xor(xxhash64({COLUMNS})) from {table}"
        )[0]
        return tuple(row)  # type: ignore[arg-type]

    def differs(self, table: str, source: tuple[object, ...]) -> bool:
        """Whether `table` holds other rows than the source (whose fingerprint is `source`)."""
        return self.fingerprint(table) != source

    def history(self, table: str) -> tuple[int, str]:
        """The table's latest version and its last commit's operation."""
        row = self.sql(f"describe history {table} limit 1")[0]
        return int(row["version"]), str(row["operation"])  # type: ignore[index]

    def commit_info_bytes(self, table: str) -> int:
        """The size of the latest commit's commitInfo line in the table's _delta_log."""
        location = str(self.sql(f"describe detail {table}")[0]["location"])  # type: ignore[index]
        version, _ = self.history(table)
        log = Path(location.removeprefix("file:")) / "_delta_log" / f"{version:020d}.json"
        return next((len(line) for line in log.read_text().splitlines() if line.startswith('{"commitInfo"')), 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pattern", choices=["scattered", "clustered"], default="scattered")
    parser.add_argument("--candidates", nargs="+", choices=list(TARGETS), default=list(TARGETS))
    parser.add_argument("--no-check", action="store_true", help="skip comparing each target with the source")
    parser.add_argument("--out", type=Path, default=RESULTS / "scattered_writes.json")
    args = parser.parse_args()
    started = time.perf_counter()
    log = print
    with tempfile.TemporaryDirectory(prefix="tablestream-writes-") as work:
        bench = Bench(Path(work))
        writes = Writes(bench, args.rows)
        writes.create(args.candidates)
        log(
            f"{args.rows:,} rows: source and {len(args.candidates)} targets built in {time.perf_counter() - started:.0f} s"
        )
        measurements: list[Measurement] = []
        differing: dict[str, int] = {}
        facts: dict[str, object] = {}
        for round in range(1, args.rounds + 1):
            through = writes.next_window(round, args.pattern)
            actions = [(name, action) for name, action in writes.candidates(through).items() if name in args.candidates]
            shift = round % len(actions)
            done = [
                bench.measure(name, args.rows, 0.001, round, lambda _, act=action: act(), args.pattern)
                for name, action in actions[shift:] + actions[:shift]
            ]
            measurements += done
            log(f"round {round}/{args.rounds}: " + ", ".join(f"{m.variant} {m.seconds:.1f}s" for m in done))
            if round == 1 and "replace_where_dv" in args.candidates:
                table = TARGETS["replace_where_dv"][0]
                facts["replace_where_operation"] = writes.history(table)[1]
                facts["replace_where_commit_info_bytes"] = writes.commit_info_bytes(table)
                before = writes.history(table)[0]
                writes.replace_where(table, through, False)
                facts["replace_where_repeat_skipped"] = writes.history(table)[0] == before
            if not args.no_check:
                source = writes.fingerprint("app.src")
                for name in args.candidates:
                    differing[name] = differing.get(name, 0) + int(writes.differs(TARGETS[name][0], source))
                log(f"round {round}: rounds after which a target differed from the source: {differing}")
    medians = {
        name: statistics.median(m.seconds for m in measurements if m.variant == name) for name in args.candidates
    }
    firsts = {name: next(m.seconds for m in measurements if m.variant == name) for name in args.candidates}
    lasts = {name: [m.seconds for m in measurements if m.variant == name][-1] for name in args.candidates}
    rebuild = medians.get("rebuild", float("nan"))
    line = "RESULT " + " ".join(
        f"{name}_vs_rebuild={medians[name] / rebuild:.2f}" for name in medians if name != "rebuild"
    )
    line += " " + " ".join(f"{name}_last_vs_first={lasts[name] / firsts[name]:.2f}" for name in medians)
    line += f" rounds_differing={sum(differing.values()) if differing else 'unchecked'}"
    write_results(
        args.out,
        vars(args) | {"out": str(args.out)},
        started,
        measurements,
        line,
        pattern=args.pattern,
        first_s=firsts,
        last_s=lasts,
        rounds_differing=differing,
        facts=facts,
    )
    log(json.dumps({"medians": medians, "facts": facts}, indent=1))
    log(line)


if __name__ == "__main__":
    main()

"""What the benchmarks share (bench/README.md): the bench's warm local session and dbt project
(`Bench`), the keyed source and its changes that bench/run.py and the benchmarks built on it
commit, the timing of a variant's run (`Measurement`, peak RSS), new processes timed from outside
(`run_process`), the machine record and the results JSON every benchmark writes.

A benchmark imports from here (`sys.path` holding bench/); bench/run.py is a benchmark like the
others.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
PROJECT = BENCH / "project"
EXAMPLE = ROOT / "example_project"
# The file bound of the key-ordered copies (the package's default max_rows_per_file).
FILE_ROWS = 250_000
# --tiny: a maintained benchmark on its smallest data and one round, through the same code as its
# full run, so that a broken benchmark fails a test (bench/tiny.py runs them; bench/README.md).
TINY_HELP = (
    "the smallest data and one round, the full run's code; its JSON in a temporary folder (a check, not a figure)"
)
TINY_ROWS = 10_000
# The warehouse of the one local session every benchmark of this process runs on (share_session).
_SHARED: dict[str, Path] = {}


def bench_environment() -> None:
    """A benchmark process's environment, unless the caller set it: dbt's tracking off, Spark bound to
    the loopback address, Spark's Python workers this interpreter."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def log(line: str) -> None:
    """A benchmark's progress line, printed at once."""
    print(line, flush=True)


def share_session(warehouse: Path, overrides: dict[str, str]) -> None:
    """Start this process's local session on `warehouse`, the one every benchmark run in the
    process then uses (bench/tiny.py: a JVM's start costs more than most tiny runs)."""
    from dbt.adapters.tablestream._session import LocalSpark

    LocalSpark.root(warehouse, overrides)
    _SHARED["warehouse"] = warehouse


def bench_warehouse(work: Path) -> Path:
    """The warehouse of a benchmark's dbt project: its own under `work`, or the shared session's."""
    return _SHARED.get("warehouse", work / "warehouse")


def results_path(out: Path | None, name: str, tiny: bool) -> Path:
    """Where a benchmark writes its results JSON: `out`, else bench/results/<name>; a --tiny run's
    goes to a temporary folder, never to bench/results/, whose files the README quotes."""
    if not tiny:
        return out or RESULTS / name
    if out is not None and out.resolve().is_relative_to(RESULTS):
        raise SystemExit(f"--tiny writes no file under {RESULTS} (--out {out}); its figures are no measurement")
    return out or Path(tempfile.mkdtemp(prefix="tablestream-bench-tiny-")) / name


def source_statements(rows: int, row_tracking: bool = False, bounded: bool = False) -> list[str]:
    """The statements that create `app.src` (its schema exists) with `rows` rows and the change
    feed on. With `bounded`, it is written in key order in files of FILE_ROWS rows with deletion
    vectors on (so changing it stays cheap at any size)."""
    properties = ["'delta.enableChangeDataFeed' = 'true'"]
    properties += ["'delta.enableRowTracking' = 'true'"] if row_tracking else []
    properties += ["'delta.enableDeletionVectors' = 'true'"] if bounded else []
    rows_sql = (
        "select id, concat('c', cast(id % 100 as string)) as category, cast(id % 1000 as double) / 10 as amount, "
        f"timestamp '2026-01-01 00:00:00' as updated_at from range({rows})"
    )
    return [
        "create table app.src (id bigint, category string, amount double, updated_at timestamp) using delta "
        f"tblproperties ({', '.join(properties)})",
        *([f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}"] if bounded else []),
        f"insert into app.src {rows_sql}{' order by id' if bounded else ''}",
        *(["reset spark.sql.files.maxRecordsPerFile"] if bounded else []),
    ]


def change_statements(rows: int, fraction: float, round: int, pattern: str = "clustered") -> list[str]:
    """A mixed change in three commits: updates, deletes, inserts of fresh ids. Clustered: the
    updates and the deletes each hit one block of neighbouring keys. Scattered: they hit keys
    spread evenly over the whole key range. Append: one insert of `fraction` of the rows, fresh
    ids, as an event table grows."""
    if pattern == "append":
        part = max(1, int(rows * fraction))
        fresh = rows + (round - 1) * part
        return [f"insert into app.src select id, 'new', 1.0, current_timestamp() from range({fresh}, {fresh + part})"]
    part = max(1, int(rows * fraction) // 3)
    fresh = rows + round * part
    if pattern == "clustered":
        start = (round * 7919 * part * 3) % max(1, rows - 3 * part)
        updated = f"id >= {start} and id < {start + part}"
        deleted = f"id >= {start + part} and id < {start + 2 * part}"
    else:
        stride = max(2, rows // part)
        updated = f"id < {rows} and id % {stride} = {round % stride}"
        deleted = f"id < {rows} and id % {stride} = {(round + stride // 2) % stride}"
    return [
        f"update app.src set amount = amount + 1, updated_at = current_timestamp() where {updated}",
        f"delete from app.src where {deleted}",
        f"insert into app.src select id, 'new', 1.0, current_timestamp() from range({fresh}, {fresh + part})",
    ]


def net_window_sql(after: int, through: int) -> str:
    """The net changes of app.src's versions (after, through]: per key its last change (a delete,
    or the row as it is now), with `_change_type`."""
    return f"""
        select * from (
          select *, row_number() over (partition by id order by _commit_version desc,
            case _change_type when 'update_preimage' then 0 else 1 end desc) as last
          from table_changes('app.src', {after + 1}, {through})
          where _change_type <> 'update_preimage'
        ) where last = 1"""


def key_ranges_condition(keys: list[int], cap: int = 32, column: str = "t.id") -> str:
    """The sorted `keys` cut at their widest gaps (wider than one key) into at most `cap` ranges,
    as the package cuts a window's keys (macros/delta/key_ranges.sql), as a condition on `column`."""
    if not keys:
        return "false"
    cuts = sorted(sorted(range(1, len(keys)), key=lambda i: keys[i] - keys[i - 1], reverse=True)[: cap - 1])
    cuts = [i for i in cuts if keys[i] - keys[i - 1] > 1]
    bounds = zip([0, *cuts], [*cuts, len(keys)], strict=True)
    return "(" + " or ".join(f"{column} >= {keys[a]} and {column} <= {keys[b - 1]}" for a, b in bounds) + ")"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import pyspark

    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "platform": platform.platform(),
    }


def write_points(
    out: Path, arguments: dict[str, Any], started: float, points: list[dict[str, object]], line: str
) -> None:
    """`out` as JSON: the machine, the arguments, the seconds it all took, the measured points
    and the RESULT line, which is printed too (the benchmarks that measure points, not variants)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine(),
        "arguments": arguments | {"out": str(out)},
        "seconds": time.perf_counter() - started,
        "points": points,
        "result": line,
    }
    out.write_text(json.dumps(document, indent=1) + "\n")
    print(line)


def write_results(
    out: Path,
    arguments: dict[str, Any],
    started: float,
    measurements: list[Measurement],
    line: str,
    **extra: Any,
) -> None:
    """`out` as JSON: the machine, the arguments, the seconds it all took, each variant's median,
    `extra`, every measurement (without its statement log) and the RESULT line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine(),
        "arguments": arguments,
        "seconds": time.perf_counter() - started,
        "medians": variant_medians(measurements),
        **extra,
        "measurements": [{k: v for k, v in m.__dict__.items() if k != "statement_log"} for m in measurements],
        "result": line,
    }
    out.write_text(json.dumps(document, indent=2))


def variant_medians(measurements: list[Measurement]) -> dict[str, float]:
    """Each variant's median seconds."""
    variants = sorted({m.variant for m in measurements})
    return {v: statistics.median(m.seconds for m in measurements if m.variant == v) for v in variants}


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def jvm_pid() -> int | None:
    """The JVM this process's Spark session runs in (a child process running java)."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and b"java" in command.split(b"\0")[0]:
            return int(entry.name)
    return None


@dataclass
class PeakRss:
    """Samples the driver's and the JVM's resident memory every 50 ms while in use."""

    jvm: int | None
    python_peak: int = 0
    jvm_peak: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> PeakRss:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.python_peak = max(self.python_peak, rss_bytes(os.getpid()))
            if self.jvm is not None:
                self.jvm_peak = max(self.jvm_peak, rss_bytes(self.jvm))
            self._stop.wait(0.05)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Measurement:
    variant: str
    rows: int
    fraction: float
    round: int
    seconds: float
    python_rss: int
    jvm_rss: int
    statements: int | None = None
    statement_seconds: float | None = None
    statement_log: list[tuple[str, float]] = field(default_factory=list)
    pattern: str = "clustered"
    measured_at: str = ""


class Bench:
    """bench/project copied into `work`, on this process's local session (the adapter's own), with
    dbt run in-process on it; the keyed source `app.src` and the bare-MERGE floors beside it."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.warehouse = bench_warehouse(work)
        self.project = work / "project"
        shutil.copytree(PROJECT, self.project)
        (self.project / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(ROOT)}]}))
        target = {"type": "tablestream", "schema": "analytics", "warehouse": str(self.warehouse), "threads": 1}
        (self.project / "profiles.yml").write_text(
            yaml.safe_dump({"bench": {"target": "dev", "outputs": {"dev": target}}})
        )
        from dbt.adapters.tablestream._session import LocalSpark

        self.spark = LocalSpark.root(self.warehouse, {})
        self.jvm = jvm_pid()
        self.dbt(["deps"])

    def dbt(
        self,
        args: list[str],
        statements: list[tuple[str, float]] | None = None,
        sql_sent: list[str] | None = None,
    ) -> None:
        """dbt in-process, quiet; `statements` collects each statement dbt sent (its first words) and
        its time, `sql_sent` each statement's whole text (dbt's comment header removed)."""
        from dbt.cli.main import dbtRunner

        sent: list[str] = []

        def record(event: Any) -> None:
            if event.info.name == "SQLQuery":
                sql = str(event.data.sql)
                sql = sql.split("*/", 1)[1] if sql.lstrip().startswith("/*") else sql
                sent.append(" ".join(sql.split())[:100])
                if sql_sent is not None:
                    sql_sent.append(sql)
            elif event.info.name == "SQLQueryStatus" and statements is not None:
                statements.append((sent[-1] if sent else "?", float(event.data.elapsed)))

        result = dbtRunner(callbacks=[record]).invoke(
            ["--quiet", *args, "--project-dir", str(self.project), "--profiles-dir", str(self.project)]
        )
        if not result.success:
            raise RuntimeError(f"dbt {' '.join(args)} failed: {result.exception or result.result}")

    def sql(self, statement: str) -> list[Any]:
        return self.spark.sql(statement).collect()

    def latest_version(self) -> int:
        return int(self.sql("describe history app.src limit 1")[0]["version"])

    def create_source(self, rows: int, row_tracking: bool = False, bounded: bool = False) -> None:
        """`app.src` with `rows` rows and `analytics.floor`, a copy in Spark's default layout. With
        `bounded`, the source is written as `source_statements` writes it, and
        `analytics.floor_expert` is a copy in that layout."""
        for schema in ("app", "analytics"):
            self.sql(f"drop schema if exists {schema} cascade")
            self.sql(f"create schema {schema}")
        for statement in source_statements(rows, row_tracking, bounded):
            self.sql(statement)
        if bounded:
            self.sql(f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}")
            self.sql("create table analytics.floor_expert using delta as select * from app.src order by id")
            self.sql("reset spark.sql.files.maxRecordsPerFile")
        self.sql("create table analytics.floor using delta as select * from app.src")
        self.floor_after = {"floor": self.latest_version(), "floor_expert": self.latest_version()}

    def change_source(self, rows: int, fraction: float, round: int, pattern: str = "clustered") -> None:
        for statement in change_statements(rows, fraction, round, pattern):
            self.sql(statement)

    def floor(self, table: str = "floor") -> None:
        """The window's net changes applied by one bare MERGE: what a stream run cannot beat. On
        `floor_expert`, the MERGE also names the window's key ranges (gaps wider than one key cut
        them, at most 32), so Delta skips the files outside them."""
        through = self.latest_version()
        after = self.floor_after[table]
        if through <= after:
            return
        window = net_window_sql(after, through)
        ranges = ""
        if table == "floor_expert":
            keys = sorted(row[0] for row in self.sql(f"select distinct id from ({window})"))
            ranges = " and " + key_ranges_condition(keys)
        self.sql(
            f"""
            merge into analytics.{table} as t
            using ({window}) as s
            on t.id = s.id{ranges}
            when matched and s._change_type = 'delete' then delete
            when matched then update set t.category = s.category, t.amount = s.amount, t.updated_at = s.updated_at
            when not matched and s._change_type <> 'delete' then insert (id, category, amount, updated_at)
              values (s.id, s.category, s.amount, s.updated_at)
            """
        )
        self.floor_after[table] = through

    def floor_expert(self) -> None:
        """`floor` on the key-ordered copy of bounded files, in the bound's session setting."""
        self.sql(f"set spark.sql.files.maxRecordsPerFile = {FILE_ROWS}")
        try:
            self.floor("floor_expert")
        finally:
            self.sql("reset spark.sql.files.maxRecordsPerFile")

    def measure(
        self,
        variant: str,
        rows: int,
        fraction: float,
        round: int,
        action: Callable[[list[tuple[str, float]]], None],
        pattern: str = "clustered",
    ) -> Measurement:
        statements: list[tuple[str, float]] = []
        with PeakRss(self.jvm) as peak:
            started = time.perf_counter()
            action(statements)
            seconds = time.perf_counter() - started
        dbt = not variant.startswith("floor")
        return Measurement(
            variant,
            rows,
            fraction,
            round,
            seconds,
            peak.python_peak,
            peak.jvm_peak,
            len(statements) if dbt else None,
            sum(elapsed for _, elapsed in statements) if dbt else None,
            statements if dbt else [],
            pattern,
            datetime.now(UTC).strftime("%Y-%m-%d"),
        )


def run_model(bench: Bench, model: str) -> Callable[[list[tuple[str, float]]], None]:
    protocol = ["--vars", "{tablestream_commit_protocol: reapply}"] if model.endswith("_reapply") else []
    return lambda statements: bench.dbt(["run", "-s", model, *protocol], statements)


@dataclass
class ColdRun:
    """One new process: its wall time and the statements dbt logged (none for `tablestream status`)."""

    seconds: float
    statements: int | None = None
    statement_seconds: float | None = None


def timed_process(command: list[str]) -> float:
    """Runs `command` in a new process (dbt's tracking off) and returns its seconds; a failure
    raises with the ends of its output."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "DO_NOT_TRACK": "1"})
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return seconds


def local_cluster(work: Path) -> Any:
    """tests/cluster/local_cluster.py's cluster under `work`, not started, with Delta's jars resolved
    in a process of its own: a JVM left in the caller's process would sit beside every measured run."""
    from tests.cluster.local_cluster import LocalCluster

    resolver = (
        "import json, sys; from pathlib import Path; from tests.cluster.local_cluster import resolved_delta_jars; "
        "print(json.dumps(resolved_delta_jars(Path(sys.argv[1]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", resolver, str(work / "resolver")], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return LocalCluster(work / "cluster", jars=json.loads(done.stdout.splitlines()[-1]))


def run_process(command: list[str], log_dir: Path | None = None) -> ColdRun:
    """Runs `command` in a new process and times it; with `log_dir`, counts the statements dbt sent
    from its JSON file log there."""
    seconds = timed_process(command)
    if log_dir is None:
        return ColdRun(seconds)
    elapsed = []
    for line in (log_dir / "dbt.log").read_text().splitlines():
        event = json.loads(line)
        if event["info"]["name"] == "SQLQueryStatus":
            elapsed.append(float(event["data"]["elapsed"]))
    return ColdRun(seconds, len(elapsed), sum(elapsed))


def keep_logs(work: Path) -> Path:
    """A folder outside `work` (which is removed) with the local session's JVM log and dbt's log:
    a failure at scale, hours in, is read from them."""
    from dbt.adapters.tablestream._session import JVM_LOG

    kept = Path(tempfile.mkdtemp(prefix="tablestream-bench-logs-"))
    for log_file in (work / "warehouse" / JVM_LOG, work / "project" / "logs" / "dbt.log"):
        if log_file.exists():
            shutil.copy2(log_file, kept / log_file.name)
    return kept


@contextmanager
def bench_workspace(prefix: str) -> Iterator[Path]:
    """A scratch folder for one benchmark, removed at its end; if the benchmark fails, its JVM's
    and dbt's logs are kept first (keep_logs), and where is printed."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    except BaseException:
        print(f"the JVM's and dbt's logs: {keep_logs(work)}", flush=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)

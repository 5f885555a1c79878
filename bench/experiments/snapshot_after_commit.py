"""The first read of a Delta table after a commit, on the warm Thrift server: measured for issue 97
at bce71bf (2026-12-06); bench/README.md, "A small window", keeps what it decided.

A stream run reads three tables that changed since its last run (the source, the target and the
offsets log); the stock incremental model reads two, in its one MERGE. This asks what each such
read costs on tests/cluster/local_cluster.py's cluster: an offsets-log-like table of 30 one-row
commits takes one more row, on a new connection (a Spark session of its own, as each dbt run
opens), and then a read runs twice: its first run after the commit, then again. Each read, six
times: the offsets read the package sends (`spark__read_stream_offset_sql`, a window count), the
same without the window count, a `count(*)` of the stream's rows, a `count(*)` of the whole table
(answered from the log's statistics, no data file read) and `describe history ... limit 5` (the
commit files alone, no snapshot). Then the offsets read with Delta's state reconstruction in one
partition (`spark.databricks.delta.snapshotPartitions`, an internal setting) and with one
shuffle partition.

    .venv/bin/python bench/experiments/snapshot_after_commit.py
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ORDER = "epoch desc nulls last, to_version desc nulls last, committed_at desc nulls last"
READS = {
    "offsets_read": "select epoch, to_version, source_table_id, mode, source, count(*) over () as runs"
    f" from analytics.log where stream_name = 's1' order by {ORDER} limit 1",
    "offsets_read_no_count": "select epoch, to_version, source_table_id, mode, source"
    f" from analytics.log where stream_name = 's1' order by {ORDER} limit 1",
    "stream_count": "select count(*) from analytics.log where stream_name = 's1'",
    "table_count": "select count(*) from analytics.log",
    "history": "describe history analytics.log limit 5",
}
ROUNDS = 6


def main() -> None:
    from _harness import local_cluster
    from pyhive import hive

    work = Path(tempfile.mkdtemp(prefix="tablestream-snapshot-"))
    cluster = local_cluster(work)
    cluster.start()
    version = 100

    def timed(cursor: object, statement: str) -> float:
        started = time.perf_counter()
        cursor.execute(statement)  # type: ignore[attr-defined]
        if cursor.description:  # type: ignore[attr-defined]
            cursor.fetchall()  # type: ignore[attr-defined]
        return time.perf_counter() - started

    def append(cursor: object) -> float:
        nonlocal version
        version += 1
        return timed(
            cursor,
            f"insert into analytics.log values ('s1', 0, {version}, 'id', 'delta', 'app.t', current_timestamp())",
        )

    try:
        cluster.sql("create database if not exists analytics")
        cluster.sql(
            "create table analytics.log (stream_name string, epoch int, to_version bigint, source_table_id string,"
            " mode string, source string, committed_at timestamp) using delta"
        )
        for index in range(30):
            cluster.sql(
                f"insert into analytics.log values ('s{index % 3}', 0, {index}, 'id', 'delta', 'app.t', current_timestamp())"
            )
        appends: list[float] = []
        for name, statement in READS.items():
            first, again = [], []
            for _ in range(ROUNDS):
                connection = hive.connect(host="127.0.0.1", port=cluster.thrift_port, username="dbt")
                cursor = connection.cursor()
                appends.append(append(cursor))
                first.append(timed(cursor, statement))
                again.append(timed(cursor, statement))
                connection.close()
            print(
                f"{name}: after a commit median {statistics.median(first):.2f} s"
                f" ({min(first):.2f}-{max(first):.2f}), again {statistics.median(again):.2f} s"
            )
        print(f"the one-row append: median {statistics.median(appends):.2f} s")
        for setting in ("spark.databricks.delta.snapshotPartitions=1", "spark.sql.shuffle.partitions=1"):
            connection = hive.connect(host="127.0.0.1", port=cluster.thrift_port, username="dbt")
            cursor = connection.cursor()
            timed(cursor, f"set {setting}")
            first = []
            for _ in range(4):
                append(cursor)
                first.append(timed(cursor, READS["offsets_read"]))
            connection.close()
            print(f"offsets_read with {setting}: after a commit median {statistics.median(first):.2f} s")
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

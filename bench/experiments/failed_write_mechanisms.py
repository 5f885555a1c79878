"""What keeps a failed stream write's session settings from later writes on a cluster: measured on
the local Thrift cluster (tests/cluster/local_cluster.py), stock Spark 4.2.0 and Delta 4.4.0.

Run at commit 5137d86 (2026-12-06) for issue 96; docs/architecture.md, "A failed write", keeps what
it decided: dbt-spark's Thrift connections are a session per model, so nothing crosses models
there, and SQL scripting's EXIT handler is not used, as it cannot pass Delta's error on.

    .venv/bin/python bench/experiments/failed_write_mechanisms.py

Prints one RESULT line: a SET's round trip, a marked MERGE sent as separate statements and as
one SQL script (medians of 5, interleaved), whether a setting reaches a second connection, and
what a client sees when the scripted MERGE breaks a CHECK constraint.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.cluster.local_cluster import LocalCluster

SETTINGS = ("spark.databricks.delta.write.txnAppId", "spark.databricks.delta.write.txnVersion")


def main() -> int:
    from pyhive import hive

    with tempfile.TemporaryDirectory() as workdir:
        cluster = LocalCluster(Path(workdir)).start()
        try:
            first = hive.connect(host="127.0.0.1", port=cluster.thrift_port, username="dbt").cursor()
            second = hive.connect(host="127.0.0.1", port=cluster.thrift_port, username="dbt").cursor()
            table = f"bench_{uuid.uuid4().hex[:8]}"
            first.execute(f"create table {table} (id int, v int) using delta")
            first.execute(f"alter table {table} add constraint small check (v < 100)")
            first.execute(f"insert into {table} values (0, 0)")

            def timed(statement: str) -> float:
                started = time.perf_counter()
                first.execute(statement)
                if first.description:
                    first.fetchall()
                return time.perf_counter() - started

            round_trip = statistics.median(timed(f"set {SETTINGS[0]} = probe") for _ in range(20))
            first.execute(f"reset {SETTINGS[0]}")

            def merge_sql(key: int, value: int = 1) -> str:
                return (
                    f"merge into {table} t using (select {key} as id, {value} as v) s on t.id = s.id "
                    "when not matched then insert *"
                )

            separate, scripted = [], []
            for attempt in range(5):
                key = 10 + 2 * attempt
                started = time.perf_counter()
                first.execute(f"set {SETTINGS[0]} = app{key}")
                first.execute(f"set {SETTINGS[1]} = 1")
                first.execute(merge_sql(key))
                first.execute(f"reset {SETTINGS[0]}")
                first.execute(f"reset {SETTINGS[1]}")
                separate.append(time.perf_counter() - started)
                started = time.perf_counter()
                first.execute(script(f"app{key + 1}", merge_sql(key + 1)))
                scripted.append(time.perf_counter() - started)

            first.execute(f"set {SETTINGS[0]} = crossing")
            second.execute(f"set {SETTINGS[0]}")
            crosses = second.fetchall()[0][1] == "crossing"
            first.execute(f"reset {SETTINGS[0]}")

            try:
                first.execute(script("app-failing", merge_sql(99, 500)))
                failed = "no error"
            except Exception as error:  # the client's view of the handler's error
                failed = str(error).split("\n")[0][:160]
            first.execute(f"set {SETTINGS[0]}")
            left = first.fetchall()[0][1]
        finally:
            cluster.stop()
    print(
        f"RESULT set_round_trip={round_trip:.3f} marked_merge_separate={statistics.median(separate):.2f} "
        f"marked_merge_script={statistics.median(scripted):.2f} setting_reaches_second_connection={crosses} "
        f"after_failed_script_txnAppId={left!r} failed_script_error={failed!r}"
    )
    return 0


def script(app_id: str, merge: str) -> str:
    """The marked MERGE as one SQL script whose EXIT handler resets the settings; Spark 4.2 has no
    RESIGNAL, so the handler raises an error of its own."""
    resets = "".join(f"EXECUTE IMMEDIATE 'RESET {key}'; " for key in SETTINGS)
    return (
        "BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN "
        + resets
        + "SELECT raise_error('the write failed; its settings were reset'); END; "
        f"EXECUTE IMMEDIATE 'SET {SETTINGS[0]} = {app_id}'; EXECUTE IMMEDIATE 'SET {SETTINGS[1]} = 1'; "
        + merge
        + "; "
        + resets
        + "END"
    )


if __name__ == "__main__":
    raise SystemExit(main())

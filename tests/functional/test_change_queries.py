"""Change queries without a cursor (`dbt_tablestream.changes`) and carry-over rows
(`drop_carryovers`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deltalake import DeltaTable

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench, stream_model

AUDIT = (
    "{{ config(materialized='table') }}\n"
    "select id, name, age, __change_type, __commit_version\n"
    "from {{ dbt_tablestream.changes(source('app', 't'), var('from'), var('to', none)) }}"
)


def audit_rows(bench: StreamBench) -> set[tuple[object, ...]]:
    """The change query's rows, with their versions."""
    return {tuple(row.values()) for row in DeltaTable(str(bench.target_path("audit"))).to_pyarrow_table().to_pylist()}


def vars_of(start: object, end: object = None) -> tuple[str, str]:
    return ("--vars", repr({"from": start} if end is None else {"from": start, "to": end}))


def test_changes_between_versions_and_timestamps(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"audit": AUDIT})
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.source().update(updates={"age": "10"}, predicate="id = 1")  # version 1
    bench.source().delete("id = 2")  # version 2
    bench.append([(4, "d", 4)])  # version 3
    expected = {
        (1, "a", 1, "UPDATE_BEFORE", 1),
        (1, "a", 10, "UPDATE_AFTER", 1),
        (2, "b", 2, "DELETE", 2),
    }

    bench.run_ok("run", "-s", "audit", *vars_of(1, 2))
    assert audit_rows(bench) == expected
    assert bench.offsets() == [], "a change query has no cursor"

    # The commit times as Delta's DESCRIBE HISTORY gives them, on the session's clock (UTC).
    bench.register()
    history = shared_spark().sql("describe history app.t").selectExpr("version", "cast(timestamp as string)").collect()
    committed = {int(version): moment for version, moment in history}
    bench.run_ok("run", "-s", "audit", *vars_of(committed[1], committed[2]))
    assert audit_rows(bench) == expected, committed

    bench.run_ok("run", "-s", "audit", *vars_of(3))  # to the latest version
    assert audit_rows(bench) == {(4, "d", 4, "INSERT", 3)}

    query = "dbt_tablestream.changes(app.t"
    bench.refused("audit", query, "starts at version 3 and ends at version 1", "so it is empty", args=vars_of(3, 1))
    bench.refused("audit", query, "version 9 is beyond the latest version 3 of app.t", args=vars_of(1, 9))
    bench.refused(
        "audit", query, "'last tuesday' is neither a version nor an ISO-8601 timestamp", args=vars_of("last tuesday")
    )
    bench.refused("audit", query, "`from` must be a version (a whole number >= 0)", args=vars_of(-1))
    bench.refused("audit", query, "has no version committed at or after 2999-01-01", args=vars_of("2999-01-01"))

    bench.append([(5, "e", 5)])  # version 4: its file stays, the deleted one (version 2's) goes
    bench.source().vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    bench.refused("audit", query, "is stale", "were removed (VACUUM)", "Read a range whose versions", args=vars_of(1))


def test_carryovers_are_dropped_before_rows_are_logged(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {"log": stream_model("start_at='latest'"), "log_all": stream_model("start_at='latest', drop_carryovers=false")},
    )
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    bench.register()
    spark = shared_spark()
    # A MERGE that rewrites every row and changes one of them.
    spark.sql(
        "merge into app.t as target using (select * from app.t) as s on target.id = s.id"
        " when matched and s.id = 1 then update set age = 99 when matched then update set *"
    )
    # An overwrite with the same rows but one: Delta logs every row deleted and every kept row inserted.
    spark.sql("insert overwrite app.t select * from app.t where id <> 3")

    log = bench.run_appended("log")
    assert sorted(log) == [(1, "a", 1, "UPDATE_BEFORE"), (1, "a", 99, "UPDATE_AFTER"), (3, "c", 3, "DELETE")]
    log_all = bench.run_appended("log_all")
    assert log_all[(2, "b", 2, "UPDATE_BEFORE")] == 1 and log_all[(2, "b", 2, "UPDATE_AFTER")] == 1
    assert log_all[(2, "b", 2, "DELETE")] == 1 and log_all[(2, "b", 2, "INSERT")] == 1
    assert (log - log_all) == {}, "without drop_carryovers every change row is logged"


def test_a_window_of_appends_alone_cancels_no_carryovers(tmp_path: Path) -> None:
    """A window whose every commit only appended rows (delta-rs's and Spark's appends, WRITE with
    mode Append) holds inserts alone: its read skips the cancellation of carry-overs, a shuffle of
    every row. A window with any other commit cancels them as before."""
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")})
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.append([(3, "c", 3)])
    bench.register()
    shared_spark().sql("insert into app.t values (4, 'd', 4)")
    reads: list[str] = []

    def record(event: Any) -> None:
        if event.info.name == "SQLQuery" and "table_changes(" in str(event.data.sql):
            reads.append(str(event.data.sql))

    before = bench.target_rows("log")
    assert bench.invoke("run", "-s", "log", callbacks=[record]).success
    assert sorted(bench.target_rows("log") - before) == [(3, "c", 3, "INSERT"), (4, "d", 4, "INSERT")]
    assert reads and not [sql for sql in reads if "__tablestream_pair" in sql], reads

    # The same MERGE as above, then an append: the window cancels carry-overs.
    shared_spark().sql(
        "merge into app.t as target using (select * from app.t) as s on target.id = s.id"
        " when matched and s.id = 1 then update set age = 99 when matched then update set *"
    )
    bench.append([(5, "e", 5)])
    reads.clear()
    before = bench.target_rows("log")
    assert bench.invoke("run", "-s", "log", callbacks=[record]).success
    appended = sorted(bench.target_rows("log") - before)
    assert appended == [(1, "a", 1, "UPDATE_BEFORE"), (1, "a", 99, "UPDATE_AFTER"), (5, "e", 5, "INSERT")]
    assert reads and all("__tablestream_pair" in sql for sql in reads), reads

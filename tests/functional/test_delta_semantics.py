"""Delta's own semantics where a stream depends on them, each run end to end on delta-spark: a busy
source, VACUUMs nobody logged, Delta's file retention, commits that carry a marker without being
the write, UNSET of the change feed, ANSI mode, REPLACE of a source, three-part names, and a
target's change feed kept through --full-refresh."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from dbt_tablestream.streams import open_stream
from tests.functional.local import local_profile, register_tables, release_pause, shared_spark, sql_path
from tests.functional.streams import CDF, StreamBench, model_results, stream_model

STREAM = "log__app_t"
RESET = "dbt run --full-refresh -s log"


def ids(rows: Any) -> list[int]:
    """The ids of rows (a Counter counts each row as often as it occurs)."""
    return sorted(row[0] for row in (rows.elements() if isinstance(rows, Counter) else rows))


def established(bench: StreamBench) -> StreamBench:
    """The bench's `log` stream has run once on a source with two rows, and is at the source's latest version."""
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run("-s", "log")
    return bench


def path_sql(bench: StreamBench, statement: str) -> None:
    """A statement on the source by path, on a session of its own (its settings stay there)."""
    session = shared_spark().newSession()
    for part in statement.split(";"):
        if part.strip():
            session.sql(part.replace("{source}", f"delta.`{sql_path(Path(bench.source_path()))}`"))


def history_operations(bench: StreamBench) -> list[str]:
    return [entry["operation"] for entry in bench.source().history()]


def test_commits_landing_while_the_model_runs_are_left_for_the_next_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window (after, through] is pinned first; then, while the run holds there, a writer
    commits three times, more than the window's size. The window check must still find version
    after+1 (no false "stale"), apply exactly the pinned window, and leave the rest for the next run."""
    bench = established(StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}))
    bench.append([(3, "c", 3)])
    pinned = bench.source().version()
    paused = threading.Event()

    def on_event(event: Any) -> None:
        if "tablestream test pause at window_pinned" in event.info.msg:
            paused.set()

    released = tmp_path / "released"
    released.mkdir()

    def busy_writer() -> None:
        assert paused.wait(timeout=300)
        for key in (4, 5, 6):
            bench.append([(key, "w", key)])
        release_pause(released, "log")

    writer = threading.Thread(target=busy_writer)
    writer.start()
    # The run holds its pinned window until the writer has committed.
    monkeypatch.setenv("DBT_TABLESTREAM_PAUSE", "window_pinned:300")
    monkeypatch.setenv("DBT_TABLESTREAM_RELEASE", str(released))
    before = bench.target_rows("log")
    result = bench.invoke("run", "-s", "log", callbacks=[on_event])
    writer.join()
    assert result.success, result.exception or model_results(result)[0].message
    assert bench.source().version() == pinned + 3, "the writer's commits landed while the run held its window"
    assert ids(bench.target_rows("log") - before) == [3]
    assert bench.offsets()[-1]["to_version"] == pinned

    monkeypatch.delenv("DBT_TABLESTREAM_PAUSE")
    monkeypatch.delenv("DBT_TABLESTREAM_RELEASE")
    assert ids(bench.run_appended("log")) == [4, 5, 6]


def test_an_unlogged_vacuum_past_the_offset_is_refused_as_stale(tmp_path: Path) -> None:
    """VACUUM logs nothing where vacuum logging is off (Delta's default on s3). Files the window
    needs are gone: the run ends in the package's stale error with its remedy, never in Delta's
    missing-file error, and writes nothing."""
    bench = established(StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}))
    bench.source().alter.set_table_properties({"delta.deletedFileRetentionDuration": "interval 1 seconds"})
    bench.append([(3, "c", 3)])  # the stream needs this commit's data file...
    bench.source().delete("id = 3")  # ...which this removes from the table...
    data_files = {path.name for path in Path(bench.source_path()).glob("*.parquet")}
    time.sleep(2)
    path_sql(bench, "set spark.databricks.delta.vacuum.logging.enabled = false; vacuum {source}")  # ...and this deletes
    assert not any("VACUUM" in operation for operation in history_operations(bench)), "the VACUUM must not be logged"
    assert {path.name for path in Path(bench.source_path()).glob("*.parquet")} < data_files, "files were deleted"

    message = bench.refused("log", f"Stream {STREAM} is stale", "delta.deletedFileRetentionDuration", RESET)
    assert "FILE_NOT_EXIST" not in message and "DELTA_" not in message


def test_a_window_older_than_the_file_retention_is_refused_before_delta_refuses_it(tmp_path: Path) -> None:
    """Delta >= 4.1 refuses a change read starting before delta.deletedFileRetentionDuration, VACUUM
    or not. The package refuses first, with its stale message and remedy, and writes nothing."""
    bench = established(StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}))
    offset = bench.offsets()[-1]["to_version"]
    bench.source().alter.set_table_properties({"delta.deletedFileRetentionDuration": "interval 1 seconds"})
    bench.append([(3, "c", 3)])
    time.sleep(2)
    register_tables(bench.warehouse)
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION"):
        shared_spark().sql(f"select * from table_changes('app.t', {offset + 1})").collect()

    bench.refused(
        "log",
        f"Stream {STREAM} is stale",
        f"version {offset + 1} of app.t was committed at",
        "interval 1 seconds",
        RESET,
    )


@pytest.mark.extended
def test_commits_that_carry_the_marker_after_the_write_do_not_count_as_the_write(tmp_path: Path) -> None:
    """Auto-compaction commits right after the write, while commitInfo.userMetadata still holds the
    marker. The rows the run reports and logs are the write's, from the write's own commit."""
    profile = local_profile(
        tmp_path / "warehouse", server_side_parameters={"spark.databricks.delta.autoCompact.minNumFiles": "2"}
    )
    config = "start_at='latest', tblproperties={'delta.autoOptimize.autoCompact': 'true'}"
    bench = StreamBench(tmp_path, {"log": stream_model(config)}, profile=profile)
    established(bench)
    for round_rows in ([(3, "c", 3), (4, "d", 4)], [(5, "e", 5)], [(6, "f", 6), (7, "g", 7), (8, "h", 8)]):
        bench.append(round_rows)
        assert ids(bench.run_appended("log")) == [row[0] for row in round_rows]
        assert bench.offsets()[-1]["rows_written"] == len(round_rows)

    history = DeltaTable(str(bench.target_path("log"))).history()
    compactions = [entry for entry in history if entry["operation"] == "OPTIMIZE"]
    assert compactions, "auto-compaction ran after a write"
    assert all('"tablestream.stream"' in (entry.get("userMetadata") or "") for entry in compactions), (
        "the compaction carries the marker, so it could be taken for the write"
    )

    # The PySpark stream API reports its write's rows the same way.
    register_tables(bench.warehouse)
    stream = open_stream(spark=shared_spark(), source="app.t", name="py_log", offsets_schema="analytics")
    stream.spark.conf.set("spark.databricks.delta.autoCompact.enabled", "true")
    stream.spark.conf.set("spark.databricks.delta.autoCompact.minNumFiles", "2")
    for round_rows in ([(9, "i", 9), (10, "j", 10)], [(11, "k", 11)], [(12, "l", 12), (13, "m", 13), (14, "n", 14)]):
        bench.append(round_rows)
        with stream.consume() as window:
            written = window.append_to("analytics.py_log_target")
        assert written == len(round_rows)
    py_history = stream.spark.sql("describe history analytics.py_log_target").collect()
    assert any(row["operation"] == "OPTIMIZE" for row in py_history), "auto-compaction ran after a consume's write"


def test_an_unset_change_feed_inside_the_window_is_refused(tmp_path: Path) -> None:
    """ALTER TABLE ... UNSET TBLPROPERTIES turns the change feed off without naming a value. The
    refusal names the data commit made while it was off, not one before the UNSET."""
    bench = established(StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}))
    bench.append([(3, "c", 3)])  # recorded
    path_sql(bench, "alter table {source} unset tblproperties ('delta.enableChangeDataFeed')")
    bench.append([(4, "d", 4)])  # not recorded
    unrecorded = bench.source().version()
    bench.source().alter.set_table_properties(CDF)
    bench.append([(5, "e", 5)])
    message = bench.refused(
        "log", f"Stream {STREAM}", f"change data feed of app.t was not enabled at version {unrecorded},", RESET
    )
    assert "enable_change_tracking" in message


def test_ansi_mode_runs_streams_and_keeps_the_friendly_messages(tmp_path: Path) -> None:
    """ANSI mode on, as on Databricks SQL and Spark 4 clusters: the stream runs as before, and a
    malformed start_at timestamp gets the package's message, not a cast error."""
    profile = local_profile(tmp_path / "warehouse", server_side_parameters={"spark.sql.ansi.enabled": "true"})
    models = {
        "log": stream_model("start_at='latest'"),
        "bad": stream_model("start_at={'timestamp': 'yesterday at noon'}"),
        "ansi_probe": "{{ config(materialized='table') }} select cast('not a number' as int) as n",
    }
    bench = established(StreamBench(tmp_path, models, profile=profile))
    probe = bench.invoke("run", "-s", "ansi_probe")
    assert not probe.success and "CAST_INVALID_INPUT" in str(model_results(probe)[0].message), "ANSI mode is on"
    bench.append([(3, "c", 3)])
    assert ids(bench.run_appended("log")) == [3]
    bench.refused("bad", "start_at timestamp 'yesterday at noon' is not ISO-8601")


def test_a_replaced_source_is_refused_as_replaced(tmp_path: Path) -> None:
    """CREATE OR REPLACE keeps the table's versions going but gives it a new Delta table id."""
    bench = established(StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}))
    path_sql(
        bench,
        "create or replace table {source} using delta tblproperties ('delta.enableChangeDataFeed' = 'true') "
        "as select 7 as id, 'x' as name, 7 as age",
    )
    assert history_operations(bench)[0] == "CREATE OR REPLACE TABLE AS SELECT"
    bench.refused("log", f"Stream {STREAM}", "app.t was dropped and recreated, or replaced", RESET)


def test_a_three_part_source_name_keeps_its_catalog(tmp_path: Path) -> None:
    """`catalog.schema.table` is what the stream records and reads again (Unity Catalog's names)."""
    bench = established(StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}))
    register_tables(bench.warehouse)
    stream = open_stream(
        spark=shared_spark(), source="spark_catalog.app.t", name="catalog_named", offsets_schema="analytics"
    )
    bench.append([(3, "c", 3)])
    with stream.consume() as window:
        assert ids((row["id"],) for row in window.dataframe.collect()) == [3]
    logged = [row for row in bench.offsets() if row["stream_name"] == "catalog_named"]
    assert {row["source"] for row in logged} == {"spark_catalog.app.t"}
    assert logged[-1]["to_version"] == bench.source().version()


@pytest.mark.extended
def test_a_full_refresh_keeps_the_change_feed_of_a_target_others_stream_from(tmp_path: Path) -> None:
    """`up` had its change feed turned on outside its config (enable_change_tracking), and `down`
    streams from it. A --full-refresh of `up` replaces it: its feed stays on, so `down`, refused
    as replaced, can be reset and goes on streaming."""
    models = {
        "up": stream_model("start_at='latest'"),
        "down": (
            "{{ config(materialized='table_stream', start_at='latest') }}\n"
            "select id, name, age from {{ dbt_tablestream.ref_stream('up') }}"
        ),
    }
    bench = StreamBench(tmp_path, models)
    bench.create_source([(1, "a", 1)])
    bench.run("-s", "up")
    bench.run_ok("run-operation", "dbt_tablestream.enable_change_tracking", "--args", "{relation: analytics.up}")
    bench.run("-s", "down")
    bench.append([(2, "b", 2)])
    bench.run("-s", "up")
    assert ids(bench.run_appended("down")) == [2]

    bench.run("-s", "up", "--full-refresh")
    properties = dict(DeltaTable(str(bench.target_path("up"))).metadata().configuration)
    assert properties.get("delta.enableChangeDataFeed") == "true"
    bench.refused(
        "down", "Stream down__up", "analytics.up was dropped and recreated, or replaced", "--full-refresh -s down"
    )
    bench.run("-s", "down", "--full-refresh")
    bench.append([(3, "c", 3)])
    bench.run("-s", "up")
    assert ids(bench.run_appended("down")) == [3]


@pytest.mark.parametrize("vectors", [False, True])
def test_a_count_of_the_target_inside_the_window_check_reads_no_data_file(tmp_path: Path, vectors: bool) -> None:
    """stream_merge's window check counts the target's rows beside the window's keys
    (stream_key_ranges_sql's `target`), for the write's choice: Delta answers a bare count(*) from
    its log's statistics (OptimizeMetadataOnlyDeltaQuery), with or without deletion vectors, so the
    count reads no data file of the target."""
    spark = shared_spark()
    target = f"delta.`{sql_path(tmp_path / 'target')}`"
    spark.sql(
        f"create table {target} using delta tblproperties ('delta.enableDeletionVectors' = '{str(vectors).lower()}')"
        " as select id from range(10000)"
    )
    spark.sql(f"delete from {target} where id % 10 = 0")
    query = spark.sql(f"select count(*) as keys, (select count(*) from {target}) as target_rows from range(5)")
    assert [tuple(row) for row in query.collect()] == [(5, 9000)]
    plan = query._jdf.queryExecution().executedPlan().toString()
    # The outer query reads range(5); the count is a literal row computed from the log.
    assert "FileScan" not in plan and "LocalTableScan" in plan, plan

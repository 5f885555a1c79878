"""table_stream: the seeds' worked examples, offsets, start_at, crash recovery and refusals."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from tests.functional.streams import (
    CDF,
    STREAM_READS_FULL,
    TRACKING,
    StreamBench,
    model_results,
    stream_model,
)


def rows(*items: tuple) -> Counter:
    return Counter(items)


# --- seed 002_49919da25407724e.txt ----------------------------------------------------------------


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_seed_standard_case(tmp_path: Path, stream_read: str) -> None:
    """STANDARD mode: each consuming run appends exactly what the seed's SELECT showed at that step."""
    bench = StreamBench(tmp_path, {"consume_log": stream_model("start_at='latest'")}, stream_read=stream_read)
    bench.create_source([])  # CREATE TABLE + change_tracking, then CREATE TABLE STREAM
    bench.run()
    bench.append([(1, "Alice", 20), (2, "Bob", 25), (3, "Charlie", 30), (4, "David", 35), (5, "Eve", 40)])
    assert bench.run_appended("consume_log") == rows(
        (1, "Alice", 20, "INSERT"),
        (2, "Bob", 25, "INSERT"),
        (3, "Charlie", 30, "INSERT"),
        (4, "David", 35, "INSERT"),
        (5, "Eve", 40, "INSERT"),
    )
    # "Check if the stream has data": consumed, so the next run appends nothing and commits nothing.
    version = bench.target_version("consume_log")
    assert bench.run_appended("consume_log") == Counter()
    assert bench.target_version("consume_log") == version

    bench.source().update(updates={"age": "age + 5"}, predicate="id = 1 OR id = 3")
    assert bench.run_appended("consume_log") == rows(
        (1, "Alice", 25, "UPDATE_AFTER"),
        (3, "Charlie", 35, "UPDATE_AFTER"),
        (1, "Alice", 20, "UPDATE_BEFORE"),
        (3, "Charlie", 30, "UPDATE_BEFORE"),
    )
    assert bench.run_appended("consume_log") == Counter()

    bench.source().delete("id = 2 OR id = 4")
    assert bench.run_appended("consume_log") == rows((2, "Bob", 25, "DELETE"), (4, "David", 35, "DELETE"))
    assert bench.run_appended("consume_log") == Counter()


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_seed_append_only_case(tmp_path: Path, stream_read: str) -> None:
    """APPEND_ONLY: inserts as committed, never updates or deletes.

    The seed never consumes its stream, so every SELECT shows the same five inserts with their
    original values. `pending` re-reads its stream from creation (--full-refresh restarts it at its
    start_at) and shows exactly that; `consumer` consumes each time, so it appends the inserts once.
    """
    bench = StreamBench(
        tmp_path,
        {
            "pending": stream_model("stream_mode='append_only', start_at={'version': 0}"),
            "consumer": stream_model("stream_mode='append_only', start_at='latest'"),
        },
        stream_read=stream_read,
    )
    bench.create_source([])
    bench.run("-s", "consumer")
    bench.append([(1, "Alice", 20), (2, "Bob", 25), (3, "Charlie", 30), (4, "David", 35), (5, "Eve", 40)])
    shown = rows(
        (1, "Alice", 20, "INSERT"),
        (2, "Bob", 25, "INSERT"),
        (3, "Charlie", 30, "INSERT"),
        (4, "David", 35, "INSERT"),
        (5, "Eve", 40, "INSERT"),
    )
    assert bench.run_appended("pending", "--full-refresh") == shown
    assert bench.run_appended("consumer") == shown

    steps = [
        lambda: bench.source().update(updates={"age": "age + 5"}, predicate="id = 1 OR id = 3"),
        lambda: bench.source().delete("id = 2 OR id = 4"),
        lambda: bench.source().delete(),
    ]
    for change in steps:
        change()
        assert bench.run_appended("pending", "--full-refresh") == shown
        assert bench.run_appended("consumer") == Counter()


# --- seed 000_210065e67959f97a.txt ----------------------------------------------------------------


def test_seed_orders_example(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {"orders_changes": stream_model("start_at='latest'", source="orders")},
        sources=("orders",),
    )
    path = str(bench.warehouse / "app.db" / "orders")
    schema = pa.schema(
        [("id", pa.int32()), ("name", pa.string()), ("amount", pa.decimal128(10, 2)), ("status", pa.string())]
    )

    def orders(items: list[tuple]) -> pa.Table:
        return pa.Table.from_pylist([dict(zip(schema.names, item, strict=True)) for item in items], schema=schema)

    write_deltalake(path, schema.empty_table())
    DeltaTable(path).alter.set_table_properties(CDF)  # ALTER TABLE orders SET PROPERTIES ('change_tracking' = 'true')
    write_deltalake(
        path,
        orders(
            [
                (1, "Alice", Decimal("1000.00"), "active"),
                (2, "Bob", Decimal("2000.00"), "active"),
                (3, "Carol", Decimal("500.00"), "active"),
            ]
        ),
        mode="append",
    )
    bench.run()  # CREATE TABLE STREAM orders_stream (STANDARD), after the initial insert
    write_deltalake(path, orders([(4, "Dave", Decimal("3000.00"), "active")]), mode="append")
    DeltaTable(path).update(updates={"amount": "1500.00"}, predicate="id = 1")
    DeltaTable(path).delete("id = 3")
    appended = bench.run_appended("orders_changes")
    assert appended == rows(
        (1, "Alice", Decimal("1500.00"), "active", "UPDATE_AFTER"),
        (4, "Dave", Decimal("3000.00"), "active", "INSERT"),
        (1, "Alice", Decimal("1000.00"), "active", "UPDATE_BEFORE"),
        (3, "Carol", Decimal("500.00"), "active", "DELETE"),
    )
    log = DeltaTable(str(bench.target_path("orders_changes"))).to_pyarrow_table().to_pylist()
    versions = {(row["id"], row["__change_type"]): row["__commit_version"] for row in log}
    assert versions[(4, "INSERT")] < versions[(1, "UPDATE_AFTER")] < versions[(3, "DELETE")]
    assert all(isinstance(row["__commit_timestamp"], datetime) for row in log)


# --- offsets ----------------------------------------------------------------------------------------


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_two_models_keep_independent_offsets(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(
        tmp_path,
        {"first": stream_model("start_at='latest'"), "second": stream_model("start_at='latest'")},
        stream_read=stream_read,
    )
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.append([(2, "b", 2)])
    assert bench.run_appended("first") == rows((2, "b", 2, "INSERT"))
    bench.append([(3, "c", 3)])
    assert bench.run_appended("first") == rows((3, "c", 3, "INSERT"))
    # `second` has not consumed either change yet.
    assert bench.run_appended("second") == rows((2, "b", 2, "INSERT"), (3, "c", 3, "INSERT"))
    names = {row["stream_name"] for row in bench.offsets()}
    assert names == {"first__app_t", "second__app_t"}

    # A third run with no source change adds no rows and makes no target commit.
    versions = (bench.target_version("first"), bench.target_version("second"))
    bench.run()
    assert (bench.target_version("first"), bench.target_version("second")) == versions
    assert bench.offsets()[-1]["rows_written"] == 0


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_parse_compile_docs_show_and_a_failed_run_leave_the_offset_unchanged(tmp_path: Path, stream_read: str) -> None:
    failing = (
        "{{ config(materialized='table_stream', start_at='latest') }}\n"
        "select *, case when id = 99 then raise_error('bad row 99') else 1 end as checked\n"
        "from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    bench = StreamBench(
        tmp_path, {"log": stream_model("start_at='latest'"), "strict": failing}, stream_read=stream_read
    )
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.append([(2, "b", 2), (99, "x", 0)])
    offsets_before, log_before, strict_before = (
        bench.offsets(),
        bench.target_version("log"),
        bench.target_version("strict"),
    )

    bench.run_ok("parse")
    bench.run_ok("compile")
    bench.run_ok("docs", "generate")
    shown = bench.run_ok("show", "-s", "log", "--limit", "10").result.results[0].agate_table
    assert sorted(row["id"] for row in shown.rows) == [2, 99]  # show reads the pending window...
    assert bench.offsets() == offsets_before  # ...and parse, compile, docs and show move nothing
    assert bench.target_version("log") == log_before

    failed = bench.invoke("run", "-s", "strict")
    assert not failed.success
    assert "bad row 99" in str(model_results(failed)[0].message)
    assert bench.offsets() == offsets_before
    assert bench.target_version("strict") == strict_before

    assert bench.run_appended("log") == rows((2, "b", 2, "INSERT"), (99, "x", 0, "INSERT"))


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_full_refresh_starts_a_new_epoch(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model()}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.source().delete("id = 1")
    bench.run()
    rebuilt = bench.run_appended("log", "--full-refresh")
    assert rebuilt == rows((2, "b", 2, "INSERT"))  # a fresh snapshot of the current state
    epochs = [(row["epoch"], row["to_version"]) for row in bench.offsets()]
    assert epochs[-1][0] == 1 and epochs[0][0] == 0
    bench.append([(3, "c", 3)])
    assert bench.run_appended("log") == rows((3, "c", 3, "INSERT"))


# --- start_at ----------------------------------------------------------------------------------------


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_a_dropped_target_after_a_full_refresh_is_rebuilt_in_a_new_epoch(tmp_path: Path, stream_read: str) -> None:
    """run, change, run, --full-refresh (epoch 1), change, run; DROP TABLE the target, change, run
    (a rebuild from a snapshot); change, run: every id is in the target exactly once."""
    from tests.functional.local import shared_spark

    bench = StreamBench(tmp_path, {"log": stream_model()}, stream_read=stream_read)
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.append([(2, "b", 2)])
    bench.run()
    bench.run("--full-refresh")
    assert bench.offsets()[-1]["epoch"] == 1
    bench.append([(3, "c", 3)])
    bench.run()
    shared_spark().sql("drop table analytics.log")
    bench.append([(4, "d", 4)])
    bench.run()
    assert bench.offsets()[-1]["epoch"] == 2, "a rebuild opens an epoch above every logged one"
    bench.append([(5, "e", 5)])
    bench.run()
    ids = [row[0] for row in bench.target_rows("log").elements()]
    assert sorted(ids) == [1, 2, 3, 4, 5], ids


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_start_at_snapshot_gives_insert_rows_of_the_current_state(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model()}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.source().update(updates={"age": "age * 10"}, predicate="id = 3")
    first = bench.run_appended("log")
    assert first == rows((1, "a", 1, "INSERT"), (2, "b", 2, "INSERT"), (3, "c", 30, "INSERT"))
    versions = {
        row["__commit_version"] for row in DeltaTable(str(bench.target_path("log"))).to_pyarrow_table().to_pylist()
    }
    assert versions == {bench.source().version()}
    bench.append([(4, "d", 4)])
    assert bench.run_appended("log") == rows((4, "d", 4, "INSERT"))


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_start_at_latest_skips_what_is_there(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}, stream_read=stream_read)
    bench.create_source([(1, "a", 1)])
    assert bench.run_appended("log") == Counter()
    assert bench.target_version("log") == 0  # created empty, with the model's columns
    assert DeltaTable(str(bench.target_path("log"))).schema().to_arrow() is not None
    bench.append([(2, "b", 2)])
    assert bench.run_appended("log") == rows((2, "b", 2, "INSERT"))


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_start_at_earliest_reads_the_whole_change_feed(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='earliest'")}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.source().update(updates={"age": "0"}, predicate="id = 1")
    assert bench.run_appended("log") == rows(
        (1, "a", 1, "INSERT"), (2, "b", 2, "INSERT"), (1, "a", 1, "UPDATE_BEFORE"), (1, "a", 0, "UPDATE_AFTER")
    )


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_start_at_earliest_starts_where_the_feed_was_enabled(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='earliest'")}, stream_read=stream_read)
    bench.create_source([(1, "a", 1)], change_feed=False)
    bench.source().alter.set_table_properties(CDF)
    bench.append([(2, "b", 2)])
    assert bench.run_appended("log") == rows((2, "b", 2, "INSERT"))


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_start_at_version_reads_changes_after_it(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at={'version': 1}")}, stream_read=stream_read)
    bench.create_source([(1, "a", 1)])  # version 0
    bench.append([(2, "b", 2)])  # version 1
    bench.append([(3, "c", 3)])  # version 2
    assert bench.run_appended("log") == rows((3, "c", 3, "INSERT"))


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_start_at_timestamp_resolves_to_the_last_version_at_or_before_it(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {}, stream_read=stream_read)
    bench.create_source([(1, "a", 1)])  # version 0
    bench.append([(2, "b", 2)])  # version 1
    time.sleep(1)
    bench.append([(3, "c", 3)])  # version 2
    # Delta dates a version by its log file's modification time, a few milliseconds after the
    # commitInfo timestamp delta-rs writes; the midpoint of a one-second gap is past the first and
    # before version 2 by either clock.
    committed = {entry["version"]: entry["timestamp"] for entry in bench.source().history()}
    at_ms = (committed[1] + committed[2]) / 2
    at = datetime.fromtimestamp(at_ms / 1000, tz=timezone.utc).isoformat()
    (bench.project.root / "models" / "log.sql").write_text(stream_model(f"start_at={{'timestamp': '{at}'}}"))
    assert bench.run_appended("log") == rows((3, "c", 3, "INSERT"))


# --- crash between the target commit and the offsets append -----------------------------------------


# CI kills every step of every kind of model in test_kills.py; this chain of two kills on one
# warehouse is in the soak.
@pytest.mark.soak
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_kill_during_the_commit_protocol_applies_nothing_twice(tmp_path: Path, stream_read: str) -> None:
    """A `dbt run` process SIGKILLed after the target commit, then after the offsets append; each
    time the next run applies nothing twice and loses nothing. One warehouse for both, so the
    second crash also starts from a recovered stream."""
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")}, processes=True, stream_read=stream_read)
    bench.create_source([(1, "a", 1)])
    bench.run()
    expected = rows()
    for key, fault in enumerate(["after_target_commit", "after_offsets_append"]):
        new = [(10 * key + 2, "b", 2), (10 * key + 3, "c", 3)]
        bench.append(new)
        expected += rows(*[(*row, "INSERT") for row in new])
        offsets_before = len(bench.offsets())

        bench.crash(fault)
        assert bench.target_rows("log") == expected
        assert len(bench.offsets()) == offsets_before + (fault == "after_offsets_append")

        bench.append([(10 * key + 4, "d", 4)])
        expected += rows((10 * key + 4, "d", 4, "INSERT"))
        bench.run()
        assert bench.target_rows("log") == expected
        assert bench.offsets()[-1]["to_version"] == bench.source().version()


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_ref_stream_chains_on_a_model_output(tmp_path: Path, stream_read: str) -> None:
    upstream = (
        "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',"
        f" tblproperties={{'{TRACKING[stream_read]}': 'true'}}) }}}}\n"
        "select id, name, age from {{ source('app', 't') }}"
    )
    downstream = (
        "{{ config(materialized='table_stream', start_at='latest') }}\n"
        "select id, age, __change_type from {{ dbt_tablestream.ref_stream('people_current') }}"
    )
    bench = StreamBench(tmp_path, {"people_current": upstream, "people_changes": downstream}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    assert bench.target_rows("people_changes") == Counter()
    bench.source().update(updates={"age": "20"}, predicate="id = 2")
    bench.run()
    # dbt's merge strategy updates every matched row, and Delta records each as an update even
    # when its values did not change; those carry-overs are dropped (drop_carryovers), so the
    # stream shows the one row the upstream commit changed.
    assert bench.target_rows("people_changes") == rows((2, 2, "UPDATE_BEFORE"), (2, 20, "UPDATE_AFTER"))
    names = {row["stream_name"] for row in bench.offsets()}
    assert names == {"people_changes__people_current"}


def test_incremental_append_new_columns(tmp_path: Path) -> None:
    model = (
        "{{ config(materialized='incremental', on_schema_change='append_new_columns') }}\n"
        "select * from {{ source('app', 't') }}{% if is_incremental() %} where id > 1{% endif %}"
    )
    bench = StreamBench(tmp_path, {"inc": model})
    bench.create_source([(1, "a", 1)])
    bench.run()
    wider = pa.table(
        {"id": pa.array([2], pa.int32()), "name": ["b"], "age": pa.array([2], pa.int32()), "email": ["b@x"]}
    )
    write_deltalake(bench.source_path(), wider, mode="append", schema_mode="merge")
    bench.run()
    table = DeltaTable(str(bench.target_path("inc"))).to_pyarrow_table()
    assert table.column_names == ["id", "name", "age", "email"]
    assert sorted((row["id"], row["email"]) for row in table.to_pylist()) == [(1, None), (2, "b@x")]

"""The realtime writer (dbt_tablestream.ingest) against real Delta tables, and a stream reading what it wrote.

`connect(warehouse=...)` writes by path with delta-rs (no JVM); `connect(spark=...)` runs on the
shared local delta-spark session. Tables cross between the two: the writer's commits are read by
a stream_merge model on delta-spark, and the Spark writer's commits are checked with delta-rs.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbt_tablestream.ingest import (
    PRIMARY_KEY_PROPERTY,
    FlushMode,
    IngestError,
    RealtimeOperation,
    RealtimeOptionsBuilder,
    RowOperator,
    connect,
)
from dbt_tablestream.ingest._delta_target import DeltaTarget
from dbt_tablestream.ingest._targets import TXN_APP_ID, TXN_VERSION, SparkTarget
from tests.functional.local import register_tables, relocate_schemas, shared_spark
from tests.functional.streams import CDF, PEOPLE, StreamBench

TYPED = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("flag", pa.bool_()),
        ("small", pa.int8()),
        ("amount", pa.decimal128(10, 2)),
        ("ratio", pa.float64()),
        ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("local_at", pa.timestamp("us")),
        ("payload", pa.binary()),
        ("tags", pa.list_(pa.string())),
        ("attributes", pa.map_(pa.string(), pa.int64())),
        ("address", pa.struct([("city", pa.string()), ("zip", pa.int32())])),
    ]
)


def create_table(warehouse: Path, name: str, schema: pa.Schema, key: str | None = None) -> str:
    path = str(warehouse / "app.db" / name)
    write_deltalake(path, schema.empty_table(), configuration=CDF)
    if key:
        DeltaTable(path).alter.set_table_properties({PRIMARY_KEY_PROPERTY: key}, raise_if_not_exists=False)
    return path


def rows_of(path: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row.values()) for row in DeltaTable(path).to_pyarrow_table().to_pylist())


def person(stream: Any, operator: RowOperator, key: int, name: str = "", age: int = 0) -> Any:
    row = stream.create_row(operator).set_value("id", key)
    if operator is not RowOperator.DELETE_IGNORE:
        row.set_value("name", name).set_value("age", age)
    return row


def sync(lines: int = 1000, **retry: Any) -> Any:
    builder = RealtimeOptionsBuilder().with_flush_mode(FlushMode.AUTO_FLUSH_SYNC).with_mutation_buffer_lines_num(lines)
    if retry:
        builder = builder.with_request_failed_retry_internal_ms(retry.get("delay_ms", 10))
    return builder.build()


@pytest.mark.extended
def test_cdc_rows_in_flushes_then_stream_merge_mirrors_the_source(tmp_path: Path) -> None:
    """100k upserts and deletes over 10k keys in 1k-row flushes written with delta-rs; each flush is
    one version, and a stream_merge run on delta-spark over all of them (the change feed delta-rs
    wrote) leaves the target equal to the source."""
    bench = StreamBench(
        tmp_path,
        {
            "current": "{{ config(materialized='stream_merge', unique_key='id') }}\n"
            "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
        },
    )
    path = create_table(bench.warehouse, "t", PEOPLE, key="id")
    write_deltalake(
        path,
        pa.table(
            {
                "id": pa.array(range(0, 10_000, 2), pa.int32()),
                "name": [f"seed{i}" for i in range(0, 10_000, 2)],
                "age": pa.array([1] * 5_000, pa.int32()),
            },
            schema=PEOPLE,
        ),
        mode="append",
    )
    bench.run("-s", "current")
    before = DeltaTable(path).version()
    oracle = {
        row["id"]: (row["id"], row["name"], row["age"]) for row in DeltaTable(path).to_pyarrow_table().to_pylist()
    }

    rng = random.Random(8)
    started = time.perf_counter()
    with connect(warehouse=bench.warehouse) as conn:
        stream = conn.get_realtime_stream("app", "t", operate=RealtimeOperation.CDC, options=sync(1000))
        for index in range(100_000):
            key = rng.randrange(10_000)
            if rng.random() < 0.75:
                stream.apply(person(stream, RowOperator.UPSERT, key, f"n{index}", index % 120))
                oracle[key] = (key, f"n{index}", index % 120)
            else:
                stream.apply(person(stream, RowOperator.DELETE_IGNORE, key))
                oracle.pop(key, None)
    elapsed = time.perf_counter() - started
    assert stream.stats.commits == 100 and stream.stats.rows_committed == 100_000
    assert DeltaTable(path).version() == before + 100, "each flush must be one Delta commit"
    assert rows_of(path) == sorted(oracle.values())
    logging.getLogger(__name__).info("100k CDC rows in %.1f s", elapsed)

    bench.run("-s", "current")
    assert rows_of(str(bench.target_path("current"))) == rows_of(path)
    offsets = [row for row in bench.offsets() if row["stream_name"] == "current__app_t"]
    assert offsets[-1]["from_version"] == before and offsets[-1]["to_version"] == before + 100


def test_background_flush_commits_on_its_interval_and_close_flushes_the_rest(tmp_path: Path) -> None:
    path = create_table(tmp_path, "events", PEOPLE)
    options = (
        RealtimeOptionsBuilder()
        .with_flush_mode(FlushMode.AUTO_FLUSH_BACKGROUND)
        .with_flush_interval(200)
        .with_mutation_buffer_lines_num(10_000)
        .build()
    )
    conn = connect(warehouse=tmp_path)
    stream = conn.get_realtime_stream("app", "events", options=options)
    for key in range(5):
        stream.apply(person(stream, RowOperator.INSERT, key, f"e{key}", key))
    deadline = time.monotonic() + 10
    while DeltaTable(path).version() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert DeltaTable(path).version() == 1, "the interval alone must commit the buffer"
    assert [row[0] for row in rows_of(path)] == [0, 1, 2, 3, 4]

    for key in range(5, 8):
        stream.apply(person(stream, RowOperator.INSERT, key, f"e{key}", key))
    conn.close()
    assert [row[0] for row in rows_of(path)] == list(range(8))
    assert stream.stats.commits == 2
    with pytest.raises(IngestError, match="closed"):
        stream.apply(person(stream, RowOperator.INSERT, 9, "late", 9))


def test_buffer_thresholds_by_rows_and_bytes(tmp_path: Path) -> None:
    path = create_table(tmp_path, "sized", PEOPLE)
    by_rows = RealtimeOptionsBuilder().with_flush_mode(FlushMode.AUTO_FLUSH_SYNC).with_mutation_buffer_lines_num(3)
    with connect(warehouse=tmp_path) as conn:
        stream = conn.get_realtime_stream("app", "sized", options=by_rows.build())
        for key in range(7):
            stream.apply(person(stream, RowOperator.INSERT, key, "x", 1))
        assert DeltaTable(path).version() == 2  # two full buffers of 3; the 7th row waits
    assert DeltaTable(path).version() == 3 and len(rows_of(path)) == 7

    by_bytes = by_rows.with_mutation_buffer_lines_num(1_000).with_mutation_buffer_space(2_000)
    with connect(warehouse=tmp_path) as conn:
        stream = conn.get_realtime_stream("app", "sized", options=by_bytes.build())
        for key in range(10):
            stream.apply(person(stream, RowOperator.INSERT, 100 + key, "y" * 500, 1))
        assert DeltaTable(path).version() > 3, "a buffer over with_mutation_buffer_space must flush"
    assert len(rows_of(path)) == 17


def test_manual_flush_commits_only_on_flush_and_bounds_its_buffers(tmp_path: Path) -> None:
    path = create_table(tmp_path, "manual", PEOPLE)
    options = (
        RealtimeOptionsBuilder()
        .with_flush_mode(FlushMode.MANUAL_FLUSH)
        .with_mutation_buffer_lines_num(2)
        .with_mutation_buffer_max_num(2)
        .build()
    )
    stream = connect(warehouse=tmp_path).get_realtime_stream("app", "manual", options=options)
    for key in range(4):
        stream.apply(person(stream, RowOperator.INSERT, key, "m", 1))
    assert DeltaTable(path).version() == 0
    with pytest.raises(IngestError, match=r"2 full buffers wait for flush\(\)"):
        stream.apply(person(stream, RowOperator.INSERT, 4, "m", 1))
    stream.flush()
    assert DeltaTable(path).version() == 2 and len(rows_of(path)) == 4
    stream.close()


class FailingOnce:
    """A commit conflict on the first attempt: raised before the write, or after it has committed
    (the write succeeded but its acknowledgement was lost)."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        method: str,
        after_write: bool,
        target: type = DeltaTarget,
        conflict: Exception | None = None,
    ) -> None:
        self.calls = 0
        original = getattr(target, method)
        error = conflict or CommitFailedError("Transaction conflict: a concurrent transaction wrote to the table")

        def flaky(instance: Any, *args: Any) -> None:
            self.calls += 1
            if self.calls == 1:
                if after_write:
                    original(instance, *args)
                raise error
            original(instance, *args)

        monkeypatch.setattr(target, method, flaky)


@pytest.mark.parametrize("after_write", [False, True], ids=["before_write", "after_write"])
@pytest.mark.parametrize("keyed", [False, True], ids=["append_only", "cdc"])
def test_commit_conflict_is_retried_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after_write: bool, keyed: bool
) -> None:
    path = create_table(tmp_path, "flaky", PEOPLE, key="id" if keyed else None)
    created = DeltaTable(path).version()
    failing = FailingOnce(monkeypatch, "apply_changes" if keyed else "append", after_write)
    operate = RealtimeOperation.CDC if keyed else RealtimeOperation.APPEND_ONLY
    operator = RowOperator.UPSERT if keyed else RowOperator.INSERT
    with connect(warehouse=tmp_path) as conn:
        stream = conn.get_realtime_stream("app", "flaky", operate=operate, options=sync(10, delay_ms=10))
        for key in range(25):
            stream.apply(person(stream, operator, key, f"r{key}", key))
    assert stream.stats.retries == 1 and failing.calls >= 2
    assert rows_of(path) == [(key, f"r{key}", key) for key in range(25)]
    assert DeltaTable(path).version() == created + 3, "three flushes, each committed exactly once"


def test_a_conflict_that_outlasts_the_retries_is_reported_and_writes_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = create_table(tmp_path, "doomed", PEOPLE)

    def always(target: Any, *args: Any) -> None:
        raise CommitFailedError("Transaction conflict")

    monkeypatch.setattr(DeltaTarget, "append", always)
    options = RealtimeOptionsBuilder().with_flush_mode(FlushMode.AUTO_FLUSH_SYNC).with_request_failed_retry_times(2)
    stream = connect(warehouse=tmp_path).get_realtime_stream(
        "app", "doomed", options=options.with_request_failed_retry_internal_ms(1).build()
    )
    stream.apply(person(stream, RowOperator.INSERT, 1, "a", 1))
    with pytest.raises(IngestError, match=r"app.doomed: a flush of 1 rows failed after 2 retries.*not committed"):
        stream.flush()
    assert DeltaTable(path).version() == 0


def test_bad_rows_are_refused_at_set_value_and_apply(tmp_path: Path) -> None:
    path = create_table(tmp_path, "typed", TYPED, key="id")
    keyed_people = create_table(tmp_path, "people", PEOPLE, key="id")
    plain_people = create_table(tmp_path, "plain", PEOPLE)
    conn = connect(warehouse=tmp_path)
    stream = conn.get_realtime_stream("app", "typed", operate=RealtimeOperation.CDC, options=sync())
    row = stream.create_row(RowOperator.UPSERT)
    refusals = [
        (("nope", 1), "app.typed has no column 'nope'; its columns: id, flag, small"),
        (("flag", 1), "column flag is BOOLEAN and takes a bool; got int 1"),
        (("small", 300), "column small is INT8 and takes ints from -128 to 127; got 300"),
        (("amount", 1.5), "column amount is DECIMAL(10,2) and takes a decimal.Decimal (or an int); got float"),
        (("amount", Decimal("1.234")), "keeps 2 decimal places"),
        (("amount", Decimal("123456789")), "at most 8 digits before the point"),
        (("day", datetime(2026, 1, 1)), "column day is DATE and takes a datetime.date"),
        (("at", datetime(2026, 1, 1)), "column at is TIMESTAMP (an instant) and takes a timezone-aware datetime"),
        (("local_at", datetime(2026, 1, 1, tzinfo=timezone.utc)), "TIMESTAMP_NTZ (no time zone) and takes a naive"),
        (("payload", "text"), "column payload is BINARY and takes bytes"),
        (("tags", ["a", 1]), "column tags is STRING and takes a str; got int 1"),
        (("attributes", {"a": "b"}), "INT64 and takes an int; got str 'b'"),
        (("address", {"city": "x", "street": "y"}), "has no field street"),
        (("id", None), "column id is NOT NULL (INT64) and cannot take None"),
    ]
    for (column, value), message in refusals:
        with pytest.raises(IngestError) as caught:
            row.set_value(column, value)
        assert message in str(caught.value), str(caught.value)
    assert row.values == {}, "a refused value must leave the row as it was"

    good = {
        "id": 1,
        "flag": True,
        "small": -5,
        "amount": Decimal("12.50"),
        "ratio": 3,
        "day": date(2026, 1, 2),
        "at": datetime(2026, 1, 2, 3, 4, tzinfo=timezone.utc),
        "local_at": datetime(2026, 1, 2, 3, 4),
        "payload": b"\x00\x01",
        "tags": ["a", "b"],
        "attributes": {"k": 1},
        "address": '{"city": "Oslo", "zip": 150}',
    }
    for column, value in good.items():
        row.set_value(column, value)
    unkeyed = stream.create_row(RowOperator.UPSERT).set_value("flag", False)
    with pytest.raises(IngestError, match="a UPSERT row needs its primary key column id set"):
        stream.apply(unkeyed)
    with pytest.raises(IngestError, match=r"a CDC stream takes RowOperator.UPSERT, RowOperator.DELETE_IGNORE rows"):
        stream.create_row(RowOperator.INSERT)
    assert DeltaTable(path).version() == 1, "refused rows write nothing"
    stream.apply(row)
    stream.close()
    stored = DeltaTable(path).to_pyarrow_table().to_pylist()
    assert stored[0]["amount"] == Decimal("12.50") and stored[0]["address"] == {"city": "Oslo", "zip": 150}
    assert stored[0]["ratio"] == 3.0 and stored[0]["attributes"] == [("k", 1)]

    with pytest.raises(IngestError, match=r"keyed tables take operate=RealtimeOperation\.CDC"):
        conn.get_realtime_stream("app", "people")
    with pytest.raises(IngestError, match=rf"needs a primary key.*{PRIMARY_KEY_PROPERTY}"):
        conn.get_realtime_stream("app", "plain", operate=RealtimeOperation.CDC)
    with pytest.raises(IngestError, match=r"differs from the table's tablestream\.primary_key"):
        conn.get_realtime_stream("app", "people", operate=RealtimeOperation.CDC, primary_key=["name"])
    with pytest.raises(IngestError, match=r"No table app\.missing in the warehouse .* does not create tables"):
        conn.get_realtime_stream("app", "missing")
    appender = conn.get_realtime_stream("app", "plain", options=sync())
    with pytest.raises(
        IngestError, match=r"APPEND_ONLY stream takes RowOperator\.INSERT rows.*operate=RealtimeOperation\.CDC"
    ):
        appender.create_row(RowOperator.UPSERT)
    with pytest.raises(IngestError, match="connect\\(\\) takes one of warehouse="):
        connect()
    with pytest.raises(IngestError, match="with_mutation_buffer_lines_num takes a positive integer"):
        RealtimeOptionsBuilder().with_mutation_buffer_lines_num(0).build()
    conn.close()
    assert DeltaTable(keyed_people).version() == 1 and DeltaTable(plain_people).version() == 0


def test_keyed_tables_flush_synchronously(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = create_table(tmp_path, "keyed", PEOPLE, key="id")
    background = (
        RealtimeOptionsBuilder().with_flush_mode(FlushMode.AUTO_FLUSH_BACKGROUND).with_mutation_buffer_lines_num(2)
    )
    with caplog.at_level(logging.WARNING, logger="dbt_tablestream.ingest"), connect(warehouse=tmp_path) as conn:
        stream = conn.get_realtime_stream("app", "keyed", operate=RealtimeOperation.CDC, options=background.build())
        assert stream.options.flush_mode is FlushMode.AUTO_FLUSH_SYNC
        stream.apply(person(stream, RowOperator.UPSERT, 1, "a", 1), person(stream, RowOperator.UPSERT, 2, "b", 2))
        assert DeltaTable(path).version() == 2, "the full buffer commits inside apply()"
    assert "reset to AUTO_FLUSH_SYNC" in caplog.text


OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["upsert", "delete", "flush"]), st.integers(0, 6), st.integers(0, 99)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, lines=st.integers(1, 5))
def test_cdc_writer_matches_applying_each_row_in_order(
    tmp_path_factory: pytest.TempPathFactory, operations: list, lines: int
) -> None:
    """Oracle: the rows applied one by one to a dict. Buffers, flushes and per-commit netting must
    not change the result, and every version the writer adds is one of its flushes."""
    warehouse = tmp_path_factory.mktemp("cdc")
    path = create_table(warehouse, "t", PEOPLE, key="id")
    oracle: dict[int, tuple[int, str, int]] = {}
    with connect(warehouse=warehouse) as conn:
        stream = conn.get_realtime_stream("app", "t", operate=RealtimeOperation.CDC, options=sync(lines))
        for kind, key, age in operations:
            if kind == "flush":
                stream.flush()
            elif kind == "upsert":
                stream.apply(person(stream, RowOperator.UPSERT, key, f"v{age}", age))
                oracle[key] = (key, f"v{age}", age)
            else:
                stream.apply(person(stream, RowOperator.DELETE_IGNORE, key))
                oracle.pop(key, None)
    assert rows_of(path) == sorted(oracle.values())
    # Versions 0 and 1 created the table and its key; every later one is one flush (a flush that
    # changes nothing, such as deleting absent keys, commits nothing).
    flushes = [entry for entry in DeltaTable(path).history() if entry["version"] > 1]
    assert len(flushes) <= stream.stats.commits
    assert all(entry.get("tablestream.ingest.writer") == stream.writer_id for entry in flushes)
    assert len(flushes) >= (1 if oracle else 0)


# ----- connect(spark=...): delta-spark on the shared local session -----------------------------


class ConcurrentAppendException(Exception):
    """Stands in for delta-spark's conflict as PySpark surfaces it (the class name in the text)."""


SPARK_CONFLICT = ConcurrentAppendException("[DELTA_CONCURRENT_APPEND] Files were added by a concurrent update.")


def catalog_tables(tmp_path: Path, *tables: tuple[str, pa.Schema, str | None]) -> Path:
    """Delta tables written by path with delta-rs in a fresh warehouse folder, registered in the
    shared session's catalog as `app.<name>`; the folder."""
    warehouse = tmp_path / "warehouse"
    relocate_schemas(warehouse, ("app",))
    for name, schema, key in tables:
        create_table(warehouse, name, schema, key)
    register_tables(warehouse)
    return warehouse


def operations(path: str, after: int) -> list[str]:
    return [entry["operation"] for entry in sorted(DeltaTable(path).history(), key=lambda e: e["version"])][after + 1 :]


def test_spark_writer_commits_each_flush_once_and_a_committed_retry_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """connect(spark=...) on delta-spark: one INSERT or MERGE per flush, each one Delta version with
    the writer's SetTransaction; the first flush of each stream commits and then reports a conflict,
    and its retry (same txnAppId and txnVersion) is skipped by Delta, so nothing is written twice."""
    spark = shared_spark()
    warehouse = catalog_tables(tmp_path, ("events", PEOPLE, None), ("people", PEOPLE, "id"))
    events, people = str(warehouse / "app.db" / "events"), str(warehouse / "app.db" / "people")
    events_created, people_created = DeltaTable(events).version(), DeltaTable(people).version()
    appends = FailingOnce(monkeypatch, "append", True, SparkTarget, SPARK_CONFLICT)
    merges = FailingOnce(monkeypatch, "apply_changes", True, SparkTarget, SPARK_CONFLICT)

    with connect(spark=spark) as conn:
        log = conn.get_realtime_stream("app", "events", options=sync(2, delay_ms=10))
        for key in range(5):
            log.apply(person(log, RowOperator.INSERT, key, f"n{key}", key))
        changes = conn.get_realtime_stream("app", "people", operate=RealtimeOperation.CDC, options=sync(delay_ms=10))
        for key in range(3):
            changes.apply(person(changes, RowOperator.UPSERT, key, f"p{key}", key))
        changes.flush()
        changes.apply(person(changes, RowOperator.UPSERT, 1, "p1", 10))
        changes.apply(person(changes, RowOperator.UPSERT, 1, "p1b", 11))  # the last change to a key wins
        changes.apply(person(changes, RowOperator.DELETE_IGNORE, 2))
        changes.apply(person(changes, RowOperator.DELETE_IGNORE, 9))  # absent: ignored
    assert appends.calls == 4 and merges.calls == 3, "the first flush of each stream was tried twice"
    assert log.stats.retries == 1 and log.stats.commits == 3
    assert changes.stats.retries == 1 and changes.stats.commits == 2

    assert rows_of(events) == [(key, f"n{key}", key) for key in range(5)], "the retried flush is not duplicated"
    assert DeltaTable(events).version() == events_created + 3, "one Delta version per flush"
    assert DeltaTable(events).transaction_version(log.writer_id) == 2
    assert rows_of(people) == [(0, "p0", 0), (1, "p1b", 11)]
    assert operations(people, people_created) == ["MERGE", "MERGE"], "one MERGE per flush"
    assert DeltaTable(people).transaction_version(changes.writer_id) == 1

    # Delta does not reset the txn settings after a write, and the writer does: a later statement
    # on the writer's session, or on the caller's, is not taken for a repeat of the last flush.
    assert isinstance(log.target, SparkTarget)
    log.target.spark.sql("insert into app.events values (100, 'writer session', 1)")
    spark.sql("insert into app.events values (101, 'caller session', 1)")
    assert DeltaTable(events).version() == events_created + 5
    for session in (log.target.spark, spark):
        assert session.conf.get(TXN_APP_ID, None) is None and session.conf.get(TXN_VERSION, None) is None


def test_spark_writer_skips_a_flush_whose_version_the_table_has_recorded(tmp_path: Path) -> None:
    """Delta's own check, without the stream's retry logic: the same (writer id, sequence) again,
    or an older sequence, commits nothing; a new writer id or a higher sequence commits."""
    warehouse = catalog_tables(tmp_path, ("events", PEOPLE, None))
    path = str(warehouse / "app.db" / "events")
    target = SparkTarget(shared_spark(), "app", "events")
    batch = pa.table({"id": pa.array([1], pa.int32()), "name": ["once"], "age": pa.array([1], pa.int32())})
    target.append(batch, "writer-a", 1)
    committed = DeltaTable(path).version()
    target.append(batch, "writer-a", 1)
    target.append(batch, "writer-a", 0)
    assert DeltaTable(path).version() == committed and rows_of(path) == [(1, "once", 1)]
    target.append(batch, "writer-a", 2)
    target.append(batch, "writer-b", 0)
    assert DeltaTable(path).version() == committed + 2 and len(rows_of(path)) == 3


def test_spark_writer_takes_every_type_as_delta_rs_reads_it(tmp_path: Path) -> None:
    """The Spark target's schema comes from the catalog (TIMESTAMP an instant, TIMESTAMP_NTZ not);
    a CDC row of every type goes in through a MERGE and reads back unchanged with delta-rs."""
    warehouse = catalog_tables(tmp_path, ("typed", TYPED, "id"))
    path = str(warehouse / "app.db" / "typed")
    values = {
        "id": 1,
        "flag": True,
        "small": -5,
        "amount": Decimal("12.50"),
        "ratio": 2.5,
        "day": date(2026, 1, 2),
        "at": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc),
        "local_at": datetime(2026, 1, 2, 3, 4, 5, 678901),
        "payload": b"\x00\x01",
        "tags": ["a", "b"],
        "attributes": {"k": 1},
        "address": {"city": "Oslo", "zip": 150},
    }
    with connect(spark=shared_spark()) as conn:
        stream = conn.get_realtime_stream("app", "typed", operate=RealtimeOperation.CDC, options=sync())
        with pytest.raises(IngestError, match="TIMESTAMP \\(an instant\\) and takes a timezone-aware datetime"):
            stream.create_row(RowOperator.UPSERT).set_value("at", datetime(2026, 1, 2))
        row = stream.create_row(RowOperator.UPSERT)
        for column, value in values.items():
            row.set_value(column, value)
        stream.apply(row, stream.create_row(RowOperator.UPSERT).set_value("id", 2))
        stream.flush()
        stream.apply(stream.create_row(RowOperator.DELETE_IGNORE).set_value("id", 2))
    stored = DeltaTable(path).to_pyarrow_table().to_pylist()
    assert len(stored) == 1
    assert {**stored[0], "at": stored[0]["at"].astimezone(timezone.utc)} == {**values, "attributes": [("k", 1)]}


class WithoutNewSession:
    """A session as Spark Connect offers it: everything but newSession()."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark

    def __getattr__(self, name: str) -> Any:
        if name == "newSession":
            raise AttributeError(name)
        return getattr(self._spark, name)


def test_spark_writer_without_new_session_writes_on_the_callers_session_and_resets_it(tmp_path: Path) -> None:
    """On a session without newSession() (Spark Connect) the writer commits on the caller's session,
    and a statement the caller runs after a flush is not skipped as a repeat of it."""
    warehouse = catalog_tables(tmp_path, ("events", PEOPLE, None))
    path = str(warehouse / "app.db" / "events")
    spark = shared_spark()
    with connect(spark=WithoutNewSession(spark)) as conn:
        stream = conn.get_realtime_stream("app", "events", options=sync())
        stream.apply(person(stream, RowOperator.INSERT, 1, "a", 1))
    assert isinstance(stream.target, SparkTarget) and stream.target.spark._spark is spark
    assert DeltaTable(path).transaction_version(stream.writer_id) == 0
    assert spark.conf.get(TXN_APP_ID, None) is None and spark.conf.get(TXN_VERSION, None) is None
    spark.sql("insert into app.events values (2, 'b', 2)")
    assert rows_of(path) == [(1, "a", 1), (2, "b", 2)]

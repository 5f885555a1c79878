"""The PySpark stream API (dbt_tablestream.streams): read without advancing, consume to advance,
fed by the realtime writer, on the same offsets log as the dbt materializations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from dbt_tablestream._offsets import stream_statuses
from dbt_tablestream.exceptions import StreamError
from dbt_tablestream.ingest import FlushMode, RealtimeOperation, RealtimeOptionsBuilder, RowOperator, connect
from dbt_tablestream.streams import open_stream
from tests.functional.local import register_tables, shared_spark
from tests.functional.streams import StreamBench, stream_model

SYNC = RealtimeOptionsBuilder().with_flush_mode(FlushMode.AUTO_FLUSH_SYNC).build()


def collected(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (row["__change_type"], row["__commit_version"], row["id"], row["name"], row["age"]) for row in frame.collect()
    )


def write_changes(bench: StreamBench, *changes: tuple[RowOperator, int, str, int]) -> None:
    """One commit through the realtime writer: upserts and deletes on the keyed source."""
    with connect(warehouse=bench.warehouse) as conn:
        stream = conn.get_realtime_stream("app", "t", operate=RealtimeOperation.CDC, primary_key=["id"], options=SYNC)
        for operator, key, name, age in changes:
            row = stream.create_row(operator).set_value("id", key)
            if operator is RowOperator.UPSERT:
                row.set_value("name", name).set_value("age", age)
            stream.apply(row)


def test_read_is_repeatable_and_only_a_committed_consume_advances(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model()})
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    register_tables(bench.warehouse)
    stream = open_stream(spark=shared_spark(), source="app.t", name="orders_sync", offsets_schema="analytics")
    created = bench.source().version()
    assert stream.offset == created and collected(stream.read()) == []

    write_changes(
        bench, (RowOperator.UPSERT, 4, "d", 4), (RowOperator.UPSERT, 1, "a", 10), (RowOperator.DELETE_IGNORE, 3, "", 0)
    )
    version = bench.source().version()
    expected = [
        ("DELETE", version, 3, "c", 3),
        ("INSERT", version, 4, "d", 4),
        ("UPDATE_AFTER", version, 1, "a", 10),
        ("UPDATE_BEFORE", version, 1, "a", 1),
    ]
    assert collected(stream.read()) == sorted(expected)
    assert collected(stream.read()) == sorted(expected), "read() must not advance"

    def failing_write(frame: Any) -> None:
        frame.count()
        raise RuntimeError("the target write failed")

    with pytest.raises(RuntimeError, match="the target write failed"):
        stream.consume(failing_write)
    with pytest.raises(RuntimeError, match="failed inside the block"), stream.consume() as window:
        window.dataframe.count()
        raise RuntimeError("failed inside the block")
    assert collected(stream.read()) == sorted(expected), "a failed consume must leave the changes pending"
    assert stream.offset == created

    with stream.consume() as window:
        assert (window.after, window.through) == (created, version)
        assert window.append_to("analytics.orders_log") == 4
    assert collected(stream.read()) == []
    assert stream.offset == version
    logged = DeltaTable(str(bench.target_path("orders_log"))).to_pyarrow_table().to_pylist()
    assert sorted((row["__change_type"], row["id"]) for row in logged) == sorted((e[0], e[2]) for e in expected)

    write_changes(bench, (RowOperator.UPSERT, 5, "e", 5))
    assert collected(stream.consume(lambda frame: frame)) == [("INSERT", version + 1, 5, "e", 5)]
    assert collected(stream.read()) == []


@pytest.mark.extended
def test_python_and_dbt_streams_share_the_offsets_log(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model()})
    bench.create_source([(1, "a", 1)])
    bench.run("-s", "log")
    stream = open_stream(
        spark=shared_spark(), source="app.t", name="py_sync", offsets_schema="analytics", mode="append_only"
    )
    write_changes(bench, (RowOperator.UPSERT, 1, "a", 2), (RowOperator.UPSERT, 7, "g", 7))
    assert [row[0] for row in collected(stream.read())] == ["INSERT"], "append_only sees inserts only"
    statuses = {status["stream_name"]: status for status in stream_statuses(bench.warehouse, "analytics")}
    assert {"log__app_t", "py_sync"} <= set(statuses)
    assert statuses["py_sync"]["stream_mode"] == "append_only" and statuses["py_sync"]["lag_versions"] == 1
    stream.consume(lambda frame: frame.count())
    statuses = {status["stream_name"]: status for status in stream_statuses(bench.warehouse, "analytics")}
    assert statuses["py_sync"]["lag_versions"] == 0 and statuses["log__app_t"]["lag_versions"] == 1
    bench.run("-s", "log")
    assert {s["stream_name"]: s["lag_versions"] for s in stream_statuses(bench.warehouse, "analytics")} == {
        "log__app_t": 0,
        "py_sync": 0,
    }

    # The dbt operation moves a Python stream too: skip the next change.
    write_changes(bench, (RowOperator.UPSERT, 8, "h", 8))
    latest = bench.source().version()
    bench.run_ok(
        "run-operation", "dbt_tablestream.reset_stream", "--args", f"{{stream_name: py_sync, to_version: {latest}}}"
    )
    assert collected(stream.read()) == []
    write_changes(bench, (RowOperator.UPSERT, 9, "i", 9))
    assert [row[2] for row in collected(stream.read())] == [9]


def test_a_committed_append_is_not_applied_twice_after_a_crash(tmp_path: Path) -> None:
    """The write committed but the process died before the offset moved: the target's marker
    says the window is applied, so the next consume does not write it again."""
    bench = StreamBench(tmp_path, {"log": stream_model()})
    bench.create_source([(1, "a", 1)])
    register_tables(bench.warehouse)
    open_kwargs: dict[str, Any] = {
        "spark": shared_spark(),
        "source": "app.t",
        "name": "crashy",
        "offsets_schema": "analytics",
        "target": "analytics.crash_log",
    }
    stream = open_stream(**open_kwargs)
    write_changes(bench, (RowOperator.UPSERT, 2, "b", 2))
    with pytest.raises(SystemExit), stream.consume() as window:
        window.append_to("analytics.crash_log")
        raise SystemExit("killed between the write and the offset")
    assert len(DeltaTable(str(bench.target_path("crash_log"))).to_pyarrow_table()) == 1

    reopened = open_stream(**open_kwargs)
    assert collected(reopened.read()) == []
    write_changes(bench, (RowOperator.UPSERT, 3, "c", 3))
    with reopened.consume() as window:
        assert window.append_to("analytics.crash_log") == 1
    ids = sorted(row["id"] for row in DeltaTable(str(bench.target_path("crash_log"))).to_pyarrow_table().to_pylist())
    assert ids == [2, 3]


def test_bad_stream_arguments_and_a_stale_source_are_refused(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model()})
    bench.create_source([(1, "a", 1)])
    register_tables(bench.warehouse)
    common: dict[str, Any] = {"spark": shared_spark(), "offsets_schema": "analytics"}
    with pytest.raises(
        StreamError, match=r"Stream s: invalid stream_mode 'upsert'\. Accepted values: standard, append_only"
    ):
        open_stream(source="app.t", name="s", mode="upsert", **common)
    with pytest.raises(StreamError, match=r"qualified `schema\.table`"):
        open_stream(source="t", name="s", **common)
    with pytest.raises(
        StreamError, match=r"Stream s: invalid start_at 'snapshot'\. Accepted values: latest, earliest, \{version: N\}"
    ):
        open_stream(source="app.t", name="s", start_at="snapshot", **common)
    with pytest.raises(StreamError, match=r"the source app\.missing does not exist"):
        open_stream(source="app.missing", name="s", **common)
    assert not (bench.warehouse / "analytics.db" / "tablestream_offsets").exists(), "refusals write nothing"

    stream = open_stream(source="app.t", name="recreated", **common)
    bench.create_source([(9, "z", 9)], name="t2")
    import shutil

    shutil.rmtree(bench.source_path())
    bench.create_source([(1, "a", 1)])
    bench.append([(2, "b", 2)])
    offsets_before = bench.offsets()
    with pytest.raises(
        StreamError, match=r"Stream recreated: the source app.t was dropped and recreated.*tablestream reset recreated"
    ):
        stream.read()
    assert bench.offsets() == offsets_before

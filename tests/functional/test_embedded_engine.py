"""The embedded engine end to end: real Delta tables (delta-rs), real Spark, real dbt."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from dbt_tablestream.embedded import CommitMarker, MergeSpec, merge_table, write_table
from dbt_tablestream.embedded._arrow import read_all
from tests.functional.dbt_project_helper import DbtProject

CDF = {"delta.enableChangeDataFeed": "true"}


def orders(ids: list[int], amount: float = 10.0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "status": pa.array([f"s{i}" for i in ids], pa.string()),
            "amount": pa.array([amount * i for i in ids], pa.float64()),
        }
    )


def build_history(path: str) -> DeltaTable:
    """Inserts, an update, a delete and a merge: every change type Delta records."""
    write_deltalake(path, orders([1, 2, 3]), configuration=CDF)
    table = DeltaTable(path)
    table.update(updates={"amount": "amount + 1"}, predicate="id = 1")
    table.delete("id = 3")
    source = orders([2, 4], amount=7.0)
    table.merge(
        source, "s.id = t.id", source_alias="s", target_alias="t"
    ).when_matched_update_all().when_not_matched_insert_all().execute()
    write_deltalake(path, orders([5]), mode="append")
    return DeltaTable(path)


def plain(value: object) -> object:
    """Compare instants, not representations: delta-rs gives zone-less UTC, Spark zone-aware UTC."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def sorted_rows(table: pa.Table) -> list[tuple]:
    names = sorted(table.column_names)
    rows = table.select(names).to_pylist()
    return sorted(tuple(plain(row[name]) for name in names) for row in rows)


@pytest.mark.parametrize("start,end", [(0, 4), (1, 3), (2, 2), (3, None)])
def test_table_changes_equals_load_cdf(engine, tablestream_warehouse: Path, start: int, end: int | None) -> None:
    path = tablestream_warehouse / "cdf_probe.db" / f"orders_{start}_{end}"
    table = build_history(str(path))
    expected = read_all(
        table.load_cdf(starting_version=start, ending_version=end if end is not None else table.version())
    )
    engine.catalog.sync()
    end_sql = "" if end is None else f", {end}"
    got = engine.sql(f"SELECT * FROM table_changes('cdf_probe.orders_{start}_{end}', {start}{end_sql})").toArrow()
    assert got.column_names == ["id", "status", "amount", "_change_type", "_commit_version", "_commit_timestamp"]
    assert expected.num_rows > 0
    assert sorted_rows(got) == sorted_rows(expected.select(got.column_names))
    change_types = set(got.column("_change_type").to_pylist())
    if (start, end) == (0, 4):
        assert change_types == {"insert", "update_preimage", "update_postimage", "delete"}


@pytest.mark.parametrize("local_bytes", [0, 1 << 30], ids=["data_source", "local_relation"])
def test_stream_window_reads_the_same_rows_either_way(
    engine, tablestream_warehouse: Path, monkeypatch: pytest.MonkeyPatch, local_bytes: int
) -> None:
    """A small window is read once into a local relation, a large one per query by the data source."""
    from dbt_tablestream.embedded import _engine

    name = f"window_probe_{local_bytes}"
    table = build_history(str(tablestream_warehouse / "cdf_probe.db" / name))
    expected = read_all(table.load_cdf(starting_version=1, ending_version=table.version()))
    monkeypatch.setattr(_engine, "LOCAL_WINDOW_BYTES", local_bytes)
    engine.catalog.sync()
    view = f"__window_{name}"
    directive = {
        "op": "stream_window",
        "schema": "cdf_probe",
        "name": name,
        "source": f"cdf_probe.{name}",
        "stream": f"probe_{name}",
        "view": view,
        "kind": "changes",
        "after": 0,
        "through": table.version(),
        "table_id": table.metadata().id,
        "timestamp": None,
    }
    engine.run_directive(directive, "")
    frame = engine.spark.table(view)
    uses_data_source = "tablestream_window" in frame._jdf.queryExecution().analyzed().toString().lower()
    assert uses_data_source == (local_bytes == 0)
    got = frame.toArrow()
    assert got.num_rows == expected.num_rows > 0
    assert sorted_rows(got) == sorted_rows(expected.select(got.column_names))
    assert str(got.schema.field("_commit_timestamp").type) == "timestamp[us, tz=UTC]"


def test_table_changes_by_path(engine, tmp_path: Path) -> None:
    path = tmp_path / "by_path"
    table = build_history(str(path))
    got = engine.sql(f"SELECT * FROM table_changes('{path.as_posix()}', 1, 2)").toArrow()
    expected = read_all(table.load_cdf(starting_version=1, ending_version=2))
    assert sorted_rows(got) == sorted_rows(expected.select(got.column_names))


def test_write_carries_set_transaction_and_commit_info(tmp_path: Path) -> None:
    path = str(tmp_path / "marked")
    marker = CommitMarker(app_id="stream-x", version=7, metadata={"stream": "x", "to": "7"})
    version = write_table(path, orders([1, 2]), "overwrite", marker=marker)
    table = DeltaTable(path)
    assert table.version() == version == 0
    assert table.transaction_version("stream-x") == 7
    last = table.history(1)[0]
    assert last["stream"] == "x" and last["to"] == "7"


def test_merge_is_one_commit_with_marker(tmp_path: Path) -> None:
    path = str(tmp_path / "merged")
    write_table(path, orders([1, 2, 3]), "overwrite")
    source = orders([2, 9], amount=100.0)
    merge_table(path, source, MergeSpec(keys=["id"]), marker=CommitMarker("stream-m", 3, {"stream": "m"}))
    table = DeltaTable(path)
    assert table.version() == 1
    assert table.transaction_version("stream-m") == 3
    assert table.history(1)[0]["operation"] == "MERGE"
    rows = {row["id"]: row["amount"] for row in table.to_pyarrow_table().to_pylist()}
    assert rows == {1: 10.0, 2: 200.0, 3: 30.0, 9: 900.0}


def test_append_casts_to_the_table_schema(tmp_path: Path) -> None:
    path = str(tmp_path / "appended")
    write_table(path, orders([1]), "overwrite")
    loose = pa.table({"a": pa.array([2], pa.int32()), "b": ["x"], "c": pa.array([1], pa.int32())})
    write_table(path, loose, "append")
    table = DeltaTable(path).to_pyarrow_table()
    assert table.schema.names == ["id", "status", "amount"]
    assert sorted(table.column("id").to_pylist()) == [1, 2]


def test_external_delta_table_is_a_relation_for_models_and_tests(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    write_deltalake(str(warehouse / "app.db" / "orders"), orders([1, 2, 3]), configuration=CDF)
    project = DbtProject(
        tmp_path / "project",
        warehouse,
        models={
            "sources.yml": (
                "version: 2\nsources:\n  - name: app\n    tables:\n      - name: orders\n"
                "        columns:\n          - name: id\n            data_tests: [unique, not_null]\n"
            ),
            "order_totals.sql": (
                "{{ config(materialized='table') }}\n"
                "select count(*) as orders, sum(amount) as amount from {{ source('app', 'orders') }}"
            ),
            "schema.yml": (
                "version: 2\nmodels:\n  - name: order_totals\n    columns:\n"
                "      - name: orders\n        data_tests:\n          - accepted_values:\n"
                "              arguments:\n                values: [3]\n                quote: false\n"
            ),
        },
    )
    project.run_ok("run")
    results = project.run_ok("test").result
    assert len(results) == 3 and all(r.status == "pass" for r in results)
    built = DeltaTable(str(warehouse / "analytics.db" / "order_totals")).to_pyarrow_table().to_pylist()
    assert built == [{"orders": 3, "amount": 60.0}]

    # An append by another writer between invocations is visible to the next one.
    write_deltalake(str(warehouse / "app.db" / "orders"), orders([4]), mode="append")
    project.run_ok("run")
    built = DeltaTable(str(warehouse / "analytics.db" / "order_totals")).to_pyarrow_table().to_pylist()
    assert built == [{"orders": 4, "amount": 100.0}]


def test_second_invocation_sees_every_relation_of_the_first(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    project = DbtProject(
        tmp_path / "project",
        warehouse,
        seeds={"people.csv": "id,name,joined\n1,ann,2024-01-01\n2,bob's,\n3,,2024-03-01\n"},
        models={
            "people_table.sql": "{{ config(materialized='table') }} select * from {{ ref('people') }}",
            "people_view.sql": "{{ config(materialized='view') }} select id, name from {{ ref('people_table') }}",
            "people_inc.sql": (
                "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}\n"
                "select id, upper(name) as name from {{ ref('people_view') }}"
            ),
            "people_eph.sql": "{{ config(materialized='ephemeral') }} select id from {{ ref('people_inc') }}",
            "people_count.sql": "{{ config(materialized='table') }} select count(*) as n from {{ ref('people_eph') }}",
        },
    )
    debug = project.run_ok("debug")
    assert debug.result is True
    project.run_ok("seed")
    project.run_ok("run")
    # A new invocation lists relations afresh from the warehouse; everything is there.
    listed = project.run_ok("ls", "--resource-type", "model", "--output", "name").result
    assert set(listed) >= {"people_table", "people_view", "people_inc", "people_count"}
    shown = project.run_ok("show", "--inline", "select * from analytics.people_view order by id", "--limit", "10")
    assert shown.result.results[0].agate_table.rows[1]["name"] == "bob's"
    project.run_ok("run")  # incremental merge on the second run
    inc = DeltaTable(str(warehouse / "analytics.db" / "people_inc"))
    assert inc.version() == 1
    assert sorted(r["id"] for r in inc.to_pyarrow_table().to_pylist()) == [1, 2, 3]
    count = DeltaTable(str(warehouse / "analytics.db" / "people_count")).to_pyarrow_table().to_pylist()
    assert count == [{"n": 3}]
    seed = DeltaTable(str(warehouse / "analytics.db" / "people")).to_pyarrow_table()
    assert seed.schema.field("joined").type == pa.date32()
    assert (warehouse / "analytics.db" / "people_view.view.sql").is_file()

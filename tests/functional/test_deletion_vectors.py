"""Deletion vectors on a stream's source, its stream_merge targets (merged, and written by replacing
a window's keys) and the offsets log: the realtime writer (delta-rs) keeps rows Spark deleted by a
vector deleted, the runs stay exact, and
`tablestream status` and `pending` read the log with delta-rs's query engine (its pyarrow readers
refuse such tables)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from deltalake import DeltaTable, write_deltalake

from dbt_tablestream.cli import main as tablestream
from dbt_tablestream.ingest import PRIMARY_KEY_PROPERTY, RealtimeOperation, RowOperator, connect
from tests.functional.local import shared_spark
from tests.functional.streams import CDF, StreamBench, commit_adds_vectors, people
from tests.functional.test_ingest import person, sync

DEFAULT_DVS = "spark.databricks.delta.properties.defaults.enableDeletionVectors"
# Every table this model's run creates (its target, the offsets log) gets deletion vectors. Its
# windows are merged (merge_write merge): the write's choice sees vectors only in the model's
# tblproperties, and would rewrite this one-file target from itself.
MODEL = (
    f"{{{{ config(materialized='stream_merge', unique_key='id', merge_write='merge', pre_hook='set {DEFAULT_DVS} = true', "
    f"post_hook='reset {DEFAULT_DVS}') }}}}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
)
# The same target written by replacing each window's keys (merge_write replace_where): its DELETE
# marks the replaced rows in the files' vectors.
REPLACED = MODEL.replace("merge_write='merge'", "merge_write='replace_where'")


def spark_rows(table: str) -> Counter[tuple[int, str, int]]:
    return Counter(tuple(row) for row in shared_spark().sql(f"select id, name, age from {table}").collect())


def has_deletion_vectors(path: str) -> bool:
    return "deletionVectors" in (DeltaTable(path).protocol().reader_features or [])


def test_deletion_vectors_keep_the_writer_the_runs_and_the_cli_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = StreamBench(tmp_path, {"current": MODEL, "replaced": REPLACED})
    source = bench.source_path()
    write_deltalake(
        source,
        people([(i, f"n{i}", i) for i in range(10)]),
        configuration={**CDF, "delta.enableDeletionVectors": "true"},
    )
    DeltaTable(source).alter.set_table_properties({PRIMARY_KEY_PROPERTY: "id"}, raise_if_not_exists=False)
    bench.run()
    target = str(bench.target_path("current"))
    offsets = str(bench.warehouse / "analytics.db" / "tablestream_offsets")
    assert has_deletion_vectors(target) and has_deletion_vectors(offsets) and has_deletion_vectors(source)

    # Spark deletes by a vector; then the writer (delta-rs) rewrites that file with a MERGE.
    shared_spark().sql("delete from app.t where id = 3")
    assert "DeletionVectorsAdded" in str(DeltaTable(source).history(1)[0]["operationMetrics"])
    with connect(warehouse=bench.warehouse) as conn:
        stream = conn.get_realtime_stream("app", "t", operate=RealtimeOperation.CDC, options=sync(10))
        stream.apply(person(stream, RowOperator.UPSERT, 4, "four", 40))
        stream.apply(person(stream, RowOperator.UPSERT, 20, "twenty", 20))
        stream.apply(person(stream, RowOperator.DELETE_IGNORE, 5))
    expected = Counter({(i, f"n{i}", i): 1 for i in range(10) if i not in (3, 4, 5)})
    expected.update({(4, "four", 40): 1, (20, "twenty", 20): 1})
    assert spark_rows("app.t") == expected

    bench.run()
    assert spark_rows("analytics.current") == expected
    assert "DeletionVectorsAdded" in str(DeltaTable(target).history(1)[0]["operationMetrics"])
    assert spark_rows("analytics.replaced") == expected
    replaced = DeltaTable(str(bench.target_path("replaced")))
    assert has_deletion_vectors(str(bench.target_path("replaced")))
    assert replaced.history(1)[0]["operation"] == "WRITE"
    assert commit_adds_vectors(bench.target_path("replaced"), replaced.version())

    root = str(bench.project.root)
    capsys.readouterr()
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert len(entries) == 2
    for entry in entries:
        assert entry["to_version"] == DeltaTable(source).version() and entry["lag_versions"] == 0
    assert tablestream(["pending", "--project-dir", root, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []

"""The data files a log read reads by their paths (delta_log_file_reads_sql): each file is scanned
once however many commits of the window added or removed it, and its rows come out once for each
of them, with that commit's side, version and time. The rendered select runs here on real Parquet
files; the functional tests (tests/functional/test_delta_log_read.py) read whole histories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.spark_sql.render import SparkRenderer

pytestmark = pytest.mark.spark_sql

COLUMNS = [{"name": "id", "dtype": "bigint"}, {"name": "status", "dtype": "string"}]
FILES = {"a": [(1, "new"), (2, "new")], "b": [(1, "new"), (2, "paid")], "c": [(1, "new")]}


def write_file(spark: Any, table: Path, name: str, rows: list[tuple[int, str]]) -> dict[str, Any]:
    written = table / f"_{name}"
    spark.createDataFrame(rows, "id bigint, status string").coalesce(1).write.parquet(str(written))
    (part,) = written.glob("part-*.parquet")
    part.rename(table / f"{name}.parquet")
    counted = {"numRecords": len(rows), "nullCount": {"id": 0, "status": 0}}
    return {"name": f"{name}.parquet", "path": f"{name}.parquet", "partition": {}, "stats": counted}


def test_a_file_two_commits_read_is_scanned_once_and_its_rows_tagged_with_each(
    renderer: SparkRenderer, spark: Any, tmp_path: Path
) -> None:
    table = tmp_path / "t"
    table.mkdir()
    files = {name: write_file(spark, table, name, rows) for name, rows in FILES.items()}
    # Version 7 (an UPDATE) rewrote a as b, version 8 (a DELETE) rewrote b as c.
    commits = [{"version": 7, "millis": 1_700_000_000_007}, {"version": 8, "millis": 1_700_000_000_008}]
    reads = [
        {"file": files["a"], "side": "delete", "commit": commits[0]},
        {"file": files["b"], "side": "insert", "commit": commits[0]},
        {"file": files["b"], "side": "delete", "commit": commits[1]},
        {"file": files["c"], "side": "insert", "commit": commits[1]},
    ]
    source_files = {"location": str(table), "partition_columns": [], "column_mapping": "none", "type_widening": False}
    model = renderer.model("orders_changes")
    selects = [str(select) for select in model.call("delta_log_file_reads_sql", source_files, reads, COLUMNS, {})]
    assert len(selects) == 1, selects
    assert selects[0].count("parquet.`") == 1 and "{a.parquet,b.parquet,c.parquet}" in selects[0], selects[0]
    got = sorted(
        (row["id"], row["status"], row["_change_type"], row["_commit_version"], row["_commit_timestamp"].microsecond)
        for row in spark.sql(selects[0]).collect()
    )
    assert got == sorted(
        (id, status, read["side"], read["commit"]["version"], read["commit"]["millis"] % 1000 * 1000)
        for read in reads
        for id, status in FILES[read["file"]["name"][0]]
    )

    # One commit and side needs no join: its select carries them as literals.
    (alone,) = model.call("delta_log_file_reads_sql", source_files, reads[:1], COLUMNS, {})
    assert "join" not in str(alone) and "'delete' as _change_type, cast(7 as bigint)" in str(alone), alone
    assert model.call("delta_log_file_reads_sql", source_files, [], COLUMNS, {}) == []

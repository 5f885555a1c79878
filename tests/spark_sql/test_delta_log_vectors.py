"""A commit that changed a file's deletion vector (removed and added it again under one path) is
read by row position (delta_log_vector_changes_sql): its deletes always, its inserts only where the
vector may have shrunk. Functional tests read the DELETE, UPDATE and MERGE cases on real tables
(tests/functional/test_delta_log_read.py), and a RESTORE, the one statement of delta-spark that
shrinks a vector; the other side's cases are checked here on the rendered SQL, and Spark's parser
accepts every part. A file without a vector on a side is
read by its path (its footer described at compile time), on real tables only."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.spark_sql.render import SparkRenderer

pytestmark = pytest.mark.spark_sql

PATH = "part-00000-a.snappy.parquet"


def vector_commit(
    operation: str, deleted_before: int, deleted_after: int, read_versions: tuple[int, int] = (6, 7)
) -> dict[str, Any]:
    def file(deleted_rows: int, stats: dict[str, Any], read_version: int) -> dict[str, Any]:
        return {
            "name": PATH,
            "path": PATH,
            "partition": {},
            "stats": stats,
            "deletion_vector": deleted_rows > 0,
            "deleted_rows": deleted_rows,
            "read_version": read_version,
        }

    bounds = {"numRecords": 10, "minValues": {"order_id": 1}, "maxValues": {"order_id": 10}}
    return {
        "version": 7,
        "operation": operation,
        "millis": 1_700_000_000_000,
        "removes": [file(deleted_before, {"numRecords": 10}, read_versions[0])],
        "adds": [file(deleted_after, bounds, read_versions[1])],
    }


@pytest.mark.parametrize(
    ("operation", "deleted_before", "deleted_after", "sides", "read_versions"),
    [
        ("DELETE", 1, 2, ["delete"], (6, 7)),
        ("UPDATE", 2, 3, ["delete"], (6, 7)),
        ("MERGE", 1, 4, ["delete"], (6, 7)),
        ("UPDATE", 3, 2, ["delete", "insert"], (6, 7)),
        ("WRITE", 1, 2, ["delete", "insert"], (6, 7)),
        ("RESTORE", 3, 1, ["delete", "insert"], (6, 7)),
        # No other commit of the window acts on the file: it is read as of the window's ends.
        ("DELETE", 1, 2, ["delete"], (3, 9)),
        ("WRITE", 1, 2, ["delete", "insert"], (3, 9)),
    ],
)
def test_a_vector_change_reads_deletes_by_row_position_and_inserts_where_the_vector_may_have_shrunk(
    renderer: SparkRenderer,
    spark: Any,
    operation: str,
    deleted_before: int,
    deleted_after: int,
    sides: list[str],
    read_versions: tuple[int, int],
) -> None:
    model = renderer.model("orders_changes")
    stream = {"files": {"location": "/lake/t", "partition_columns": [], "column_mapping": "none"}}
    commit = vector_commit(operation, deleted_before, deleted_after, read_versions)
    parts = [
        str(part)
        for part in model.call(
            "delta_log_vector_changes_sql", model.source, stream, commit, [PATH], model.source_columns
        )
    ]
    assert [part.split("'")[1] for part in parts] == sides, parts
    parser = spark._jsparkSession.sessionState().sqlParser()
    for part, side in zip(parts, sides, strict=True):
        held_side, lost_side = part.split("left anti join")
        held, lost = read_versions if side == "delete" else read_versions[::-1]
        # A file with a deletion vector on both sides travels in time on both, narrowed by the added
        # file's statistics: the removed file's record keeps only its row count.
        for text, version in ((held_side, held), (lost_side, lost)):
            assert re.search(rf"version as of {version}\s+where", text), part
            assert "`order_id` between 1 and 10" in text, part
        parser.parsePlan(part)


def test_a_file_whose_statistics_count_every_data_column_is_not_described(renderer: SparkRenderer) -> None:
    """A file read by its path needs its own columns. Its statistics prove them where they count
    NULLs for every data column (partition columns are not in the file): then no DESCRIBE of its
    footer. A column not counted (the file was written before it was added, or it is past the
    columns Delta collects statistics for), no statistics, or a table that may have widened a
    type (or whose features are unknown) leave it to the DESCRIBE."""
    model = renderer.model("orders_changes")
    columns = model.source_columns
    names = [column.name for column in columns]
    assert len(names) >= 3, names
    files = {"location": "/lake/t", "partition_columns": [names[-1]], "column_mapping": "none", "type_widening": False}
    counted = {name.upper(): 0 for name in names[:-1]}

    def proven(source_files: dict[str, Any], stats: dict[str, Any]) -> Any:
        file = {"name": PATH, "path": PATH, "partition": {}, "stats": stats}
        return model.call("_delta_log_file_columns_from_statistics", source_files, file, columns)

    schema = proven(files, {"numRecords": 3, "nullCount": counted})
    assert [column["name"] for column in schema] == names[:-1]
    assert [column["dtype"] for column in schema] == [column.dtype for column in columns[:-1]]
    assert proven(files, {"numRecords": 3, "nullCount": dict(list(counted.items())[1:])}) is None
    assert proven(files, {"numRecords": 3}) is None
    assert proven(files, {}) is None
    assert proven({**files, "type_widening": True}, {"nullCount": counted}) is None
    assert (
        proven({key: value for key, value in files.items() if key != "type_widening"}, {"nullCount": counted}) is None
    )
    # A struct may have gained a nested field since the file was written: its footer tells.
    nested = [{"name": "id", "dtype": "bigint"}, {"name": "address", "dtype": "struct<city:string>"}]
    file = {"name": PATH, "path": PATH, "partition": {}, "stats": {"nullCount": {"id": 0, "address": {"city": 0}}}}
    assert model.call("_delta_log_file_columns_from_statistics", files, file, nested) is None
    flat = [{"name": "id", "dtype": "bigint"}, {"name": "city", "dtype": "string"}]
    file = {"name": PATH, "path": PATH, "partition": {}, "stats": {"nullCount": {"id": 0, "city": 0}}}
    assert model.call("_delta_log_file_columns_from_statistics", {**files, "partition_columns": []}, file, flat) == flat


@pytest.mark.parametrize(
    ("features", "properties", "widening"),
    [
        (["appendOnly", "typeWidening"], {}, True),
        ('["appendOnly","typeWidening-preview"]', {}, True),
        ('["appendOnly","invariants"]', {}, False),
        (None, {}, False),
        (None, {"delta.enableTypeWidening": "true"}, True),
    ],
)
def test_a_source_that_may_have_widened_a_type_is_known_by_its_features_or_property(
    renderer: SparkRenderer, features: Any, properties: dict[str, str], widening: bool
) -> None:
    model = renderer.model("orders_changes")
    detail = {"format": "delta", "id": "t-1", "location": "/lake/t", "partitionColumns": [], "tableFeatures": features}
    state = model.call(
        "_stream_source_state_of", "s", "app.t", detail, {"version": 3, "timestamp": "t"}, properties, []
    )
    assert state["files"]["type_widening"] is widening


def decoded_vector_commit(version: int, before: list[int], after: list[int]) -> dict[str, Any]:
    """A DELETE of `version` that grew the decoded vector of one file from `before` to `after`."""

    def file(positions: list[int]) -> dict[str, Any]:
        return {
            "name": PATH,
            "path": PATH,
            "partition": {},
            "stats": {"numRecords": 10, "nullCount": {}},
            "deletion_vector": bool(positions),
            "deleted_rows": len(positions),
            "read_version": version,
            "positions": positions,
        }

    return {
        "version": version,
        "operation": "DELETE",
        "millis": 1_700_000_000_000 + version,
        "removes": [file(before)],
        "adds": [file(after)],
    }


@pytest.mark.parametrize(
    ("second_before", "scans"),
    [
        # The second commit deletes other rows of the file: one scan, each row's version by its position.
        ([1, 2], 1),
        # A row deleted, brought back, and deleted again: one position of the file for two commits.
        ([], 2),
    ],
    ids=["disjoint_positions", "one_position_twice"],
)
def test_a_file_several_commits_changed_by_vector_is_scanned_once_for_all_of_them(
    renderer: SparkRenderer, spark: Any, second_before: list[int], scans: int
) -> None:
    model = renderer.model("orders_changes")
    columns = model.source_columns
    counted = {column.name: 0 for column in columns}
    files = {"location": "/lake/t", "partition_columns": [], "column_mapping": "none", "type_widening": False}
    commits = [decoded_vector_commit(7, [], [1, 2]), decoded_vector_commit(8, second_before, [1, 2, 5])]
    for commit in commits:
        for entry in commit["removes"] + commit["adds"]:
            entry["stats"]["nullCount"] = counted
    direct = model.call("_delta_log_direct_reads")
    read = model.call("delta_log_vector_position_reads_sql", {"files": files}, commits, columns, direct)
    selects = [str(select) for select in read["selects"]]
    assert {version: list(paths) for version, paths in read["paths_left"].items()} == {7: [], 8: []}
    assert len(selects) == scans, selects
    parser = spark._jsparkSession.sessionState().sqlParser()
    for select in selects:
        parser.parsePlan(select)
        assert f"from parquet.`/lake/t/{PATH}`" in select, select
    if scans == 1:
        # Rows 1 and 2 are version 7's deletes, row 5 version 8's; the CASE picks by position.
        assert re.search(r"row_index in \(1, 2\)\)\s+then 7\s+else 8 end", selects[0]), selects[0]
        assert "when 7 then 1700000000007 when 8 then 1700000000008" in selects[0], selects[0]
    else:
        assert ["cast(7 as bigint)" in selects[0], "cast(8 as bigint)" in selects[1]] == [True, True], selects

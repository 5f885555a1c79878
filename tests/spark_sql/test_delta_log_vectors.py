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

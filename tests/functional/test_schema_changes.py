"""A window that spans a schema change is read in parts, each with its own schema: a run ends
before the change, the next starts at it, and each part is applied under on_schema_change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench

MIRROR = (
    "{{ config(materialized='stream_merge', unique_key='id', on_schema_change='append_new_columns') }}\n"
    "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
)
# The same stream under on_schema_change 'fail', and a change log under the default 'ignore'.
STRICT = MIRROR.replace("append_new_columns", "fail")
LOG = "{{ config(materialized='table_stream') }}\nselect * from {{ dbt_tablestream.source_stream('app', 't') }}"


def mirror_rows(bench: StreamBench) -> set[tuple[Any, ...]]:
    rows = DeltaTable(str(bench.target_path("mirror"))).to_pyarrow_table().to_pylist()
    return {tuple(sorted(row.items())) for row in rows}


def rows(*entries: dict[str, Any]) -> set[tuple[Any, ...]]:
    return {tuple(sorted(entry.items())) for entry in entries}


def summary_of(bench: StreamBench) -> str:
    logged: list[str] = []
    result = bench.invoke("run", "-s", "mirror", callbacks=[lambda event: logged.append(str(event.info.msg))])
    assert result.success, logged[-20:]
    (line,) = [line for line in logged if line.startswith("stream mirror__app_t: window")]
    return line


@pytest.mark.extended
def test_a_column_added_then_renamed_is_applied_part_by_part(tmp_path: Path) -> None:
    audit = "select * from {{ dbt_tablestream.changes(source('app', 't'), 2) }}"
    bench = StreamBench(tmp_path, {"mirror": MIRROR, "audit": audit, "strict": STRICT, "log": LOG})
    spark = shared_spark()
    spark.sql(
        "create table app.t (id int, name string, age int) using delta tblproperties ("
        "'delta.enableChangeDataFeed' = 'true', 'delta.columnMapping.mode' = 'name',"
        " 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
    )
    spark.sql("insert into app.t values (1, 'a', 1), (2, 'b', 2)")  # version 1
    bench.run("-s", "mirror", "strict", "log")
    spark.sql("insert into app.t values (3, 'c', 3)")  # 2
    spark.sql("alter table app.t add columns (email string)")  # 3
    spark.sql("insert into app.t values (4, 'd', 4, 'd@x')")  # 4
    spark.sql("update app.t set email = 'a@x' where id = 1")  # 5
    spark.sql("alter table app.t rename column name to full_name")  # 6
    spark.sql("insert into app.t values (5, 'e', 5, 'e@x')")  # 7
    spark.sql("update app.t set full_name = 'B' where id = 2")  # 8

    summary = summary_of(bench)
    assert "window (1, 2]" in summary and "before the schema change ADD COLUMNS at version 3" in summary, summary
    assert mirror_rows(bench) == rows(
        {"id": 1, "name": "a", "age": 1}, {"id": 2, "name": "b", "age": 2}, {"id": 3, "name": "c", "age": 3}
    )

    bench.run("-s", "strict", "log")  # (1, 2], as the mirror

    # A part that starts at a schema change its on_schema_change cannot apply is refused, with the
    # change's version and the columns; the default 'ignore' leaves an added column out.
    bench.refused("strict", "the window starts at the schema change ADD COLUMNS at version 3", "added: email", "'fail'")
    bench.run("-s", "log")

    summary = summary_of(bench)
    assert "window (2, 5]" in summary and "before the schema change RENAME COLUMN at version 6" in summary, summary
    assert mirror_rows(bench) == rows(
        {"id": 1, "name": "a", "age": 1, "email": "a@x"},
        {"id": 2, "name": "b", "age": 2, "email": None},
        {"id": 3, "name": "c", "age": 3, "email": None},
        {"id": 4, "name": "d", "age": 4, "email": "d@x"},
    )

    bench.refused(
        "log",
        "the schema change RENAME COLUMN at version 6 of app.t",
        "no longer has (name; new in the output: full_name, email)",
        "append_new_columns",
    )

    summary = summary_of(bench)
    assert "window (5, 8]" in summary and "behind" not in summary, summary
    assert mirror_rows(bench) == rows(
        {"id": 1, "name": "a", "age": 1, "email": "a@x", "full_name": None},
        {"id": 2, "name": "b", "age": 2, "email": None, "full_name": "B"},
        {"id": 3, "name": "c", "age": 3, "email": None, "full_name": None},
        {"id": 4, "name": "d", "age": 4, "email": "d@x", "full_name": None},
        {"id": 5, "name": None, "age": 5, "email": "e@x", "full_name": "e"},
    )

    # A change query cannot read across the rename.
    bench.refused(
        "audit",
        "changes(app.t, 2, latest)",
        "spans the schema change RENAME COLUMN at version 6",
        "Read versions 2 to 5 and 6 to 8",
    )

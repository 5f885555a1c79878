"""A stream_view's netting of a window's change feed (stream_view_net_rows_sql) run by Spark over
change rows of every kind of column an input may hold: a row changed and changed back nets to
nothing, an update's images net to one removed and one added row, a VARIANT value (which Spark
cannot group by) and a map among them."""

from __future__ import annotations

from typing import Any

import pytest

from dbt_tablestream._macros import render

pytestmark = pytest.mark.spark_sql

COLUMNS = [
    {"name": "id", "dtype": "int"},
    {"name": "doc", "dtype": "variant"},
    {"name": "tags", "dtype": "map<string,int>"},
    {"name": "nested", "dtype": "struct<inner:variant>"},
]
# (id, doc's JSON, tags, _change_type): id 1 inserted then deleted (nets to nothing); id 2 updated
# (its images net apart); id 3 updated to an equal value, written again (a carry-over: nothing).
CHANGES = [
    (1, '{"a": 1}', "map('x', 1)", "insert"),
    (1, '{"a": 1}', "map('x', 1)", "delete"),
    (2, '{"a": 2}', "map('x', 2)", "update_preimage"),
    (2, '{"a": [2, 3]}', "map('x', 2, 'y', 3)", "update_postimage"),
    (3, '{"b": true}', "map('z', 0)", "update_preimage"),
    (3, '{"b": true}', "map('z', 0)", "update_postimage"),
]


def test_a_window_with_variant_and_map_columns_nets_per_whole_row(spark: Any) -> None:
    rows = " union all ".join(
        f"select {key} as id, parse_json('{doc}') as doc, {tags} as tags, "
        f"named_struct('inner', parse_json('{doc}')) as nested, '{kind}' as _change_type"
        for key, doc, tags, kind in CHANGES
    )
    spark.sql(f"create or replace temp view view_net_changes as {rows}")
    netted = render("stream_view_net_rows_sql", "view_net_changes", COLUMNS)
    found = {
        (row["id"], row["doc"], tuple(sorted(row["tags"].items())), row["__tablestream_net"])
        for row in spark.sql(
            f"select id, to_json(doc) as doc, tags, __tablestream_net from ({netted}) where __tablestream_net <> 0"
        ).collect()
    }
    assert found == {
        (2, '{"a":2}', (("x", 2),), -1),
        (2, '{"a":[2,3]}', (("x", 2), ("y", 3)), 1),
    }

"""Which selects a stream_view keeps, as _stream_view_shape_problem reads them from Spark's own
plan (EXPLAIN EXTENDED, Spark 4.2 with delta-spark 4.4): each row of docs/stream-view.md's table
"The queries it keeps", kept or refused with what it names."""

from __future__ import annotations

from typing import Any

import pytest

from dbt_tablestream._macros import render

pytestmark = pytest.mark.spark_sql

TABLES = {
    "f": "id int, c_id int, amount int, ts int, tags array<string>",
    "c": "c_id int, segment string, region_id int",
    "r": "region_id int, region string",
    "elsewhere": "c_id int",
}
INPUTS = ["view_shape.f", "view_shape.c", "view_shape.r"]

KEPT = {
    "inner joins, a dimension's dimension": (
        "id",
        "select f.id, c.segment, r.region from view_shape.f f join view_shape.c c on f.c_id = c.c_id "
        "join view_shape.r r on c.region_id = r.region_id",
    ),
    "a join on a range": ("id", "select f.id from view_shape.f f join view_shape.c c on f.c_id between c.c_id and 9"),
    "left joins": (
        "id",
        "select f.id, c.segment from view_shape.f f left join view_shape.c c on f.c_id = c.c_id "
        "left join view_shape.r r on c.region_id = r.region_id",
    ),
    "filters and expressions": (
        "id",
        "select f.id, case when f.amount > 10 then 'big' else 'small' end as size, coalesce(c.segment, 'none') s, "
        "f.amount * 2 + 1 as twice from view_shape.f f join view_shape.c c on f.c_id = c.c_id where f.amount > 0",
    ),
    "group by": (
        "segment",
        "select c.segment, count(*) n, sum(f.amount) s, avg(f.amount) a, min(f.amount) lo, max(f.ts) hi "
        "from view_shape.f f join view_shape.c c on f.c_id = c.c_id group by c.segment",
    ),
    "group by, then a filter on the group key": (
        "segment",
        "select * from (select c.segment, count(*) n from view_shape.f f join view_shape.c c on f.c_id = c.c_id "
        "group by c.segment) where segment <> 'x'",
    ),
    "an aggregated input joined on its group key": (
        "id",
        "select f.id, a.n from view_shape.f f join (select c_id, count(*) n from view_shape.f group by c_id) a "
        "on f.c_id = a.c_id",
    ),
    "the latest row per key": (
        "c_id",
        "select c_id, id, amount from (select f.*, row_number() over (partition by f.c_id order by f.ts desc) rn "
        "from view_shape.f f) where rn = 1",
    ),
    "the latest row per key with qualify": (
        "c_id",
        "select f.c_id, f.id from view_shape.f f qualify row_number() over (partition by f.c_id order by f.ts desc) = 1",
    ),
    "a window's value by key": (
        "c_id",
        "select distinct c_id, sum(amount) over (partition by c_id) total from view_shape.f",
    ),
    "an IN subquery": ("id", "select f.id from view_shape.f f where f.c_id in (select c_id from view_shape.c)"),
    "an EXISTS subquery": (
        "id",
        "select f.id from view_shape.f f where exists (select 1 from view_shape.c c where c.c_id = f.c_id)",
    ),
    "union all": ("id", "select id from view_shape.f union all select c_id as id from view_shape.c"),
    "distinct": ("c_id", "select distinct c_id from view_shape.f"),
    "explode": ("id", "select f.id, tag from view_shape.f f lateral view explode(f.tags) t as tag"),
    "a CTE": (
        "id",
        "with big as (select * from view_shape.f where amount > 10) select big.id, c.segment from big "
        "join view_shape.c c on big.c_id = c.c_id",
    ),
}

REFUSED = {
    "having": (
        "segment",
        "select c.segment, count(*) n from view_shape.f f join view_shape.c c on f.c_id = c.c_id "
        "group by c.segment having count(*) > 1",
        "filters on a value an aggregate or a window function computes",
    ),
    "a filter on an aggregate in an outer select": (
        "c_id",
        "select * from (select c_id, count(*) n from view_shape.f group by c_id) where n > 1",
        "filters on a value an aggregate or a window function computes",
    ),
    "a join on an aggregate's value": (
        "id",
        "select f.id from view_shape.f f join (select c_id, count(*) n from view_shape.f group by c_id) a "
        "on f.amount = a.n",
        "joins on a value an aggregate or a window function computes",
    ),
    "the second row per key": (
        "c_id",
        "select c_id, id from (select f.*, row_number() over (partition by f.c_id order by f.ts desc) rn "
        "from view_shape.f f) where rn = 2",
        "filters on a value an aggregate or a window function computes",
    ),
    "a window partitioned by another column": (
        "id",
        "select id, sum(amount) over (partition by c_id) total from view_shape.f",
        "partitioned by c_id, not by its unique_key (id)",
    ),
    "grouping by an aggregate's value": (
        "n",
        "select n, count(*) k from (select c_id, count(*) n from view_shape.f group by c_id) group by n",
        "groups or partitions by a value an aggregate or a window function computes",
    ),
    "a right join": (
        "id",
        "select f.id from view_shape.c c right join view_shape.f f on f.c_id = c.c_id",
        "RightOuter join",
    ),
    "a full join": (
        "id",
        "select f.id from view_shape.f f full join view_shape.c c on f.c_id = c.c_id",
        "FullOuter join",
    ),
    "not exists": (
        "id",
        "select f.id from view_shape.f f where not exists (select 1 from view_shape.c c where c.c_id = f.c_id)",
        "LeftAnti join",
    ),
    "limit": ("id", "select id from view_shape.f order by id limit 3", "LIMIT keeps rows by their position"),
    "except": ("id", "select id from view_shape.f except select c_id from view_shape.c", "which a run cannot apply"),
    "a scalar subquery": (
        "id",
        "select f.id from view_shape.f f where f.amount > (select avg(amount) from view_shape.f)",
        "subquery in an expression",
    ),
    "rand()": ("id", "select id, rand() r from view_shape.f", "it calls rand()"),
    "current_date()": (
        "id",
        "select id from view_shape.f where ts < datediff(current_date(), date'2020-01-01')",
        "it calls current_date()",
    ),
    "first()": ("c_id", "select c_id, first(id) f from view_shape.f group by c_id", "it calls first()"),
    "collect_list()": (
        "c_id",
        "select c_id, collect_list(id) ids from view_shape.f group by c_id",
        "it calls collect_list()",
    ),
    "a table not read through source() or ref()": (
        "id",
        "select f.id from view_shape.f f join view_shape.elsewhere e on f.c_id = e.c_id",
        "reads the table spark_catalog.view_shape.elsewhere other than through source() or ref()",
    ),
}


@pytest.fixture(scope="module")
def shape_tables(spark: Any) -> Any:
    spark.sql("create schema if not exists view_shape")
    for name, columns in TABLES.items():
        spark.sql(f"create table if not exists view_shape.{name} ({columns}) using delta")
    return spark


def problem(spark: Any, key: str, select: str) -> str | None:
    explained = spark.sql("explain extended " + select).collect()[0][0]
    found: str | None = render("_stream_view_shape_problem", explained, [key], INPUTS)
    return found


@pytest.mark.parametrize("shape", list(KEPT))
def test_a_kept_shape_passes_the_check(shape_tables: Any, shape: str) -> None:
    key, select = KEPT[shape]
    assert problem(shape_tables, key, select) is None


@pytest.mark.parametrize("shape", list(REFUSED))
def test_a_refused_shape_is_named(shape_tables: Any, shape: str) -> None:
    key, select, named = REFUSED[shape]
    found = problem(shape_tables, key, select)
    assert found is not None and named in found, found


# The kept shapes whose keys do not only grow with their inputs' rows: a left join's NULL-extended
# row leaves when a match arrives (docs/architecture.md, "Views"), so their keys are listed exactly.
OUTER_JOINED = {"left joins"}


@pytest.mark.parametrize("shape", list(KEPT))
def test_a_kept_shape_without_an_outer_join_is_listed_by_one_select_per_changed_read(
    shape_tables: Any, shape: str
) -> None:
    _, select = KEPT[shape]
    explained = shape_tables.sql("explain extended " + select).collect()[0][0]
    assert render("_stream_view_grows_with_inputs", explained) is (shape not in OUTER_JOINED)

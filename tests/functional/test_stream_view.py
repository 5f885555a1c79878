"""stream_view: a select over several tables, joins included, kept up to date from their streams.
After every run the target equals the model's select over its inputs as of the versions the run
pinned (the offsets log's), recomputed here by Spark; refusals write nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.local import shared_spark, sql_path
from tests.functional.streams import StreamBench

FACT = "create table app.f (id int, c_id int, amount int, ts int) using delta location '{path}'"
CUSTOMERS = "create table app.c (c_id int, segment string, region_id int) using delta location '{path}'"
REGIONS = "create table app.r (region_id int, region string) using delta location '{path}'"
TABLES = {"f": FACT, "c": CUSTOMERS, "r": REGIONS}
FEED = " tblproperties (delta.enableChangeDataFeed = true)"

# Each view's select, with {f}, {c} and {r} for its reads: dbt's source() in the model, a
# table as of a version in the oracle.
VIEWS = {
    "keyed_inner": (
        "id",
        "select f.id, f.amount, c.segment, r.region\n"
        "from {f} as f\n"
        "join {c} as c on f.c_id = c.c_id\n"
        "join {r} as r on c.region_id = r.region_id\n"
        "where f.amount > 0",
    ),
    "keyed_left": (
        "id",
        "select f.id, f.amount, c.segment, r.region\n"
        "from {f} f\n"
        "left join {c} c on f.c_id = c.c_id\n"
        "left join {r} on c.region_id = r.region_id",
    ),
    "by_segment": (
        "segment",
        "select coalesce(c.segment, 'none') as segment, count(*) as orders, sum(f.amount) as amount,\n"
        "  avg(f.amount) as mean, min(f.amount) as smallest, max(f.ts) as latest\n"
        "from {f} as f join {c} as c on f.c_id = c.c_id\n"
        "group by coalesce(c.segment, 'none')",
    ),
    "latest_per_customer": (
        "c_id",
        "select c_id, id, amount, ts from (\n"
        "  select f.*, row_number() over (partition by f.c_id order by f.ts desc, f.id desc) as rn\n"
        "  from {f} as f where f.c_id is not null\n"
        ") where rn = 1",
    ),
}


def view_model(name: str) -> str:
    key, select = VIEWS[name]
    reads = {table: "{{ source('app', '" + table + "') }}" for table in TABLES}
    return f"{{{{ config(materialized='stream_view', unique_key='{key}') }}}}\n" + select.format(**reads)


def view_bench(
    tmp_path: Path, views: tuple[str, ...] = tuple(VIEWS), project_vars: dict[str, Any] | None = None
) -> StreamBench:
    bench = StreamBench(
        tmp_path, {name: view_model(name) for name in views}, sources=tuple(TABLES), project_vars=project_vars
    )
    spark = shared_spark()
    for table, statement in TABLES.items():
        spark.sql(statement.format(path=sql_path(Path(bench.source_path(table)))) + FEED)
    return bench


def sql(statement: str) -> None:
    shared_spark().sql(statement)


def pinned_versions(bench: StreamBench, view: str) -> dict[str, int]:
    """Each input's version as of the view's last run: its stream's latest offsets row."""
    pinned = {}
    for row in bench.offsets():
        if row["stream_name"].startswith(f"{view}__app_"):
            pinned[row["stream_name"].removeprefix(f"{view}__app_")] = row["to_version"]
    return pinned


def recomputed(bench: StreamBench, view: str) -> Counter[tuple[Any, ...]]:
    """The view's select over its inputs as of the versions its last run pinned."""
    _, select = VIEWS[view]
    versions = pinned_versions(bench, view)
    reads = {table: f"app.{table} version as of {versions.get(table, 0)}" for table in TABLES}
    rows = shared_spark().sql(select.format(**reads)).collect()
    return Counter(tuple(row) for row in rows)


def target(view: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in shared_spark().sql(f"select * from analytics.{view}").collect())


def assert_views_kept(bench: StreamBench, views: tuple[str, ...]) -> None:
    for view in views:
        assert target(view) == recomputed(bench, view), view


# A fixed scenario the property test (test_stream_view_properties.py) covers with 48 new histories
# in every CI run: in the opt-in scenarios tier, which CI runs in its slices (tests/opt_in_slices.py).
@pytest.mark.scenarios
def test_views_follow_their_inputs_through_updates_of_join_and_group_keys_and_deletes(tmp_path: Path) -> None:
    bench = view_bench(tmp_path)
    sql("insert into app.r values (1, 'north'), (2, 'south')")
    sql("insert into app.c values (1, 'retail', 1), (2, 'retail', 2), (3, 'b2b', null)")
    sql("insert into app.f values (1, 1, 10, 1), (2, 1, 20, 2), (3, 2, 30, 3), (4, 3, 40, 4), (5, null, 50, 5)")
    bench.run()
    assert_views_kept(bench, tuple(VIEWS))

    sql("update app.r set region = 'north-east' where region_id = 1")  # a dimension's dimension
    sql("update app.c set segment = 'b2b' where c_id = 1")  # a group key moves
    sql("update app.f set c_id = 2 where id = 2")  # a join key moves
    sql("delete from app.f where id = 4")
    sql("insert into app.f values (6, 3, 60, 6), (7, 4, 70, 7)")  # 7 joins a customer not yet there
    bench.run()
    assert_views_kept(bench, tuple(VIEWS))

    sql("insert into app.c values (4, 'new', 2)")  # the fact row 7 now joins
    sql("update app.c set region_id = 2 where c_id = 3")  # starts matching the left join
    sql("delete from app.r where region_id = 1")
    sql("update app.f set amount = 0 where id = 1")  # leaves the filtered view
    bench.run()
    assert_views_kept(bench, tuple(VIEWS))

    bench.run()  # nothing changed: every view's window is empty
    assert_views_kept(bench, tuple(VIEWS))


def lose_offsets_rows(bench: StreamBench, view: str) -> None:
    """What a run killed after its target commit and before its offsets rows leaves under the
    reapply protocol (docs/architecture.md, "Views"): its last offsets rows (one INSERT wrote them)
    missing, and its scratch table of change rows, which a run drops after its offsets rows, still
    there (its rows do not matter: a run only looks for it)."""
    last = max(row["committed_at"] for row in bench.offsets() if row["stream_name"].startswith(f"{view}__"))
    offsets = sql_path(bench.warehouse / "analytics.db" / "tablestream_offsets")
    sql(
        f"delete from delta.`{offsets}` where startswith(stream_name, '{view}__')"
        f" and committed_at = timestamp'{last.isoformat(sep=' ')}'"
    )
    assert max(row["committed_at"] for row in bench.offsets() if row["stream_name"].startswith(f"{view}__")) < last
    sql(f"create table analytics.{view}__tablestream_changes (lost int) using delta")


REBUILT = "CREATE OR REPLACE TABLE AS SELECT"  # a rebuild's commit (_stream_view_rebuild)


def last_operation(bench: StreamBench, view: str) -> str:
    return str(DeltaTable(str(bench.target_path(view))).history(1)[0]["operation"])


def test_a_run_lost_after_its_commit_on_a_sql_warehouse_is_followed_by_a_rebuild(tmp_path: Path) -> None:
    """Under the reapply protocol a run whose offsets rows a crash lost would be applied again by the
    next run, from the older position over a longer window, where a change the lost window made and
    the next window undid nets to nothing, yet the target holds it. The next run finds the lost
    run's scratch table and rebuilds the view; the run after it applies its window."""
    bench = view_bench(tmp_path, ("keyed_inner",), {"tablestream_commit_protocol": "reapply"})
    sql("insert into app.r values (1, 'north'), (2, 'south')")
    sql("insert into app.c values (1, 'retail', 1), (2, 'retail', 2)")
    sql("insert into app.f values (1, 1, 10, 1), (2, 2, 20, 2)")
    bench.run()
    assert_views_kept(bench, ("keyed_inner",))

    sql("update app.r set region = 'west' where region_id = 1")
    sql("update app.c set segment = 'b2b' where c_id = 2")
    bench.run()
    lose_offsets_rows(bench, "keyed_inner")

    sql("update app.r set region = 'north' where region_id = 1")  # undoes the lost window's change
    sql("update app.c set segment = 'retail' where c_id = 2")
    bench.run()
    assert_views_kept(bench, ("keyed_inner",))
    assert not bench.target_path("keyed_inner__tablestream_changes").exists()
    assert last_operation(bench, "keyed_inner") == REBUILT

    sql("update app.f set amount = 30 where id = 2")
    bench.run()
    assert_views_kept(bench, ("keyed_inner",))
    assert last_operation(bench, "keyed_inner") != REBUILT


REFUSED = {
    "having": (
        "{{ config(materialized='stream_view', unique_key='segment') }}\n"
        "select c.segment, count(*) as n from {{ source('app', 'f') }} f join {{ source('app', 'c') }} c\n"
        "on f.c_id = c.c_id group by c.segment having count(*) > 1",
        (
            "stream_view having: a run cannot keep this select up to date",
            "filters on a value an aggregate",
            "Nothing was written",
        ),
    ),
    "no_key": (
        "{{ config(materialized='stream_view') }}\nselect f.id from {{ source('app', 'f') }} f",
        ("is a stream_view model and needs unique_key", "Nothing was written"),
    ),
    "repeated_key": (
        "{{ config(materialized='stream_view', unique_key='c_id') }}\n"
        "select f.c_id, f.amount from {{ source('app', 'f') }} f where f.c_id is not null",
        ("keys have more than one row in its select, for example", "must identify each row", "Nothing was written"),
    ),
    "unfed": (
        "{{ config(materialized='stream_view', unique_key='id') }}\n"
        "select f.id, u.c_id from {{ source('app', 'f') }} f join {{ source('app', 'unfed') }} u on f.c_id = u.c_id",
        ("the change data feed is not enabled on the source app.unfed", "enable_change_tracking"),
    ),
    "late_start": (
        "{{ config(materialized='stream_view', unique_key='id', start_at='latest') }}\n"
        "select f.id from {{ source('app', 'f') }} f",
        ("start_at latest would keep only the changes after it", "Nothing was written"),
    ),
    "time_travel": (
        "{{ config(materialized='stream_view', unique_key='id') }}\n"
        "select f.id from {{ source('app', 'f') }} version as of 1 f",
        ("reads", "with its own time travel", "Nothing was written"),
    ),
}


# In the extended tier (about 60 s): the default suite must stay within 30 minutes, and its spark_sql
# tier holds the shape check to every refused select (tests/spark_sql/test_view_shape.py).
@pytest.mark.extended
def test_a_view_it_cannot_keep_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {name: model for name, (model, _) in REFUSED.items()},
        sources=(*TABLES, "unfed"),
    )
    spark = shared_spark()
    for table, statement in TABLES.items():
        spark.sql(statement.format(path=sql_path(Path(bench.source_path(table)))) + FEED)
    spark.sql(f"create table app.unfed (c_id int) using delta location '{sql_path(Path(bench.source_path('unfed')))}'")
    sql("insert into app.c values (1, 'retail', 1)")
    sql("insert into app.f values (1, 1, 10, 1), (2, 1, 20, 2)")
    for name, (_, fragments) in REFUSED.items():
        bench.refused(name, *fragments)
        assert not bench.target_path(name).exists(), name
    for scratch in ("keys", "changes"):
        assert not (bench.warehouse / "analytics.db" / f"repeated_key__tablestream_{scratch}").exists()

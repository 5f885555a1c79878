"""A stream_aggregate on the Thrift profile (stock dbt-spark `method: thrift` against the local
cluster): after its first build and after each of two windows applied by its MERGE, the target
equals the model's GROUP BY computed by the cluster over the source (docs/stream-aggregate.md,
"The contract"). The conformance suite's `orders_totals` runs on this profile only in the
scenarios tier (test_thrift_conformance.py)."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

import pytest

from tests.cluster.local_cluster import LocalCluster
from tests.cluster.thrift_project import project

pytestmark = pytest.mark.extended

AGGREGATES = (
    "{'items': 'count(*)', 'priced': 'count(amount)', 'total': 'sum(amount)', 'mean': 'avg(amount)',"
    " 'low': 'min(amount)', 'high': 'max(amount)', 'mean_price': 'avg(price)'}"
)
# A Thrift cursor describes amount as INT_TYPE and price as DECIMAL_TYPE, without the precision and
# scale its exact average (decimal(14, 6)) is kept in; the model's types come from DESCRIBE QUERY.
GROUPED = "select id % 2 as parity, band, amount, cast(amount / 3 as decimal(10, 2)) as price"
TOTALS = (
    f"{{{{ config(materialized='stream_aggregate', group_by=['parity', 'band'], aggregates={AGGREGATES}) }}}}\n"
    f"{GROUPED}, __change_type from {{{{ dbt_tablestream.source_stream('app', 't') }}}}"
)


def check_totals(cluster: LocalCluster, schema: str) -> None:
    """The target's groups are the GROUP BY over the source, NULL keys and NULL values included."""
    target = cluster.sql(f"select parity, band, items, priced, total, mean, low, high, mean_price from {schema}.totals")
    grouped = cluster.sql(
        "select parity, band, count(*), count(amount), sum(amount), avg(amount), min(amount), max(amount), avg(price)"
        f" from ({GROUPED} from {schema}_app.t) as rows_now group by parity, band"
    )
    assert Counter(target) == Counter(grouped), (
        f"only in the target: {sorted(Counter(target) - Counter(grouped), key=str)};"
        f" only in the GROUP BY: {sorted(Counter(grouped) - Counter(target), key=str)}"
    )


def test_a_stream_aggregate_equals_its_group_by_after_each_window(tmp_path: Path, thrift_cluster: LocalCluster) -> None:
    schema = f"t{uuid.uuid4().hex[:8]}"
    source = f"{schema}_app.t"
    thrift_cluster.sql(f"create schema {schema}_app")
    thrift_cluster.sql(
        f"create table {source} (id int, band string, amount int) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    thrift_cluster.sql(
        f"insert into {source} values (1, 'a', 10), (2, 'a', 20), (3, 'b', 30), (4, 'b', 40), (5, null, 50),"
        " (6, 'c', null), (7, 'c', 70), (11, 'c', 75)"
    )
    dbt = project(tmp_path, thrift_cluster, schema, {"totals": TOTALS})
    dbt.run_ok("run")
    check_totals(thrift_cluster, schema)
    windows = [
        # Within a group (its only extreme), across groups (3 leaves (1, b) empty for (1, a)), a new
        # least value, a NULL value becoming a number.
        [
            f"update {source} set amount = 15 where id = 1",
            f"update {source} set band = 'a' where id = 3",
            f"insert into {source} values (9, 'a', 5)",
            f"update {source} set amount = 60 where id = 6",
        ],
        # A delete that empties (0, b); the least of (1, a) and the greatest of (1, c) removed; a row
        # moved into the NULL group (0, NULL).
        [
            f"delete from {source} where id = 4",
            f"delete from {source} where id = 9",
            f"delete from {source} where id = 11",
            f"update {source} set band = null where id = 2",
        ],
    ]
    for statements in windows:
        for statement in statements:
            thrift_cluster.sql(statement)
        dbt.run_ok("run")
        # The window was applied by the model's MERGE, not by a rebuild.
        assert "MERGE" in thrift_cluster.sql(f"describe history {schema}.totals limit 1")[0]
        check_totals(thrift_cluster, schema)
    groups = {row[:2] for row in thrift_cluster.sql(f"select parity, band from {schema}.totals")}
    assert (0, "b") not in groups and (1, "b") not in groups and (0, None) in groups

"""A stream's target is a plain Delta table: raw INSERT, UPDATE, DELETE, MERGE and DROP on it behave
as on a copy that no stream ever wrote, their commits carry no stream marker, and the stream goes on
from its own offset afterwards (a dropped target is rebuilt from a snapshot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench, stream_model

pytestmark = pytest.mark.scenarios

MODELS = {
    "current": (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        "select id, name, age, __change_type, __commit_version from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    "log": stream_model(),
}
STATEMENTS = [
    ("WRITE", "insert into {table} select * from {table} where id = 1"),
    ("UPDATE", "update {table} set name = upper(name) where id = 2"),
    ("DELETE", "delete from {table} where id = 3"),
    (
        "MERGE",
        "merge into {table} as t using (select * from {table} where id = 2) as s on t.id = s.id "
        "when matched then update set t.age = s.age + 100",
    ),
]


def rows(table: str) -> list[tuple[object, ...]]:
    return sorted(tuple(row) for row in shared_spark().sql(f"select * from {table}").collect())


def latest_commit(table: str) -> tuple[str, str | None]:
    entry = shared_spark().sql(f"describe history {table} limit 1").collect()[0]
    return entry["operation"], entry["userMetadata"]


@pytest.mark.parametrize("model", sorted(MODELS))
def test_raw_dml_on_a_stream_target_behaves_as_on_plain_delta(tmp_path: Path, model: str) -> None:
    bench = StreamBench(tmp_path, {model: MODELS[model]})
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run("-s", model)
    target, plain = f"analytics.{model}", f"analytics.plain_{model}"
    shared_spark().sql(f"create table {plain} using delta as select * from {target}")
    for operation, statement in STATEMENTS:
        for table in (target, plain):
            shared_spark().sql(statement.format(table=table))
        assert rows(target) == rows(plain), operation
        assert latest_commit(target) == latest_commit(plain) == (operation, None), operation

    # The stream goes on from its own offset: the next window lands on what the statements left.
    before = rows(target)
    bench.append([(4, "d", 4)])
    bench.run("-s", model)
    added = sorted(set(rows(target)) - set(before))
    assert [row[:3] for row in added] == [(4, "d", 4)]
    assert len(rows(target)) == len(before) + 1

    for table in (target, plain):
        shared_spark().sql(f"drop table {table}")
    listed = {row.tableName for row in shared_spark().sql("show tables in analytics").collect()}
    assert not {model, f"plain_{model}"} & listed
    assert not bench.target_path(model).exists(), "DROP TABLE of a managed stream target removes its files"

    bench.run("-s", model)  # a dropped target is rebuilt from a snapshot of the source
    assert sorted(row[:3] for row in rows(target)) == [(1, "a", 1), (2, "b", 2), (3, "c", 3), (4, "d", 4)]

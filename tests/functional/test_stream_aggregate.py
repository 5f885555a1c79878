"""stream_aggregate: a GROUP BY kept up to date from a stream, checked against the GROUP BY itself
computed from the source after every run, and its refusals (docs/stream-aggregate.md)."""

from __future__ import annotations

from collections import Counter
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from deltalake import DeltaTable

from tests.functional.streams import StreamBench

AGGREGATES = (
    "{'people': 'count(*)', 'aged': 'count(age)', 'total_age': 'sum(age)', 'mean_age': 'avg(age)',"
    " 'youngest': 'min(age)', 'oldest': 'max(age)', 'first_name': 'min(name)', 'last_name': 'max(name)',"
    " 'total_amount': 'sum(amount)', 'mean_amount': 'avg(amount)'}"
)
# Two group columns, one NULL for a NULL age; a filter that an update can move a row in or out of.
TOTALS = (
    f"{{{{ config(materialized='stream_aggregate', group_by=['parity', 'band'], aggregates={AGGREGATES}) }}}}\n"
    "select id % 2 as parity, case when age >= 50 then 'old' when age is not null then 'young' end as band,\n"
    "  age, name, cast(age as decimal(10, 2)) / 4 as amount, __change_type\n"
    "from {{ dbt_tablestream.source_stream('app', 't') }}\n"
    "where name <> 'test'"
)
# The same with a binary group column: a type with no literal, so the groups read again are found
# through the target and read by a semi join (spark__stream_aggregate_merge_sql).
TOTALS_BINARY = TOTALS.replace("end as band", "end as binary) as band").replace(
    "case when age >= 50", "cast(case when age >= 50"
)
COLUMNS = ("people", "aged", "total_age", "mean_age", "youngest", "oldest", "first_name", "last_name")


def expected_totals(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """The model's GROUP BY, computed here from the source's rows."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row["name"] == "test":
            continue
        age = row["age"]
        band = None if age is None else "old" if age >= 50 else "young"
        groups.setdefault((row["id"] % 2, band), []).append(row)
    totals = {}
    for key, members in groups.items():
        ages = [row["age"] for row in members if row["age"] is not None]
        amounts = [Decimal(age) / 4 for age in ages]
        names = [row["name"] for row in members]
        totals[key] = (
            len(members),
            len(ages),
            sum(ages) if ages else None,
            sum(ages) / len(ages) if ages else None,
            min(ages, default=None),
            max(ages, default=None),
            min(names),
            max(names),
            sum(amounts) if amounts else None,
            # avg(decimal(p, s)) is decimal(p + 4, s + 4), rounded half up.
            (sum(amounts) / len(amounts)).quantize(Decimal("0.000001"), ROUND_HALF_UP) if amounts else None,
        )
    return totals


def target_totals(bench: StreamBench, model: str = "totals") -> dict[tuple[Any, ...], tuple[Any, ...]]:
    rows = DeltaTable(str(bench.target_path(model))).to_pyarrow_table().to_pylist()
    return {
        (row["parity"], row["band"].decode() if isinstance(row["band"], bytes) else row["band"]): (
            *(row[name] for name in COLUMNS),
            row["total_amount"],
            row["mean_amount"],
        )
        for row in rows
    }


def source_rows(bench: StreamBench) -> list[dict[str, Any]]:
    return DeltaTable(bench.source_path()).to_pyarrow_table().to_pylist()


def assert_totals(bench: StreamBench, models: tuple[str, ...] = ("totals", "totals_binary")) -> None:
    expected = expected_totals(source_rows(bench))
    for model in models:
        target = target_totals(bench, model)
        assert target == expected, (
            f"{model}: only in the target: {sorted(set(target.items()) - set(expected.items()), key=str)};"
            f" only in the GROUP BY: {sorted(set(expected.items()) - set(target.items()), key=str)}"
        )


def test_an_aggregate_equals_its_group_by_after_every_run(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"totals": TOTALS, "totals_binary": TOTALS_BINARY})
    bench.create_source([(1, "a", 10), (2, "b", 60), (3, "c", 30), (4, "d", 70), (5, "e", 20), (6, "f", None)])
    bench.run()
    assert_totals(bench)
    source = bench.source
    # Within a group, across groups (young to old), out of the filter, a NULL age, new rows.
    source().update(updates={"age": "age + 1"}, predicate="id = 1")
    source().update(updates={"age": "55"}, predicate="id = 3")
    source().update(updates={"name": "'test'"}, predicate="id = 5")
    source().update(updates={"age": "null"}, predicate="id = 2")
    bench.append([(7, "g", 80), (8, "h", 5)])
    bench.run()
    assert_totals(bench)
    # The extremes removed (min and max of a group), a group emptied, a row back into the filter.
    source().delete("id = 8")
    source().delete("id = 4")
    source().update(updates={"name": "'e2'"}, predicate="id = 5")
    source().delete("id = 6")
    source().delete("id = 2")
    bench.run()
    assert_totals(bench)
    # Emptied and refilled in one window; several changes to one row.
    source().delete("id = 7")
    bench.append([(9, "i", 90)])
    source().update(updates={"age": "age + 1"}, predicate="id = 9")
    source().update(updates={"age": "age - 50"}, predicate="id = 9")
    bench.run()
    assert_totals(bench)
    version = bench.target_version("totals")
    bench.run()
    assert bench.target_version("totals") == version  # an empty window makes no target commit
    bench.run("--full-refresh")
    assert_totals(bench)
    # What a run reads: a window that removes no extreme reads no snapshot of the source; one that
    # removes an extreme reads its group again, named by literals Delta can skip files by, which
    # also flag it (no read of the target); a binary group has no literal, so its target is read.
    bench.append([(11, "k", 5)])  # a new least age of the group (1, young)
    merges = merge_sent(bench)
    assert all("__tablestream_none where false" in merge for merge in merges.values())
    assert_totals(bench)
    source().delete("id = 11")
    merges = merge_sent(bench)
    listed = "(`parity` = cast('1' as int) and `band` = cast('young' as string))"
    assert f"__tablestream_now where {listed}" in merges["totals"]
    assert f"coalesce({listed}, false) as `__tablestream_listed_group`" in merges["totals"]
    assert "as __tablestream_target on" not in merges["totals"].split("__tablestream_current as")[0]
    assert "left semi join" in merges["totals_binary"]
    # The ON clause names the window's range of the first group_by column, for Delta's file skipping.
    ranged = "(__tablestream_target.`parity` >= 1 and __tablestream_target.`parity` <= 1)\n    or __tablestream_target.`parity` is null)"
    assert all(ranged in merge for merge in merges.values()), merges
    assert "as __tablestream_target on" in merges["totals_binary"].split("__tablestream_current as")[0]
    assert_totals(bench)
    hidden = {name for name in DeltaTable(str(bench.target_path("totals"))).schema().to_arrow().names}
    assert hidden - {"parity", "band", *COLUMNS, "total_amount", "mean_amount"} == {
        "__tablestream_rows",
        "__tablestream_count_age",
        "__tablestream_count_amount",
        "__tablestream_sum_age",
        "__tablestream_sum_amount",
    }


def merge_sent(bench: StreamBench) -> dict[str, str]:
    """Run the models; the MERGE each model's run sent, by model."""
    sent: dict[str, str] = {}

    def record(event: Any) -> None:
        merge = str(event.data.sql) if event.info.name == "SQLQuery" else ""
        if "merge into" in merge:
            model = merge.split("merge into", 1)[1].split()[0].split(".")[-1].strip("`")
            assert model not in sent, merge
            sent[model] = merge

    result = bench.invoke("run", callbacks=[record])
    assert result.success, result.exception
    assert set(sent) == {"totals", "totals_binary"}, sent
    return sent


def aggregate_model(config: str, select: str = "id % 2 as parity, age, __change_type") -> str:
    return (
        f"{{{{ config(materialized='stream_aggregate', {config}) }}}}\n"
        f"select {select} from {{{{ dbt_tablestream.source_stream('app', 't') }}}}"
    )


REFUSED = {
    "distinct": (
        aggregate_model("group_by='parity', aggregates={'ages': 'count(distinct age)'}"),
        ["aggregates 'ages': count(distinct age) is not an aggregate", "count(*), count(col), sum(col), avg(col)"],
    ),
    "expression": (
        aggregate_model("group_by='parity', aggregates={'double_age': 'sum(age * 2)'}"),
        ["aggregates 'double_age': sum(age * 2)", "compute an expression in the select"],
    ),
    "no_group": (aggregate_model("aggregates={'n': 'count(*)'}"), ["needs group_by"]),
    "latest": (
        aggregate_model("group_by='parity', aggregates={'n': 'count(*)'}, start_at='latest'"),
        [
            "start_at latest would aggregate only the changes after it; a stream_aggregate starts from a snapshot of its sources"
        ],
    ),
    "skipping": (
        aggregate_model("group_by='parity', aggregates={'n': 'count(*)'}, on_stale='skip_to_latest'"),
        ["on_stale: skip_to_latest"],
    ),
    "missing": (
        aggregate_model("group_by='parity', aggregates={'n': 'sum(weight)'}"),
        ["lacks weight", "__change_type"],
    ),
    "unsigned": (
        aggregate_model("group_by='parity', aggregates={'n': 'count(*)'}", select="id % 2 as parity, age"),
        ["lacks __change_type"],
    ),
    "text_sum": (
        aggregate_model(
            "group_by='parity', aggregates={'n': 'sum(name)'}", select="id % 2 as parity, name, __change_type"
        ),
        ["sum(name), and name is string", "sum and avg take a number"],
    ),
}


def test_what_cannot_be_kept_is_refused_naming_the_aggregate_and_writing_nothing(tmp_path: Path) -> None:
    bounded = aggregate_model("group_by='parity', aggregates={'n': 'count(*)'}, max_rows_per_file=1000")
    bench = StreamBench(tmp_path, {"bounded": bounded} | {name: sql for name, (sql, _) in REFUSED.items()})
    bench.create_source([(1, "a", 10), (2, "b", 60)])
    for name, (_, fragments) in REFUSED.items():
        message = bench.refused(name, *fragments)
        assert "Nothing was written" in message or "needs group_by" in message, message
        assert not bench.target_path(name).exists()
    # Under the reapply protocol (a SQL warehouse: no session settings) a file bound cannot be kept.
    reapply = ("--vars", "{tablestream_commit_protocol: reapply}")
    message = bench.refused(
        "bounded", "max_rows_per_file needs the session setting", "delta.targetFileSize", args=reapply
    )
    assert "Nothing was written" in message and not bench.target_path("bounded").exists()
    assert Counter(row["stream_name"] for row in bench.offsets()) == Counter()

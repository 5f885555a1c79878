"""dbt's own model features on both stream materializations: persist_docs, an enforced contract
with constraints, and grants (refused on the local profile, whose Spark has no table ACLs)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench

DOCS = "persist_docs={'relation': true, 'columns': true}"
MODELS = {
    "merged": (
        f"{{{{ config(materialized='stream_merge', unique_key='id', {DOCS}) }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    "log": (
        f"{{{{ config(materialized='table_stream', {DOCS}) }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
}
CHANGE_COLUMNS = [
    {"name": "__change_type", "data_type": "string"},
    {"name": "__commit_version", "data_type": "bigint"},
    {"name": "__commit_timestamp", "data_type": "timestamp"},
]


def write_schema(bench: StreamBench, models: list[dict[str, object]]) -> None:
    (bench.project.root / "models" / "schema.yml").write_text(yaml.safe_dump({"version": 2, "models": models}))


def table_comment(table: str) -> str | None:
    rows = shared_spark().sql(f"describe table extended {table}").collect()
    return next((row["data_type"] for row in rows if row["col_name"] == "Comment"), None)


def column_comments(table: str) -> dict[str, str | None]:
    rows = shared_spark().sql(f"describe table {table}").collect()
    return {row["col_name"]: row["comment"] for row in rows if row["col_name"] and not row["col_name"].startswith("#")}


def operations(table: str) -> list[str]:
    return [row["operation"] for row in shared_spark().sql(f"describe history {table}").collect()]


def schema(age: str, log_change_columns: bool = True) -> list[dict[str, object]]:
    """Both models documented (the table and the `age` column), with an enforced contract: a CHECK
    on age and `id` not null. ``log_change_columns``: the change columns go in the table_stream's
    contract (where they belong) or, wrongly, in the stream_merge's."""

    def model(name: str, description: str, extra: list[dict[str, str]]) -> dict[str, object]:
        columns = [
            {"name": "id", "data_type": "int", "description": "The person", "constraints": [{"type": "not_null"}]},
            {"name": "name", "data_type": "string"},
            {"name": "age", "data_type": "int", "description": age},
            *extra,
        ]
        return {
            "name": name,
            "description": description,
            "config": {"contract": {"enforced": True}},
            "constraints": [{"type": "check", "name": f"{name}_age_not_negative", "expression": "age >= 0"}],
            "columns": columns,
        }

    return [
        model("merged", "People as they are now", [] if log_change_columns else CHANGE_COLUMNS),
        model("log", "Every change to people", CHANGE_COLUMNS if log_change_columns else []),
    ]


def constrained() -> None:
    for table in ("merged", "log"):
        rows = shared_spark().sql(f"show tblproperties analytics.{table}").collect()
        properties = {row[0]: row[1] for row in rows}
        assert properties.get(f"delta.constraints.{table}_age_not_negative") == "age >= 0", properties
        assert properties.get("delta.constraints.id_not_null") == "`id` is not null", properties


def documented(age: str) -> None:
    assert table_comment("analytics.merged") == "People as they are now"
    assert table_comment("analytics.log") == "Every change to people"
    assert column_comments("analytics.merged") == {"id": "The person", "name": None, "age": age}
    assert column_comments("analytics.log")["age"] == age


def test_docs_and_an_enforced_contract_on_both_targets(tmp_path: Path) -> None:
    """persist_docs and a contract with constraints, on the first build, later runs and
    --full-refresh: a column comment is set only when it changes, and rows that break a
    constraint are refused with nothing written."""
    bench = StreamBench(tmp_path, MODELS)
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    # A contract whose columns do not match the target is refused by dbt's own check, before the build.
    write_schema(bench, schema("Age in years", log_change_columns=False))
    bench.refused("merged", "contract", "__change_type")
    bench.refused("log", "contract", "__change_type")

    write_schema(bench, schema("Age in years"))
    bench.run()
    documented("Age in years")
    constrained()
    built = {table: operations(table) for table in ("analytics.merged", "analytics.log")}

    # Unchanged docs: no ALTER, which a stream reading the target would see as a schema change.
    bench.append([(3, "c", 3)])
    bench.run()
    for table, before in built.items():
        assert operations(table).count("CHANGE COLUMN") == before.count("CHANGE COLUMN"), table

    write_schema(bench, schema("Age in whole years"))
    bench.append([(4, "d", -4)])
    for table in ("merged", "log"):
        bench.refused(
            table,
            f"Stream {table}__app_t: rows of window",
            f"break the enforced contract of model {table}: 1 break {table}_age_not_negative (check age >= 0)",
            "Nothing was written and the stream did not move",
            "reset_stream",
        )
    # Corrected in the source: stream_merge nets the bad row away with the correction, and its
    # changed column comment is set once.
    shared_spark().sql("update app.t set age = 4 where id = 4")
    bench.run("-s", "merged")
    rows = shared_spark().sql("select id, age from analytics.merged").collect()
    assert sorted((row["id"], row["age"]) for row in rows) == [(1, 1), (2, 2), (3, 3), (4, 4)]
    merged = operations("analytics.merged")
    assert merged.count("CHANGE COLUMN") == built["analytics.merged"].count("CHANGE COLUMN") + 1
    assert column_comments("analytics.merged")["age"] == "Age in whole years"

    # A table_stream logs every change, the bad row too: a rebuild starts it over, with the
    # table's comment, the columns' and the constraints again.
    bench.run("--full-refresh")
    documented("Age in whole years")
    constrained()


def test_grants_are_refused_on_the_local_profile_before_anything_is_written(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, MODELS)
    bench.create_source([(1, "a", 1)])
    write_schema(bench, [{"name": name, "config": {"grants": {"select": ["analysts"]}}} for name in MODELS])
    for model in MODELS:
        bench.refused(
            model,
            f"Stream {model}__app_t (model {model}, source app.t): `grants`",
            "cannot be applied on the local profile (type: tablestream)",
            "Nothing was written and the stream did not move",
        )

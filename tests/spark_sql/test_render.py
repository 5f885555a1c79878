"""The cluster engine's SQL, rendered for `type: spark` from real model configs: it matches the
reviewed golden files and Spark's own parser accepts every statement.

Run `TABLESTREAM_UPDATE_GOLDEN=1 pytest -m spark_sql` to rewrite the golden files, then review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.spark_sql.delta_grammar import check_delta_statement, is_delta_statement
from tests.spark_sql.render import SparkRenderer, Statement, golden_text

pytestmark = pytest.mark.spark_sql

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="module")
def rendered(renderer: SparkRenderer) -> dict[str, list[Statement]]:
    return {name: renderer.render(name) for name in renderer.model_names()}


def test_every_stream_configuration_is_rendered(rendered: dict[str, list[Statement]]) -> None:
    materializations = {model: statements for model, statements in rendered.items()}
    assert len(materializations) == 13
    steps = {statement.step for statements in rendered.values() for statement in statements}
    assert {
        "source_state",
        "window_check",
        "model",
        "null_keys",
        "write",
        "commit_open",
        "commit_close",
        "target_marker",
        "offsets_read",
        "enable_change_tracking",
        "offsets_append",
        "pause_point",
        "changelog_session",
        "tombstones",
        "cache_window",
        "recomputed_groups",
        "key_ranges",
        "uncache_window",
    } <= steps
    sql = "\n".join(statement.sql for statements in rendered.values() for statement in statements)
    for fragment in (
        "table_changes('app.orders', 6, 9)",
        "version as of 9",
        "merge into",
        "insert into",
        "create or replace table",
        "spark.databricks.delta.write.txnAppId",
        "spark.databricks.delta.commitInfo.userMetadata",
        "describe history `app`.`orders`",
        "when matched and source.`__change_type` = 'DELETE' then delete",
        "target._deleted = true",
        "where _change_type = 'insert'",
        "app.orders changes from version 6 to version 9 with (deduplicationMode = 'netChanges', computeUpdates = 'true')",
        "merge into analytics.order_events_current__tablestream_tombstones as target",
        "when not matched by source and target.__tablestream_recorded_at < current_timestamp() - interval 7 days then delete",
        "then `status` end, true) over (partition by `order_id` order by __tablestream_order",
        # stream_aggregate: built by the GROUP BY in group_by order, then each window's one MERGE
        # of the signed changes per group, reading the listed groups again from the source.
        "group by `customer`, `status`\norder by `customer`, `status`",
        "cache table `__tablestream_window_orders_totals`",
        "case when __change_type in ('DELETE', 'UPDATE_BEFORE') then -1 else 1 end as __tablestream_sign",
        "merge into analytics.orders_totals as __tablestream_target",
        "when matched and __tablestream_target.__tablestream_rows + __tablestream_window.__tablestream_d_rows <= 0"
        " then delete",
        "`largest` = greatest(__tablestream_target.`largest`, __tablestream_window.`__tablestream_added_max_amount`)",
        "/* tablestream:rows */ 'current' = 'current'",
        "__tablestream_now where (`customer` = cast('ann' as string) and `status` = cast('paid' as string))"
        " or (`customer` = cast('bob' as string) and `status` is null)",
        "and ((__tablestream_target.`customer` >= 'ann' and __tablestream_target.`customer` <= 'bob'",
        "uncache table if exists `__tablestream_window_orders_totals`",
    ):
        assert fragment in sql, fragment


@pytest.mark.parametrize("model", sorted(p.stem for p in GOLDEN.glob("*.sql")) or ["<no golden files>"])
def test_rendered_sql_matches_golden(model: str, rendered: dict[str, list[Statement]]) -> None:
    if os.environ.get("TABLESTREAM_UPDATE_GOLDEN"):
        pytest.skip("golden files are being rewritten")
    assert model in rendered, f"golden file {model}.sql has no model"
    assert golden_text(model, rendered[model]) == (GOLDEN / f"{model}.sql").read_text()


def test_every_model_has_a_golden_file(rendered: dict[str, list[Statement]]) -> None:
    if os.environ.get("TABLESTREAM_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        for model, statements in rendered.items():
            (GOLDEN / f"{model}.sql").write_text(golden_text(model, statements))
    assert sorted(p.stem for p in GOLDEN.glob("*.sql")) == sorted(rendered)


def test_spark_parses_every_statement(rendered: dict[str, list[Statement]], spark) -> None:
    parser = spark._jsparkSession.sessionState().sqlParser()
    failures = []
    checked = 0
    for model, statements in rendered.items():
        for statement in statements:
            try:
                if is_delta_statement(statement.sql):
                    check_delta_statement(statement.sql, parser)
                else:
                    parser.parsePlan(statement.sql)
                checked += 1
            except Exception as error:
                reason = next((line for line in str(error).splitlines() if line.strip()), repr(error))
                failures.append(f"{model} {statement.scenario}/{statement.step}: {reason}\n{statement.sql}")
    assert not failures, "\n\n".join(failures)
    assert checked > 100


def test_spark_parses_the_reapply_protocols_writes(reapply_renderer: SparkRenderer, spark) -> None:
    """Under the reapply protocol (SQL warehouses): every model's later-run write parses, a
    table_stream appends by an insert-only MERGE within the window's literal versions, a net
    stream_merge deletes the keys a window inserted and deleted, a history drops what it holds, an
    aggregate reads every group its window touched again, uncached, and compaction is left to a
    table property instead of settings."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    writes: dict[str, str] = {}
    appends: dict[str, str] = {}
    # Refused under reapply: stream_read: changelog, and a keyed table_stream's net changes (its
    # settings, test_sql_warehouse.py).
    refused = ("orders_current_changes", "orders_net_changes")
    for model in reapply_renderer.model_names():
        if model in refused:
            continue
        render = reapply_renderer.model(model)
        assert render.call("_stream_commit_protocol")["name"] == "reapply"
        statements = list(render.scenario("next_run"))
        writes[model] = next(s.sql for s in statements if s.step == "write")
        appends[model] = next(s.sql for s in statements if s.step == "offsets_append")
        parser.parsePlan(writes[model])
        parser.parsePlan(appends[model])
        assert render.call("stream_compaction_properties") == {"delta.autoOptimize.autoCompact": "true"}
    with pytest.raises(Exception, match=r"commit protocol reapply: .*a keyed table_stream appends each key's net"):
        list(reapply_renderer.model("orders_net_changes").scenario("next_run"))
    assert "when not matched then insert *" in writes["orders_changes"]
    assert (
        "__tablestream_target.__commit_version >= 6L and __tablestream_target.__commit_version <= 9L"
        in writes["orders_changes"]
    )
    assert (
        "or (__tablestream_last = 1 and not __tablestream_existed and not __tablestream_exists)"
        in writes["orders_current"]
    )
    assert "__tablestream_applied" in writes["order_history"]
    # A stream_aggregate lists every group its window touched to read again, and reads its window
    # as it is: a SQL warehouse has no CACHE TABLE.
    aggregate = list(reapply_renderer.model("orders_totals").scenario("next_run"))
    listing = next(s.sql for s in aggregate if s.step == "recomputed_groups")
    assert "true as __tablestream_recompute" in listing
    assert not any(s.step in ("cache_window", "uncache_window") for s in aggregate)
    assert "__tablestream_window_orders_totals" not in writes["orders_totals"]
    # The offsets row goes in only while the log lacks the window, reading the stream's partition.
    assert appends["orders_changes"].startswith("merge into analytics.tablestream_offsets as __tablestream_log")
    assert "on __tablestream_log.stream_name in ('orders_changes__app_orders')" in appends["orders_changes"]
    assert "and __tablestream_log.to_version >= __tablestream_row.to_version" in appends["orders_changes"]


@pytest.mark.parametrize(
    "sql, accepted",
    [
        ("describe history app.orders limit 50", True),
        ("DESC HISTORY `main`.`app`.`orders`", True),
        ("describe detail '/data/orders'", True),
        ("describe history app.orders limit many", False),
        ("describe detail app.orders limit 1", False),
        ("describe history app..orders", False),
    ],
)
def test_delta_grammar_check_rejects_what_delta_rejects(sql: str, accepted: bool, spark) -> None:
    parser = spark._jsparkSession.sessionState().sqlParser()
    assert is_delta_statement(sql)
    try:
        check_delta_statement(sql, parser)
        result = True
    except Exception:  # a ValueError or Spark's ParseException
        result = False
    assert result is accepted


@pytest.mark.parametrize(
    "expression, columns",
    [
        ("op = 'd'", ["op"]),
        ("lower(`Op`) in ('d', 'delete') or payload.kind = \"x\"", ["Op", "payload"]),
        ("opp = 'd' or `age` < 0 and deleted is not null", ["opp", "age", "deleted"]),
        ("case when op = 'd' then true else false end and ts > current_timestamp() - interval 1 day", ["op", "ts"]),
    ],
)
def test_apply_as_deletes_columns_are_found_outside_literals_and_functions(
    expression: str, columns: list[str], renderer: SparkRenderer
) -> None:
    found = renderer.model("order_events_current").call("_expression_columns", expression)
    assert sorted(found) == sorted(columns)

"""integration_tests/ (the conformance suite) is plain dbt and plain Delta SQL: `dbt parse` resolves
its stream models on `type: spark` and `type: databricks`, Spark's own parser accepts every
statement its steps send, and its Python drives dbt only (no Python writes to Delta)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner

from tests.functional.test_integration_project import copy_suite
from tests.spark_sql.render import PACKAGE_ROOT, PROFILES
from tests.spark_sql.test_dbt_parse import MATERIALIZATIONS, parse_on_databricks, parse_on_spark

pytestmark = pytest.mark.spark_sql

SUITE = PACKAGE_ROOT / "integration_tests"
PROJECT_NAME = "dbt_tablestream_integration_tests"
# The statements a step may send: data changes and the DDL that makes or turns the sources.
STEP_VERBS = (
    "create schema",
    "create table",
    "drop table",
    "drop schema",
    "insert into",
    "insert overwrite directory",
    "update",
    "delete from",
    "merge into",
    "alter table",
)


def suite_copy(tmp_path: Path, profile: dict[str, object] | str) -> Path:
    """integration_tests/ copied with `profile`, or the render project's profile of that adapter."""
    return copy_suite(tmp_path, PROFILES[profile] if isinstance(profile, str) else profile)


def check_stream_models(resolved: dict) -> None:
    streams = {name for name, kind in resolved["materialized"].items() if kind in MATERIALIZATIONS}
    assert len(streams) >= 8, streams
    assert {"refuse_feed_off", "refuse_recreated", "orders_history", "order_events_current", "orders_totals"} <= streams
    assert resolved["materializations"] == dict.fromkeys(MATERIALIZATIONS, "dbt_tablestream")


def test_dbt_parse_integration_tests_on_spark(tmp_path: Path) -> None:
    check_stream_models(parse_on_spark(suite_copy(tmp_path, "spark"), PROJECT_NAME))


def test_dbt_parse_integration_tests_on_databricks(tmp_path: Path) -> None:
    check_stream_models(parse_on_databricks(suite_copy(tmp_path, "databricks"), PROJECT_NAME))


def step_statements(tmp_path: Path, warehouse: Path) -> list[str]:
    """Every statement the suite's run-operations send (steps, the landing folder's writes,
    refusal changes, schema drops), as dbt renders them."""
    project = suite_copy(
        tmp_path, {"type": "tablestream", "warehouse": str(warehouse), "schema": "analytics", "threads": 1}
    )
    dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]
    assert dbtRunner().invoke(["deps", *dirs]).success
    inline = (
        "{{ tojson({'steps': integration_steps().values() | list + integration_directory_steps().values() | list,"
        " 'refusals': integration_refusal_changes()}) }}"
    )
    directory = json.dumps({"integration_directory": str(tmp_path / "landing")})
    compiled = dbtRunner().invoke(["compile", "--inline", inline, "--vars", directory, *dirs])
    assert compiled.success, compiled.exception
    rendered = json.loads(compiled.result.results[0].node.compiled_code)
    statements = [statement for step in rendered["steps"] for statement in step] + rendered["refusals"]
    return [*statements, "drop schema if exists tablestream_it cascade"]


def test_spark_parses_every_statement_of_the_steps(tmp_path: Path, tablestream_warehouse: Path, spark) -> None:
    statements = step_statements(tmp_path, tablestream_warehouse)
    assert len(statements) > 30
    parser = spark._jsparkSession.sessionState().sqlParser()
    failures = []
    for statement in statements:
        if not statement.lower().startswith(STEP_VERBS):
            failures.append(f"not a step statement: {statement}")
            continue
        try:
            parser.parsePlan(statement)
        except Exception as error:
            failures.append(f"{statement}\n    {str(error).splitlines()[0]}")
    assert not failures, "\n".join(failures)
    kinds = {statement.split()[0].lower() for statement in statements}
    assert {"insert", "update", "delete", "merge", "alter", "drop", "create"} <= kinds


def test_the_suite_python_drives_dbt_only() -> None:
    """run.py and oracle.py import no engine: the suite writes to Delta only through dbt's SQL."""
    engines = ("pyspark", "deltalake", "delta", "databricks", "pyhive", "dbt_tablestream")
    for script in sorted(SUITE.glob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(script.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
        assert not imported & set(engines), f"{script.name} imports {imported & set(engines)}"
        assert imported, script.name

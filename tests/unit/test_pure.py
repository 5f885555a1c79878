"""Pure-Python parts of the engine: no Spark, no dbt invocation."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt_tablestream.embedded._adapter import TablestreamCredentials, sql_literal
from dbt_tablestream.embedded._arrow import normalize_schema, normalize_type
from dbt_tablestream.embedded._engine import own_error, parse_directive
from dbt_tablestream.embedded._java import java_major_version
from dbt_tablestream.embedded._session import check_warehouse
from dbt_tablestream.exceptions import ChangeFeedError, DirectiveError, EngineStartError


@pytest.mark.parametrize(
    "value,literal",
    [
        (None, "NULL"),
        (True, "true"),
        (12, "12"),
        (1.5, "1.5"),
        (Decimal("2"), "2BD"),
        (Decimal("2.50"), "2.50"),
        (dt.date(2024, 1, 2), "DATE '2024-01-02'"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "TIMESTAMP '2024-01-02 03:04:05'"),
        ("bob's \\ path", "'bob\\'s \\\\ path'"),
    ],
)
def test_sql_literal(value: object, literal: str) -> None:
    assert sql_literal(value) == literal


def test_parse_directive_after_dbt_query_comment() -> None:
    sql = '/* {"app": "dbt"} */\n/* tablestream:{"op": "write", "path": "a\\/b"} */\nselect 1'
    parsed = parse_directive(sql)
    assert parsed == ({"op": "write", "path": "a/b"}, "select 1")
    assert parse_directive("select 1 /* plain comment */") is None


def test_malformed_directive_is_an_error() -> None:
    with pytest.raises(DirectiveError, match="Malformed"):
        parse_directive("/* tablestream:{nope} */ select 1")
    with pytest.raises(DirectiveError, match="needs an 'op'"):
        parse_directive('/* tablestream:{"x": 1} */ select 1')


def test_normalize_types_for_spark_and_delta() -> None:
    assert normalize_type(pa.string_view()) == pa.string()
    assert normalize_type(pa.timestamp("ms")) == pa.timestamp("us")
    assert normalize_type(pa.timestamp("ms", tz="Asia/Tokyo")) == pa.timestamp("us", tz="UTC")
    assert normalize_type(pa.uint64()) == pa.int64()
    nested = normalize_schema(pa.schema([("l", pa.list_(pa.string_view()))]))
    assert nested.field("l").type == pa.list_(pa.field("item", pa.string()))


def test_own_errors_are_unwrapped_from_spark_tracebacks() -> None:
    wrapped = Exception(
        "[TABLE_VALUED_FUNCTION_FAILED_TO_ANALYZE_IN_PYTHON] Failed: Traceback (most recent call last):\n"
        '  File "x.py", line 1\ndbt_tablestream.exceptions.ChangeFeedError: feed is off. Enable it. SQLSTATE: 38000; line 1'
    )
    own = own_error(wrapped)
    assert isinstance(own, ChangeFeedError) and str(own) == "feed is off. Enable it."
    assert own_error(Exception("[TABLE_OR_VIEW_NOT_FOUND] x")) is None


def test_check_warehouse(tmp_path: Path) -> None:
    created = check_warehouse(tmp_path / "new" / "warehouse")
    assert created.is_dir() and list(created.iterdir()) == []
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(EngineStartError, match="is not a directory"):
        check_warehouse(a_file)
    with pytest.raises(EngineStartError, match="cannot be created"):
        check_warehouse(a_file / "below")


def test_java_version_parsing(tmp_path: Path) -> None:
    def fake(name: str, banner: str) -> Path:
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\necho '{banner}' >&2\n")
        path.chmod(0o755)
        return path

    assert java_major_version(fake("j17", 'openjdk version "17.0.15" 2025-04-15')) == 17
    assert java_major_version(fake("j8", 'java version "1.8.0_392"')) == 8
    assert java_major_version(fake("j21", 'openjdk version "21" 2023-09-19')) == 21


def test_credentials_validation() -> None:
    good = {"schema": "analytics", "warehouse": "./wh", "threads": 2}
    TablestreamCredentials.validate(good)
    with pytest.raises(DbtRuntimeError, match="Unknown key\\(s\\) in the tablestream profile: host"):
        TablestreamCredentials.validate({**good, "host": "x"})
    with pytest.raises(DbtRuntimeError, match="needs `schema:`"):
        TablestreamCredentials.from_dict({"warehouse": "./wh"})
    creds = TablestreamCredentials.from_dict({"schema": "s", "warehouse": "wh"})
    assert creds.warehouse_path("/projects/p") == Path("/projects/p/wh")

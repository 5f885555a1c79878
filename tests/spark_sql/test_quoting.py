"""The package's two quoting macros (docs/architecture.md, "Quoting"), read back by Spark: a
literal of `_sql_string` is the value it was made from, a name of `_sql_identifier` is the name,
as a column and as the value of a SET."""

from __future__ import annotations

from typing import Any

import pytest

from dbt_tablestream._macros import render

pytestmark = pytest.mark.spark_sql

VALUES = [
    "a'b",
    "back\\slash\\",
    "\\'",
    "''",
    "tick`tock``",
    "spa ce é ø 字",
    "line\nbreak\ttab",
    "'; select 1 --",
    "\\n is not a newline",
    "",
]


@pytest.mark.parametrize("value", VALUES)
def test_a_string_literal_reads_back_as_its_value(value: str, spark: Any) -> None:
    literal = render("_sql_string", value)
    assert spark.sql(f"select {literal} as v").collect()[0]["v"] == value


def test_none_is_a_null_string(spark: Any) -> None:
    row = spark.sql(f"select {render('_sql_string', None)} as v").collect()[0]
    assert row["v"] is None
    assert spark.sql(f"select typeof({render('_sql_string', None)}) as t").collect()[0]["t"] == "string"


@pytest.mark.parametrize("name", [value for value in VALUES if value])
def test_a_quoted_name_reads_back_as_the_name(name: str, spark: Any) -> None:
    quoted = render("_sql_identifier", name)
    frame = spark.sql(f"select 1 as {quoted}")
    assert frame.columns == [name]
    assert spark.sql(f"select {quoted} from (select 2 as {quoted}) as t").collect()[0][0] == 2


@pytest.mark.parametrize("value", [value for value in VALUES if value])
def test_a_backquoted_setting_reads_back_as_its_value(value: str, spark: Any) -> None:
    """How the marked protocol sets Delta's app id and marker (_stream_marker_settings)."""
    key = "spark.tablestream.test.quoting"
    try:
        spark.sql(f"set {key} = {render('_sql_identifier', value)}")
        assert spark.conf.get(key) == value
    finally:
        spark.conf.unset(key)

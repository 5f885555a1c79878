"""The cluster engine's directory_table SQL: rendered for `type: spark`, compared with a reviewed
golden file, and parsed by Spark's parser. `TABLESTREAM_UPDATE_GOLDEN=1` rewrites the golden file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.spark_sql.render import SparkRenderer, Statement, golden_text

pytestmark = pytest.mark.spark_sql

GOLDEN = Path(__file__).resolve().parent / "golden_directory" / "directory_table.sql"
SETTINGS = {
    "location": "abfss://landing@account.dfs.core.windows.net/orders/",
    "recursive": True,
    "include": ["*.json", "daily/*.csv"],
    "exclude": ["*tmp*", "a.b?"],
}


@pytest.fixture(scope="module")
def statements(renderer: SparkRenderer) -> list[Statement]:
    model = renderer.model("orders_current")
    target = model.this.incorporate(path={"identifier": "landing_files"})
    files, listing = "landing_files__tablestream_files", "landing_files__tablestream_listing"
    calls = [
        ("files_view", "directory_files_view_sql", (files, SETTINGS)),
        ("listing_view", "directory_listing_view_sql", (listing, files, SETTINGS)),
        ("create", "directory_create_sql", (target, listing, {"delta.logRetentionDuration": "interval 7 days"})),
        ("diff", "directory_diff_sql", (target, listing)),
        ("merge", "directory_merge_sql", (target, listing)),
    ]
    return [
        Statement("sync", step, re.sub(r"[ \t]+\n", "\n", str(model.call(macro, *args)).strip()))
        for step, macro, args in calls
    ]


def test_directory_sql_matches_golden(statements: list[Statement]) -> None:
    text = golden_text("directory_table", statements)
    if os.environ.get("TABLESTREAM_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_spark_parses_the_directory_sql(statements: list[Statement], spark) -> None:
    parser = spark._jsparkSession.sessionState().sqlParser()
    for statement in statements:
        parser.parsePlan(statement.sql)
    sql = "\n".join(statement.sql for statement in statements)
    for fragment in (
        "using binaryFile options (path 'abfss://landing@account.dfs.core.windows.net/orders/', recursiveFileLookup 'true')",
        "instr(path, 'landing@account.dfs.core.windows.net/orders')",
        "relative_path rlike '^(?:.*\\\\.json|daily/.*\\\\.csv)$'",
        "not relative_path rlike '^(?:.*tmp.*|a\\\\.b.)$'",
        "'delta.enableChangeDataFeed' = 'true'",
        "when not matched by source then delete",
    ):
        assert fragment in sql, fragment


@pytest.mark.parametrize(
    "patterns,path,matches",
    [
        (["*.json"], "a.json", True),
        (["*.json"], "day/a.json", True),
        (["*.json"], "a.jsonl", False),
        (["daily/*.csv"], "daily/x.csv", True),
        (["daily/*.csv"], "weekly/x.csv", False),
        (["a.b?"], "a.bc", True),
        (["a.b?"], "axbc", False),
        (["(x)+[yz]"], "(x)+z", True),
        (["(x)+[yz]"], "(x)+[yz]", False),
        (["[!a]*"], "b.json", True),
        (["[!a]*"], "a.json", False),
        (["$^|{}"], "$^|{}", True),
    ],
)
def test_glob_regex_matches_like_fnmatch(
    renderer: SparkRenderer, spark, patterns: list[str], path: str, matches: bool
) -> None:
    import fnmatch

    regex = str(renderer.model("orders_current").call("_glob_regex", patterns))
    literal = regex.replace("\\", "\\\\").replace("'", "\\'")
    assert spark.sql(f"select '{path}' rlike '{literal}'").collect()[0][0] is matches
    assert any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns) is matches

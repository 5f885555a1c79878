"""Names and values that need quoting: a quote, a backslash, a backtick, a space and letters
outside ASCII in the dbt source's and its table's names (so in each stream's default name), in
the models' names, in a column's name and in the string keys, through a first run, two windows
and `tablestream status`.

Spark's session catalog takes only letters, digits and `_` in a schema's or table's own name
(SessionCatalog.validateName, Hive's rule), so the source's schema and table and the targets are
plain; the dbt names above them, and what the package builds from those, are not.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from deltalake import DeltaTable, write_deltalake

from dbt_tablestream.cli import main as tablestream
from tests.functional.streams import CDF, StreamBench

ODD = "'\\` éø"
SOURCE = f"app{ODD}src"
TABLE = f"t{ODD}tbl"
# dbt refuses a space in a model's name; the targets' own names are Spark's plain ones (alias).
MERGED_MODEL, LOGGED_MODEL = "mérged'\\`ø", "lögged'\\`ø"
KEY = "kéy"
# Delta refuses a space in a column's name unless the table maps its columns (delta.columnMapping.mode).
COLUMN = "nåme'`\\x"
KEYS = ["a'b", "back\\slash\\", "tick`tock", "spa ce é ø", "'; --", "plain"]


def source_rows(rows: list[tuple[int, str, str]]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([row[0] for row in rows], pa.int32()),
            KEY: pa.array([row[1] for row in rows], pa.string()),
            COLUMN: pa.array([row[2] for row in rows], pa.string()),
        }
    )


def model(materialized: str, alias: str, extra: str = "") -> str:
    source = f"dbt_tablestream.source_stream({json.dumps(SOURCE)}, {json.dumps(TABLE)})"
    return f"{{{{ config(materialized='{materialized}', alias='{alias}'{extra}) }}}}\nselect * from {{{{ {source} }}}}"


def rows_of(path: Path, *columns: str) -> Counter[tuple[Any, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    return Counter(tuple(row[column] for column in columns) for row in table)


def test_odd_names_and_values_stream_through_runs_and_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = StreamBench(
        tmp_path,
        {
            MERGED_MODEL: model("stream_merge", "merged", f", unique_key='{KEY}'"),
            LOGGED_MODEL: model("table_stream", "logged"),
        },
    )
    sources = {
        "version": 2,
        "sources": [{"name": SOURCE, "schema": "app", "tables": [{"name": TABLE, "identifier": "src"}]}],
    }
    (bench.project.root / "models" / "sources.yml").write_text(yaml.safe_dump(sources, allow_unicode=True))
    source = bench.warehouse / "app.db" / "src"
    write_deltalake(str(source), source_rows([(i, key, f"v{ODD}{i}") for i, key in enumerate(KEYS)]), configuration=CDF)

    def source_now() -> Counter[tuple[Any, ...]]:
        return rows_of(source, "id", KEY, COLUMN)

    def logged_since(before: Counter[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
        after = rows_of(bench.target_path("logged"), "id", KEY, COLUMN, "__change_type")
        assert not before - after, "a table_stream target only grows"
        return after - before

    bench.run()
    assert rows_of(bench.target_path("merged"), "id", KEY, COLUMN) == source_now()
    logged = rows_of(bench.target_path("logged"), "id", KEY, COLUMN, "__change_type")
    assert logged == Counter({(*row, "INSERT"): 1 for row in source_now()})

    # A window: inserts with odd keys, an update of the odd column, a delete.
    write_deltalake(str(source), source_rows([(10, f"new{ODD}", "n'`\\"), (11, "ü\\'", ODD)]), mode="append")
    DeltaTable(str(source)).update(updates={COLUMN: "'changed'"}, predicate="id = 1")
    DeltaTable(str(source)).delete("id = 3")
    bench.run()
    assert rows_of(bench.target_path("merged"), "id", KEY, COLUMN) == source_now()
    assert logged_since(logged) == Counter(
        {
            (10, f"new{ODD}", "n'`\\", "INSERT"): 1,
            (11, "ü\\'", ODD, "INSERT"): 1,
            (1, KEYS[1], f"v{ODD}1", "UPDATE_BEFORE"): 1,
            (1, KEYS[1], "changed", "UPDATE_AFTER"): 1,
            (3, KEYS[3], f"v{ODD}3", "DELETE"): 1,
        }
    )
    logged = rows_of(bench.target_path("logged"), "id", KEY, COLUMN, "__change_type")

    # A second window: the key a quote ends, deleted, and inserted again with another value.
    DeltaTable(str(source)).delete("id = 0")
    write_deltalake(str(source), source_rows([(0, KEYS[0], "again")]), mode="append")
    bench.run()
    assert rows_of(bench.target_path("merged"), "id", KEY, COLUMN) == source_now()
    assert logged_since(logged) == Counter({(0, KEYS[0], f"v{ODD}0", "DELETE"): 1, (0, KEYS[0], "again", "INSERT"): 1})

    # Each stream's default name holds the dbt names as they are; status shows both at the source's version.
    streams = {f"merged__{SOURCE}_{TABLE}", f"logged__{SOURCE}_{TABLE}"}
    latest = DeltaTable(str(source)).version()
    root = str(bench.project.root)
    capsys.readouterr()
    assert tablestream(["status", "--project-dir", root, "--json"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert {entry["stream_name"]: (entry["to_version"], entry["lag_versions"]) for entry in fast} == dict.fromkeys(
        streams, (latest, 0)
    )
    assert tablestream(["status", "--check", "--project-dir", root, "--json"]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert {entry["stream_name"]: (entry["to_version"], entry["stale"]) for entry in checked} == dict.fromkeys(
        streams, (latest, False)
    )
    assert tablestream(["status", "--project-dir", root]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in streams), text

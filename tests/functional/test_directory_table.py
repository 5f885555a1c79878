"""Volume streams: a directory_table over a local folder, a stream of its file events, and a
landing folder loaded incrementally (only new and replaced files read)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.dbt_project_helper import DbtProject
from tests.functional.local import relocate_schemas
from tests.functional.streams import model_results

LOADED = """{{ config(materialized='stream_merge', unique_key='relative_path') }}
{%- set events = dbt_tablestream.ref_stream('files') %}
select e.relative_path, f.records, e.__change_type, e.__commit_version, e.__commit_timestamp
from {{ events }} as e
left join (
  select relative_path, collect_list(struct(order_id, amount)) as records
  from ({{ dbt_tablestream.stream_file_rows(events, {'order_id': 'bigint', 'amount': 'double'}) }}) as r
  group by relative_path
) as f on f.relative_path = e.relative_path and e.__change_type in ('INSERT', 'UPDATE_AFTER')
"""
ROWS = """select l.relative_path, r.order_id, r.amount
from {{ ref('loaded') }} as l lateral view explode(l.records) exploded as r
"""


def write_json(path: Path, records: list[dict[str, Any]], mtime: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def project(tmp_path: Path, directory_config: str = "") -> DbtProject:
    landing = tmp_path / "landing"
    landing.mkdir(exist_ok=True)
    relocate_schemas(tmp_path / "warehouse", ("analytics",))
    config = (
        f"materialized='directory_table', location='{landing}'{', ' + directory_config if directory_config else ''}"
    )
    return DbtProject(
        tmp_path / "project",
        tmp_path / "warehouse",
        models={
            "files.sql": f"{{{{ config({config}) }}}}\n",
            "file_events.sql": "{{ config(materialized='table_stream') }}\n"
            "select relative_path, size, __change_type, __commit_version from {{ dbt_tablestream.ref_stream('files') }}",
            "loaded.sql": LOADED,
            "landing_rows.sql": ROWS,
        },
    )


def table_rows(dbt: DbtProject, name: str) -> list[dict[str, Any]]:
    return DeltaTable(str(dbt.warehouse / "analytics.db" / name)).to_pyarrow_table().to_pylist()


def events(dbt: DbtProject) -> list[tuple[str, str, int]]:
    return sorted((row["__change_type"], row["relative_path"], row["size"]) for row in table_rows(dbt, "file_events"))


def landing_rows(dbt: DbtProject) -> list[tuple[str, int, float]]:
    result = dbt.run_ok(
        "show", "--inline", "select * from {{ ref('landing_rows') }}", "--limit", "1000", "--output", "json"
    )
    table = result.result.results[0].agate_table
    return sorted((row["relative_path"], row["order_id"], row["amount"]) for row in table)


@pytest.mark.extended
def test_file_events_stream_and_an_incremental_load(tmp_path: Path) -> None:
    dbt = project(tmp_path)
    landing = tmp_path / "landing"
    write_json(
        landing / "a.json", [{"order_id": 1, "amount": 10.0}, {"order_id": 2, "amount": 20.0}], mtime=1_700_000_000
    )
    write_json(landing / "day2" / "b.json", [{"order_id": 3, "amount": 30.0}], mtime=1_700_000_000)
    write_json(landing / "_tmp_upload.json", [{"order_id": 99, "amount": 0.0}])  # in flight: ignored
    dbt.run_ok("run")
    size_a, size_b = (landing / "a.json").stat().st_size, (landing / "day2" / "b.json").stat().st_size
    assert events(dbt) == [("INSERT", "a.json", size_a), ("INSERT", "day2/b.json", size_b)]
    assert landing_rows(dbt) == [("a.json", 1, 10.0), ("a.json", 2, 20.0), ("day2/b.json", 3, 30.0)]
    files = {row["relative_path"]: row for row in table_rows(dbt, "files")}
    assert set(files) == {"a.json", "day2/b.json"}
    # Spark's binaryFile source names files by their Hadoop path; the fingerprint is size and mtime.
    assert files["a.json"]["url"] == f"file:{landing / 'a.json'}"
    assert files["a.json"]["fingerprint"].startswith(f"{size_a}-")

    # Replace a.json, delete b.json, add c.json.
    write_json(landing / "a.json", [{"order_id": 1, "amount": 11.0}], mtime=1_700_000_100)
    (landing / "day2" / "b.json").unlink()
    write_json(landing / "c.json", [{"order_id": 4, "amount": 40.0}])
    result = dbt.run_ok("run")
    new_size_a, size_c = (landing / "a.json").stat().st_size, (landing / "c.json").stat().st_size
    assert events(dbt) == sorted(
        [
            ("INSERT", "a.json", size_a),
            ("INSERT", "day2/b.json", size_b),
            ("UPDATE_BEFORE", "a.json", size_a),
            ("UPDATE_AFTER", "a.json", new_size_a),
            ("DELETE", "day2/b.json", size_b),
            ("INSERT", "c.json", size_c),
        ]
    )
    assert landing_rows(dbt) == [("a.json", 1, 11.0), ("c.json", 4, 40.0)]
    loaded = next(r for r in result.result.results if r.node.name == "loaded")
    read = loaded.node.compiled_code
    assert f"json.`file:{landing / 'a.json'}`" in read and f"json.`file:{landing / 'c.json'}`" in read
    assert "b.json" not in read.split("stream_file_rows")[-1] and read.count("json.`") == 2, (
        "only new and replaced files are read"
    )

    # No file change: no commit on the directory table, nothing new downstream.
    version = DeltaTable(str(dbt.warehouse / "analytics.db" / "files")).version()
    result = dbt.run_ok("run", "-s", "files")
    assert DeltaTable(str(dbt.warehouse / "analytics.db" / "files")).version() == version
    assert model_results(result)[0].adapter_response.get("code") == "NO-OP"


def test_include_exclude_and_non_recursive(tmp_path: Path) -> None:
    dbt = project(tmp_path, "include=['*.json', '*.csv'], exclude=['*skip*'], recursive=false")
    landing = tmp_path / "landing"
    write_json(landing / "keep.json", [{"order_id": 1, "amount": 1.0}])
    (landing / "keep.csv").write_text("order_id,amount\n1,1.0\n")
    (landing / "notes.txt").write_text("not matched")
    write_json(landing / "skip_me.json", [])
    write_json(landing / "sub" / "deep.json", [])
    dbt.run_ok("run", "-s", "files")
    assert sorted(row["relative_path"] for row in table_rows(dbt, "files")) == ["keep.csv", "keep.json"]


@pytest.mark.parametrize(
    "config,message",
    [
        # The configs, checked by their spec entries (docs/configuration.md), naming the model.
        ("materialized='directory_table'", "Model files is a directory_table model and needs location, the folder"),
        ("materialized='directory_table', location=' '", "Model files: location must be a folder's path or URI"),
        (
            "materialized='directory_table', location='x', recursive='yes'",
            "Model files: recursive must be true or false",
        ),
        (
            "materialized='directory_table', location='x', include='*.json', exclude=[1]",
            "Model files: exclude must be a glob pattern, or a list of them",
        ),
        (
            "materialized='directory_table', location='x', file_format='parquet'",
            "Model files: invalid file_format 'parquet'. Accepted values: delta",
        ),
        # Spark's own errors name the location.
        ("materialized='directory_table', location='does/not/exist'", "does/not/exist"),
    ],
)
def test_bad_directory_configs_are_refused_and_write_nothing(tmp_path: Path, config: str, message: str) -> None:
    relocate_schemas(tmp_path / "warehouse", ("analytics",))
    dbt = DbtProject(
        tmp_path / "project", tmp_path / "warehouse", models={"files.sql": f"{{{{ config({config}) }}}}\n"}
    )
    result = dbt.invoke("run")
    assert not result.success
    text = str(result.exception) if result.exception else str(model_results(result)[0].message)
    assert message in text, text
    assert not (dbt.warehouse / "analytics.db" / "files").exists()

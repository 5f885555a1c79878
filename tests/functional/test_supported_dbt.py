"""What the package promises on every dbt-core it supports: the default suite runs these on
dbt-core 1.11, and .ci/run runs them again on dbt-core 1.12.0 in a virtualenv of its own
(`-m supported_dbt`). The example project and the conformance project parse with no warning,
with dbt's check of macro arguments against their ymls on (1.12's default), and a table_stream
and a stream_merge apply two windows on the local profile."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.cli.main import dbtRunner
from deltalake import DeltaTable

from tests.functional.streams import StreamBench, stream_model
from tests.spark_sql.render import PACKAGE_ROOT, local_package

pytestmark = pytest.mark.supported_dbt

PROJECTS = {"example_project": "tablestream_example", "integration_tests": "integration_tests"}


def warnings_of_parse(project: Path) -> list[str]:
    """Every warning `dbt parse` reports for `project`, as `[EventName] message`."""
    warnings: list[str] = []

    def collect(event: Any) -> None:
        if event.info.level in ("warn", "error"):
            warnings.append(f"[{event.info.name}] {event.info.msg}")

    dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]
    assert dbtRunner().invoke(["deps", *dirs]).success
    result = dbtRunner(callbacks=[collect]).invoke(["parse", "--no-partial-parse", *dirs])
    assert result.success, result.exception
    return warnings


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_the_project_parses_with_no_warning(tmp_path: Path, name: str) -> None:
    project = tmp_path / name
    shutil.copytree(
        PACKAGE_ROOT / name, project, ignore=shutil.ignore_patterns("target", "dbt_packages", "logs", "warehouse")
    )
    local_package(project)
    # dbt 1.12 checks every macro yml against its macro by default; 1.11 does when asked.
    settings = yaml.safe_load((project / "dbt_project.yml").read_text())
    settings["flags"] = {**(settings.get("flags") or {}), "validate_macro_args": True}
    (project / "dbt_project.yml").write_text(yaml.safe_dump(settings, sort_keys=False))
    profile = {"type": "tablestream", "schema": "analytics", "warehouse": str(tmp_path / "warehouse"), "threads": 1}
    (project / "profiles.yml").write_text(
        yaml.safe_dump({PROJECTS[name]: {"target": "local", "outputs": {"local": profile}}})
    )
    assert warnings_of_parse(project) == []


def test_a_table_stream_and_a_stream_merge_apply_two_windows(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "changes": stream_model(),
            "current": (
                "{{ config(materialized='stream_merge', unique_key='id') }}\n"
                "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
            ),
        },
    )
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.source().update(updates={"age": "age + 10"}, predicate="id = 1")
    bench.source().delete("id = 2")
    bench.append([(3, "c", 3)])
    bench.run()
    source = DeltaTable(bench.source_path()).to_pyarrow_table().to_pylist()
    assert Counter(row[:3] for row in bench.target_rows("current")) == Counter(
        (row["id"], row["name"], row["age"]) for row in source
    )
    logged = Counter((row[0], row[3]) for row in bench.target_rows("changes"))
    assert logged == Counter(
        {
            (1, "INSERT"): 1,
            (2, "INSERT"): 1,
            (1, "UPDATE_BEFORE"): 1,
            (1, "UPDATE_AFTER"): 1,
            (2, "DELETE"): 1,
            (3, "INSERT"): 1,
        }
    )
    assert [row["to_version"] for row in bench.offsets() if row["stream_name"] == "current__app_t"][-1] == (
        DeltaTable(bench.source_path()).version()
    )

"""The conformance suite (integration_tests/run.py) on the local session profile: it passes, and a
planted wrong row in an expected seed fails it, naming the step, the model and the row."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.functional.streams import assert_no_refused_setting
from tests.spark_sql.render import local_package

ROOT = Path(__file__).resolve().parents[2]


def copy_suite(tmp_path: Path, profile: dict[str, object]) -> Path:
    """A copy of integration_tests/ installing this package from this repository, with `profile`
    as its default target."""
    project = tmp_path / "integration_tests"
    shutil.copytree(
        ROOT / "integration_tests",
        project,
        ignore=shutil.ignore_patterns("warehouse", "target", "logs", "dbt_packages", "__pycache__"),
    )
    local_package(project)
    (project / "profiles.yml").write_text(
        yaml.safe_dump({"integration_tests": {"target": "ci", "outputs": {"ci": profile}}})
    )
    return project


def load_run(project: Path) -> ModuleType:
    """The copy's run.py, loaded from the copy so that it drives the copy."""
    spec = importlib.util.spec_from_file_location(f"integration_run_{uuid.uuid4().hex[:8]}", project / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def run_suite(
    tmp_path: Path,
    profile: dict[str, object],
    plant: Callable[[Path], None] | None = None,
    select: list[str] | None = None,
) -> tuple[int, str]:
    """run.py's exit code and its printed lines, on a fresh prefix with a landing folder."""
    project = copy_suite(tmp_path, profile)
    if plant:
        plant(project)
    module = load_run(project)
    lines: list[str] = []
    code = module.main(
        [
            "--profiles-dir",
            str(project),
            "--prefix",
            f"it_{uuid.uuid4().hex[:8]}",
            "--directory",
            str(tmp_path / "landing"),
            *(["--select", *select] if select else []),
        ],
        say=lines.append,
    )
    return code, "\n".join(lines)


def check_passed(code: int, output: str) -> None:
    assert code == 0, output
    summary = re.search(
        r"passed: (\d+) stream models over (\d+) steps \((\d+) of changes\), (\d+) tests, (\d+) refusals", output
    )
    assert summary, output
    stream_models, _, change_steps, tests, refusals = map(int, summary.groups())
    assert stream_models >= 8 and change_steps >= 4 and tests > 0 and refusals == 4, output
    assert len(re.findall(r"^step \d+: .* 0 failed$", output, re.MULTILINE)) == change_steps + 1, output
    assert "directory_table models skipped" not in output
    for model in ("refuse_feed_off", "refuse_feed_gap", "refuse_recreated", "refuse_bad_config"):
        assert f"refused: {model}:" in output, output


def test_the_conformance_suite_passes_on_the_local_session(tmp_path: Path, tablestream_warehouse: Path) -> None:
    profile = {"type": "tablestream", "warehouse": str(tablestream_warehouse), "schema": "analytics", "threads": 2}
    check_passed(*run_suite(tmp_path, profile))


# Opt in (`-m soak`): the suite again, 11 minutes here, where the default suite's 30 cannot hold it.
@pytest.mark.soak
def test_the_conformance_suite_passes_on_an_emulated_sql_warehouse(tmp_path: Path) -> None:
    """Every setting a SQL warehouse refuses is refused (the reapply protocol runs), and none was sent."""
    warehouse = tmp_path / "warehouse"
    profile = {
        "type": "tablestream",
        "warehouse": str(warehouse),
        "schema": "analytics",
        "threads": 2,
        "emulate_sql_warehouse": True,
    }
    check_passed(*run_suite(tmp_path, profile))
    assert_no_refused_setting(warehouse)


def plant_wrong_row(project: Path) -> None:
    """Step 0's expected orders_current says customer 'bob' ordered 21, not 20."""
    seed = project / "seeds" / "expected" / "expected_orders_current.csv"
    text = seed.read_text()
    assert "\n0,2,bob,20,new\n" in text
    seed.write_text(text.replace("\n0,2,bob,20,new\n", "\n0,2,bob,21,new\n"))


# In the extended tier: 120-135 s, and the default suite must stay within 30 minutes (CONTRIBUTING.md).
@pytest.mark.extended
def test_a_planted_wrong_row_names_the_step_the_model_and_the_rows(tmp_path: Path, tablestream_warehouse: Path) -> None:
    profile = {"type": "tablestream", "warehouse": str(tablestream_warehouse), "schema": "analytics", "threads": 2}
    # Only the model whose expected seed is wrong, and its tests: the suite stops at step 0 anyway.
    code, output = run_suite(tmp_path, profile, plant=plant_wrong_row, select=["orders_current+"])
    assert code == 1, output
    assert "step 1:" not in output, "the suite stops at the first difference"
    failure = output[output.index("FAILED") :]
    assert re.search(r"step 0: model orders_current: equals_expected_at_step", failure), failure
    assert re.search(r"__side=unexpected, order_id=2, customer=bob, amount=20\b", failure), failure
    assert re.search(r"__side=missing, order_id=2, customer=bob, amount=21\b", failure), failure

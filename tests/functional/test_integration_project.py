"""integration_tests/ installs this package from `..` and checks models against expected seeds."""

from __future__ import annotations

import shutil
from pathlib import Path

from dbt.cli.main import dbtRunner

ROOT = Path(__file__).resolve().parents[2]


def test_integration_project_builds_and_matches_expected(tmp_path: Path) -> None:
    project = tmp_path / "integration_tests"
    shutil.copytree(
        ROOT / "integration_tests",
        project,
        ignore=shutil.ignore_patterns("warehouse", "target", "logs", "dbt_packages"),
    )
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT.as_posix()}\n")
    args = ["--project-dir", str(project), "--profiles-dir", str(project)]
    assert dbtRunner().invoke(["deps", *args]).success
    result = dbtRunner().invoke(["build", *args])
    assert result.success, result.exception
    statuses = {r.node.name: str(r.status) for r in result.result}
    assert statuses["people_summary"] == "success"
    equality = [name for name in statuses if name.startswith("equals_expected")]
    assert equality and all(statuses[name] == "pass" for name in equality)

"""A throwaway dbt project on `type: tablestream` (the shared local session), driven in-process with dbtRunner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from dbt.cli.main import dbtRunner, dbtRunnerResult

from tests.functional.local import local_profile

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class DbtProject:
    def __init__(
        self,
        root: Path,
        warehouse: Path,
        *,
        models: dict[str, str] | None = None,
        seeds: dict[str, str] | None = None,
        tests: dict[str, str] | None = None,
        profile_extra: dict[str, Any] | None = None,
        schema: str = "analytics",
        profile: dict[str, Any] | None = None,
        on_run_start: list[str] | None = None,
        project_vars: dict[str, Any] | None = None,
    ) -> None:
        self.root = root
        self.warehouse = warehouse
        root.mkdir(parents=True, exist_ok=True)
        project: dict[str, Any] = {"name": "probe", "version": "1.0.0", "config-version": 2, "profile": "probe"}
        if on_run_start:
            project["on-run-start"] = on_run_start
        # The package's test hooks (DBT_TABLESTREAM_FAULT, _PAUSE, _RELEASE) act only in a project
        # that arms them (macros/streams/fault_points.sql): every project of the test suite does.
        project["vars"] = {"tablestream_test_hooks": True, **(project_vars or {})}
        self.project = project
        (root / "dbt_project.yml").write_text(yaml.safe_dump(project))
        # Every probe project installs this repository as the dbt package `dbt_tablestream`.
        (root / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(PACKAGE_ROOT)}]}))
        target = dict(profile or local_profile(schema=schema))
        target.update(profile_extra or {})
        (root / "profiles.yml").write_text(yaml.safe_dump({"probe": {"target": "dev", "outputs": {"dev": target}}}))
        for folder, files in (("models", models), ("seeds", seeds), ("tests", tests)):
            (root / folder).mkdir(exist_ok=True)
            for name, text in (files or {}).items():
                (root / folder / name).write_text(text)

    def set_on_run_start(self, statements: list[str]) -> None:
        """Rewrite the project's on-run-start hooks (none: an empty list)."""
        project = {key: value for key, value in self.project.items() if key != "on-run-start"}
        if statements:
            project["on-run-start"] = statements
        (self.root / "dbt_project.yml").write_text(yaml.safe_dump(project))

    def install_packages(self) -> None:
        if not (self.root / "dbt_packages").exists():
            installed = dbtRunner().invoke(["deps", "--project-dir", str(self.root), "--profiles-dir", str(self.root)])
            assert installed.success, installed.exception

    def invoke(self, *args: str, callbacks: list[Callable[[Any], None]] | None = None) -> dbtRunnerResult:
        """dbt in-process; ``callbacks`` receive every event dbt logs, as they happen."""
        self.install_packages()
        runner = dbtRunner(callbacks=callbacks or [])
        return runner.invoke([*args, "--project-dir", str(self.root), "--profiles-dir", str(self.root)])

    def run_ok(self, *args: str) -> dbtRunnerResult:
        result = self.invoke(*args)
        assert result.success, f"dbt {' '.join(args)} failed: {result.exception or result.result}"
        return result

"""The `tablestream` command's dbt-like surface, without a JVM: --version, dbt's flags and their
DBT_* variables, --output, and `pending` on a project dbt never parsed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dbt_tablestream import __version__
from dbt_tablestream.cli import load_target, main, operation_command, parser


def project(tmp_path: Path) -> Path:
    """A dbt project of profile `main`; profiles.yml has `main` (targets dev, prod) and `other`."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "dbt_project.yml").write_text(yaml.safe_dump({"name": "p", "profile": "main", "config-version": 2}))

    def output(schema: str) -> dict[str, str]:
        return {"type": "tablestream", "schema": schema, "warehouse": str(tmp_path / "warehouse")}

    profiles = {
        "main": {"target": "dev", "outputs": {"dev": output("dev_schema"), "prod": output("prod_schema")}},
        "other": {"target": "ci", "outputs": {"ci": output("ci_schema")}},
    }
    (root / "profiles.yml").write_text(yaml.safe_dump(profiles))
    return root


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"tablestream {__version__}"


def test_dbt_flags_and_their_environment_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    for name in ("DBT_PROJECT_DIR", "DBT_PROFILES_DIR", "DBT_PROFILE", "DBT_TARGET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    def schema(*argv: str) -> str:
        return str(load_target(parser().parse_args(["status", *argv]))[2]["schema"])

    assert schema("--project-dir", str(root)) == "dev_schema"
    assert schema("--project-dir", str(root), "--target", "prod") == "prod_schema"
    assert schema("--project-dir", str(root), "--profile", "other") == "ci_schema"
    monkeypatch.setenv("DBT_PROJECT_DIR", str(root))
    monkeypatch.setenv("DBT_TARGET", "prod")
    assert schema() == "prod_schema"
    monkeypatch.setenv("DBT_PROFILE", "other")
    monkeypatch.delenv("DBT_TARGET")
    assert schema() == "ci_schema"
    assert schema("--profile", "main") == "dev_schema", "a flag wins over its variable"

    args = parser().parse_args(["reset", "s", "--profile", "other", "--target", "ci", "--vars", "{day: 1}", "--json"])
    command = operation_command(root, root, args, "reset_stream", {"stream_name": "s"})
    assert command[command.index("--profile") + 1] == "other"
    assert command[command.index("--target") + 1] == "ci"
    assert command[command.index("--vars") + 1] == "{day: 1}"
    assert args.output == "json" and command[0] == "--quiet"
    assert parser().parse_args(["status", "--output", "json"]).output == "json"
    assert parser().parse_args(["status"]).output == "text"


def test_pending_on_a_project_dbt_never_parsed_says_it_cannot_tell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    monkeypatch.delenv("DBT_TARGET_PATH", raising=False)
    for argv in (["pending"], ["pending", "--exit-code"], ["pending", "--output", "json"]):
        assert main([*argv, "--project-dir", str(root)]) == 3
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "cannot tell which stream models are pending" in captured.err
        assert "manifest.json is missing" in captured.err and "Run `dbt parse` first" in captured.err
    # With a manifest, a stream model that never ran is pending (its first build).
    manifest = root / "target" / "manifest.json"
    manifest.parent.mkdir()
    node = {"resource_type": "model", "name": "log", "schema": "dev_schema", "config": {"materialized": "table_stream"}}
    manifest.write_text(json.dumps({"nodes": {"model.p.log": node}}))
    assert main(["pending", "--exit-code", "--project-dir", str(root)]) == 0
    assert capsys.readouterr().out.split() == ["log+"]

"""The `tablestream` command's dbt-like surface, without a JVM: --version, dbt's flags and their
DBT_* variables, the profile read by dbt's loader, --output json (errors included), the exit codes
that need no stream, and `pending` on a project dbt never parsed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dbt_tablestream import __version__
from dbt_tablestream._macros import render
from dbt_tablestream.cli import load_target, main, no_such_stream_prefix, operation_command, operation_error, parser
from dbt_tablestream.exceptions import NoSuchStreamError


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
    assert schema("--project-dir", str(root), "-t", "prod") == "prod_schema", "-t is dbt's short --target"
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
    for argv in (["pending"], ["pending", "--exit-code"]):
        assert main([*argv, "--project-dir", str(root)]) == 3
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "cannot tell which stream models are pending" in captured.err
        assert "manifest.json is missing" in captured.err and "Run `dbt parse` first" in captured.err
    # In JSON mode the error is the one document on stdout.
    for argv in (["pending", "--output", "json"], ["pending", "--exit-code", "--json"]):
        assert main([*argv, "--project-dir", str(root)]) == 3
        captured = capsys.readouterr()
        document = json.loads(captured.out)
        assert document["exit_code"] == 3 and "Run `dbt parse` first" in document["error"], document
        assert sorted(document) == ["error", "exit_code"] and captured.err == ""
    # With a manifest, a stream model that never ran is pending (its first build).
    manifest = root / "target" / "manifest.json"
    manifest.parent.mkdir()
    node = {"resource_type": "model", "name": "log", "schema": "dev_schema", "config": {"materialized": "table_stream"}}
    manifest.write_text(json.dumps({"nodes": {"model.p.log": node}}))
    assert main(["pending", "--exit-code", "--project-dir", str(root)]) == 0
    assert capsys.readouterr().out.split() == ["log+"]


def json_error(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """The one JSON document on stdout, which must be an error."""
    document = json.loads(capsys.readouterr().out)
    assert sorted(document) == ["error", "exit_code"], document
    return document


def test_errors_in_json_are_one_document_with_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    for name in ("DBT_PROJECT_DIR", "DBT_PROFILES_DIR", "DBT_PROFILE", "DBT_TARGET"):
        monkeypatch.delenv(name, raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Every subcommand, on a directory that is no dbt project: exit 2, its error alone on stdout.
    for argv in (
        ["status"],
        ["status", "--check"],
        ["history", "s"],
        ["pending"],
        ["describe", "s"],
        ["drop", "s", "--dry-run"],
        ["reset", "s"],
        ["vacuum", "app.t"],
    ):
        assert main([*argv, "--project-dir", str(elsewhere), "--output", "json"]) == 2, argv
        document = json_error(capsys)
        assert document == {
            "error": f"No dbt_project.yml in {elsewhere.resolve()}: run tablestream in a dbt project, or pass --project-dir.",
            "exit_code": 2,
        }
    # dbt's own refusal of an unknown target, with the targets there.
    assert main(["status", "--project-dir", str(root), "-t", "nope", "--json"]) == 2
    error = str(json_error(capsys)["error"])
    assert "does not have a target named 'nope'" in error and "dev" in error and "prod" in error, error
    assert main(["status", "--project-dir", str(root), "--profile", "missing", "--json"]) == 2
    assert "Profile 'missing'" in str(json_error(capsys)["error"])
    # A command line argparse refuses is a JSON error too, when JSON was asked for.
    assert main(["reset", "s", "--to-version", "1", "--to-timestamp", "x", "--json", "--project-dir", str(root)]) == 2
    assert "not allowed with argument" in str(json_error(capsys)["error"])
    assert main(["status", "--bogus", "--project-dir", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "unrecognized arguments: --bogus" in captured.err


def test_exit_1_for_no_such_stream_and_0_for_no_streams_without_a_jvm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the local profile history and status read the offsets logs with delta-rs: a warehouse
    without any says so."""
    root = str(project(tmp_path))
    assert main(["history", "nope", "--project-dir", root, "--json"]) == 1
    document = json_error(capsys)
    assert document["exit_code"] == 1
    assert document["error"] == str(render("_no_such_stream_message", "nope", ["dev_schema.tablestream_offsets"], []))
    assert main(["history", "nope", "--project-dir", root, "--schema", "other"]) == 1
    captured = capsys.readouterr()
    assert (
        captured.out == ""
        and "tablestream: No stream or stream model nope in other.tablestream_offsets" in captured.err
    )
    assert main(["status", "--project-dir", root, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["status", "--project-dir", root]) == 0
    assert "No streams yet" in capsys.readouterr().out


def test_a_failed_operation_is_no_such_stream_only_on_the_packages_refusal() -> None:
    """The run-operation path tells "no such stream" (exit 1) from other errors by the package's
    own message (_no_such_stream_message), as dbt reports it."""
    assert no_such_stream_prefix() == "No stream or stream model "
    refusal = str(render("_no_such_stream_message", "x", ["a.tablestream_offsets"], ["s"]))
    wrapped = (
        "Compilation Error in macro stream_history (macros/operations/stream_history.sql)\n"
        "  Compilation Error in macro _find_stream_positions (macros/operations/stream_positions.sql)\n"
        f"    {refusal}\n\n"
        "    > in macro _find_stream_positions (macros/operations/stream_positions.sql)\n"
        "    > called by macro stream_history (macros/operations/stream_history.sql)"
    )
    error = operation_error("drop_stream", wrapped)
    assert isinstance(error, NoSuchStreamError) and str(error) == refusal
    other = operation_error(
        "vacuum_source", "Compilation Error in macro spark__vacuum_source (x.sql)\n  no table app.t"
    )
    assert not isinstance(other, NoSuchStreamError) and str(other) == "no table app.t"
    assert "run it with dbt" in str(operation_error("show_streams", None))


def test_the_profile_is_rendered_by_dbt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """env_var and var (from --vars) in profiles.yml, and dbt's default target `default`."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "dbt_project.yml").write_text(yaml.safe_dump({"name": "p", "profile": "rendered", "config-version": 2}))
    profiles = {
        "rendered": {
            "target": "{{ env_var('TABLESTREAM_TEST_TARGET', 'dev') }}",
            "outputs": {
                "dev": {"type": "tablestream", "schema": "{{ var('schema_suffix', 'plain') }}_dev"},
                "ci": {"type": "tablestream", "schema": "{{ env_var('TABLESTREAM_TEST_SCHEMA') }}"},
            },
        },
        "untargeted": {"outputs": {"default": {"type": "tablestream", "schema": "fallback"}}},
    }
    (root / "profiles.yml").write_text(yaml.safe_dump(profiles))
    for name in ("DBT_PROJECT_DIR", "DBT_PROFILES_DIR", "DBT_PROFILE", "DBT_TARGET", "TABLESTREAM_TEST_TARGET"):
        monkeypatch.delenv(name, raising=False)

    def schema(*argv: str) -> str:
        return str(load_target(parser().parse_args(["status", "--project-dir", str(root), *argv]))[2]["schema"])

    assert schema() == "plain_dev"
    assert schema("--vars", "{schema_suffix: given}") == "given_dev"
    monkeypatch.setenv("TABLESTREAM_TEST_TARGET", "ci")
    monkeypatch.setenv("TABLESTREAM_TEST_SCHEMA", "from_env")
    assert schema() == "from_env"
    assert schema("--profile", "untargeted") == "fallback"

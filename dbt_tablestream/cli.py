"""The `tablestream` command: the streams of a dbt project, their position, lag and health.

    tablestream status [--check]                    every stream: offset, lag, last run
    tablestream history STREAM                      the offsets log of one stream
    tablestream describe STREAM                     one stream in detail: lag, health, when it goes stale
    tablestream pending [--exit-code]               the stream models with changes to apply, as dbt selectors
                                                    (exit 3 when it cannot tell: dbt has not parsed the project)
    tablestream vacuum SOURCE [--retain-hours N] [--dry-run] [--force]
                                                    VACUUM a source, keeping what its streams still need
    tablestream reset STREAM [--to-version N | --to-timestamp TS] [--dry-run]
    tablestream drop STREAM                         forget a stream; its target is kept

STREAM is a stream (`<model>__<source>_<table>`, or its `stream_name`) or a stream model (each of
its streams). Every command takes dbt's `--project-dir`, `--profiles-dir`, `--profile`, `--target`
and `--vars` (and their DBT_* variables), `--schema` (default: every schema holding the project's
streams) and `--output text|json` (`--json`).

On the local profile (`type: tablestream`) `status`, `history` and `pending` read the offsets logs
and the sources' Delta logs with delta-rs and start no Spark. `status --check`, every other
profile, `describe`, `vacuum`, `reset` and `drop` run the package's dbt operations (`dbt
run-operation dbt_tablestream.<name>`) with the project's profile; `show_streams` also checks that
each stream's next window can be read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from dbt_tablestream import __version__
from dbt_tablestream._status import status_table, statuses_json, table
from dbt_tablestream.exceptions import PendingUnknownError, ProfileError, TablestreamError

ENV_VAR = re.compile(r"""\{\{\s*env_var\(\s*['"]([^'"]+)['"]\s*(?:,\s*['"]([^'"]*)['"]\s*)?\)\s*\}\}""")
HISTORY_COLUMNS = ("epoch", "mode", "from", "to", "rows", "committed at", "invocation")
# The commands that are one stream operation and nothing else: the macro each runs, and its help.
STREAM_OPERATIONS = {
    "describe": ("describe_stream", "one stream in detail: position, lag, health, recent runs"),
    "drop": ("drop_stream", "forget a stream (its target is kept; its next run starts over)"),
}
STREAM_HELP = "a stream (`<model>__<source>_<table>`, or its stream_name) or a stream model (each of its streams)"


def parser() -> argparse.ArgumentParser:
    # dbt's flags and the DBT_* variables that stand for them, with dbt's defaults.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--project-dir",
        default=os.environ.get("DBT_PROJECT_DIR", "."),
        help="the dbt project (default: $DBT_PROJECT_DIR, else the current directory)",
    )
    common.add_argument(
        "--profiles-dir", help="where profiles.yml is (default: $DBT_PROFILES_DIR, the project, then ~/.dbt)"
    )
    common.add_argument(
        "--profile",
        default=os.environ.get("DBT_PROFILE"),
        help="the profile (default: $DBT_PROFILE, else dbt_project.yml's)",
    )
    common.add_argument(
        "--target",
        default=os.environ.get("DBT_TARGET"),
        help="the profile target (default: $DBT_TARGET, else the profile's)",
    )
    common.add_argument("--vars", help="dbt's --vars (a YAML dictionary), passed to the dbt operations it runs")
    common.add_argument("--schema", help="the schema whose offsets log to read (default: the target's)")
    common.add_argument(
        "--output",
        choices=("text", "json"),
        default="text",
        help="text for people (default), json for scripts (one document on stdout)",
    )
    common.add_argument("--json", dest="output", action="store_const", const="json", help="the same as --output json")
    # allow_abbrev=False: `--force` must be spelled out, never reached from `--f`.
    root = argparse.ArgumentParser(prog="tablestream", description=__doc__.split("\n\n")[0], allow_abbrev=False)
    root.add_argument("--version", action="version", version=f"tablestream {__version__}")
    commands = root.add_subparsers(dest="command", required=True)
    status = commands.add_parser(
        "status", parents=[common], allow_abbrev=False, help="every stream: offset, lag, last run"
    )
    status.add_argument(
        "--check", action="store_true", help="also check each stream's next window through dbt (starts Spark)"
    )
    history = commands.add_parser("history", parents=[common], allow_abbrev=False, help="the offsets log of one stream")
    history.add_argument("stream", help=STREAM_HELP)
    pending = commands.add_parser(
        "pending",
        parents=[common],
        allow_abbrev=False,
        help="the stream models whose source has data changes past their offset, one dbt selector (`model+`) a line",
    )
    pending.add_argument("--exit-code", action="store_true", help="exit 0 if any stream model is pending, 1 if none is")
    vacuum = commands.add_parser(
        "vacuum", parents=[common], allow_abbrev=False, help="VACUUM a source, keeping every file its live streams need"
    )
    vacuum.add_argument("source", help="the Delta table, as schema.table")
    vacuum.add_argument(
        "--retain-hours",
        type=float,
        help="the retention asked for (default: the table's delta.deletedFileRetentionDuration); "
        "a live stream's oldest unconsumed commit can only lengthen it",
    )
    vacuum.add_argument("--dry-run", action="store_true", help="report what would be deleted; delete nothing")
    vacuum.add_argument("--force", action="store_true", help="ignore the streams: VACUUM with --retain-hours as given")
    reset = commands.add_parser("reset", parents=[common], allow_abbrev=False, help="move a stream (a new epoch)")
    reset.add_argument("stream", help=STREAM_HELP)
    where = reset.add_mutually_exclusive_group()
    where.add_argument("--to-version", type=int, help="continue with the changes after this source version")
    where.add_argument("--to-timestamp", help="continue after the last source version at or before this ISO-8601 time")
    reset.add_argument("--dry-run", action="store_true", help="say what it would do; write nothing")
    for command, (_, description) in STREAM_OPERATIONS.items():
        commands.add_parser(command, parents=[common], allow_abbrev=False, help=description).add_argument(
            "stream", help=STREAM_HELP
        )
    return root


def render_env(value: Any) -> Any:
    if isinstance(value, str):
        return ENV_VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, dict):
        return {key: render_env(item) for key, item in value.items()}
    return value


def profiles_dir(args: argparse.Namespace, project_dir: Path) -> Path:
    if args.profiles_dir:
        return Path(args.profiles_dir)
    if os.environ.get("DBT_PROFILES_DIR"):
        return Path(os.environ["DBT_PROFILES_DIR"])
    if (project_dir / "profiles.yml").exists():
        return project_dir
    return Path.home() / ".dbt"


def load_target(args: argparse.Namespace) -> tuple[Path, Path, dict[str, Any]]:
    """The project directory, the profiles directory and the target's settings, as dbt resolves them."""
    project_dir = Path(args.project_dir).resolve()
    project_file = project_dir / "dbt_project.yml"
    if not project_file.exists():
        raise ProfileError(
            f"No dbt_project.yml in {project_dir}: run tablestream in a dbt project, or pass --project-dir."
        )
    profile_name = args.profile or yaml.safe_load(project_file.read_text()).get("profile")
    directory = profiles_dir(args, project_dir)
    profiles_file = directory / "profiles.yml"
    if not profiles_file.exists():
        raise ProfileError(f"No profiles.yml in {directory}: pass --profiles-dir or set DBT_PROFILES_DIR.")
    profile = (yaml.safe_load(profiles_file.read_text()) or {}).get(profile_name)
    if not profile:
        raise ProfileError(f"Profile {profile_name!r} (from dbt_project.yml) is not in {profiles_file}.")
    target_name = args.target or render_env(profile.get("target", "dev"))
    outputs = profile.get("outputs", {})
    if target_name not in outputs:
        raise ProfileError(f"Target {target_name!r} is not in profile {profile_name!r}; targets: {', '.join(outputs)}.")
    return project_dir, directory, render_env(outputs[target_name])


def local_warehouse(project_dir: Path, target: dict[str, Any]) -> Path:
    from dbt_tablestream._warehouse import warehouse_path

    return warehouse_path(target.get("warehouse"), project_dir)


def operation_command(
    project_dir: Path, directory: Path, args: argparse.Namespace, macro: str, macro_args: dict, *, quiet: bool = False
) -> list[str]:
    """dbt's arguments for `dbt run-operation dbt_tablestream.<macro>` with the command's dbt flags."""
    # With --output json (or quiet), stdout holds what the macro prints alone: dbt's own log lines are quieted.
    command = [
        *(["--quiet"] if quiet or args.output == "json" else []),
        "run-operation",
        f"dbt_tablestream.{macro}",
        "--args",
        json.dumps(macro_args),
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(directory),
    ]
    for flag, value in (("--target", args.target), ("--profile", args.profile), ("--vars", args.vars)):
        if value:
            command += [flag, value]
    return command


def run_operation(
    project_dir: Path,
    directory: Path,
    args: argparse.Namespace,
    macro: str,
    macro_args: dict,
    *,
    quiet: bool = False,
    printed: list[str] | None = None,
) -> int:
    """`dbt run-operation dbt_tablestream.<macro>`; ``printed`` collects what the macro prints."""
    from dbt.cli.main import dbtRunner

    def collect(event: Any) -> None:
        if printed is not None and event.info.name == "PrintEvent":
            printed.append(event.data.msg)

    command = operation_command(project_dir, directory, args, macro, macro_args, quiet=quiet)
    result = dbtRunner(callbacks=[collect]).invoke(command)
    return 0 if result.success else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 done (pending: a model is pending, with --exit-code), 1 nothing found (pending
    with --exit-code: nothing pending; history: no such stream), 2 an error, 3 pending cannot tell."""
    args = parser().parse_args(argv)
    args.json = args.output == "json"
    try:
        project_dir, directory, target = load_target(args)
        schema = args.schema or target.get("schema")
        local = target.get("type") == "tablestream"
        schemas = [args.schema] if args.schema else None
        if args.command == "status" and local and not args.check:
            from dbt_tablestream._offsets import stream_statuses

            warehouse = local_warehouse(project_dir, target)
            statuses = [
                status
                for each_schema in schemas or offsets_schemas(project_dir, target) or [str(schema)]
                for status in stream_statuses(warehouse, each_schema)
            ]
            print(statuses_json(statuses) if args.json else status_table(statuses))
            if not args.json:
                print(
                    "\n(stale: not checked here; `tablestream status --check` asks Spark whether each next window can be read)"
                )
            return 0
        if args.command == "history" and local:
            from dbt_tablestream._offsets import stream_history

            listed = schemas or offsets_schemas(project_dir, target) or [str(schema)]
            rows = stream_history(local_warehouse(project_dir, target), listed, args.stream)
            if not rows:
                logs = ", ".join(f"{each}.tablestream_offsets" for each in listed)
                print(f"No stream or stream model {args.stream} in {logs}.", file=sys.stderr)
                return 1
            print(json.dumps(rows, indent=2, default=str) if args.json else history_table(rows))
            return 0
        if args.command == "pending":
            return pending(project_dir, directory, args, target, local, schema=args.schema)
        if args.command == "vacuum":
            return run_operation(
                project_dir,
                directory,
                args,
                "vacuum_source",
                {
                    "relation": args.source,
                    "retain_hours": args.retain_hours,
                    "dry_run": args.dry_run,
                    "force": args.force,
                    "schemas": [args.schema]
                    if args.schema
                    else offsets_schemas(project_dir, target)
                    if local
                    else None,
                },
            )
        if args.command == "status":
            return run_operation(
                project_dir,
                directory,
                args,
                "show_streams",
                {"schema": args.schema, "format": "json" if args.json else "table"},
            )
        if args.command == "history":
            return run_operation(
                project_dir,
                directory,
                args,
                "stream_history",
                {"stream_name": args.stream, "schema": args.schema, "format": "json" if args.json else "table"},
            )
        if args.command in STREAM_OPERATIONS:
            macro = STREAM_OPERATIONS[args.command][0]
            return run_operation(
                project_dir, directory, args, macro, {"stream_name": args.stream, "schema": args.schema}
            )
        return run_operation(
            project_dir,
            directory,
            args,
            "reset_stream",
            {
                "stream_name": args.stream,
                "to_version": args.to_version,
                "to_timestamp": args.to_timestamp,
                "schema": args.schema,
                "dry_run": args.dry_run,
            },
        )
    except PendingUnknownError as error:
        print(f"tablestream: {error}", file=sys.stderr)
        return 3
    except TablestreamError as error:
        print(f"tablestream: {error}", file=sys.stderr)
        return 2


def pending(
    project_dir: Path,
    directory: Path,
    args: argparse.Namespace,
    target: dict[str, Any],
    local: bool,
    schema: str | None,
) -> int:
    """Print the pending stream models (selectors, or JSON); with --exit-code, 0 if any, 1 if none."""
    if local:
        from dbt_tablestream._pending import pending_streams, selectors

        entries = pending_streams(project_dir, local_warehouse(project_dir, target), schema, str(target.get("schema")))
        if args.json:
            print(json.dumps(entries, indent=2, default=str))
        elif entries:
            print("\n".join(selectors(entries)))
        found = bool(entries)
    else:
        printed: list[str] = []
        code = run_operation(
            project_dir,
            directory,
            args,
            "pending_streams",
            {"schema": schema, "format": "json" if args.json else "lines"},
            quiet=True,
            printed=printed,
        )
        if code:
            return 2
        found = any(json.loads(line) if args.json else line.strip() for line in printed)
    return (0 if found else 1) if args.exit_code else 0


def offsets_schemas(project_dir: Path, target: dict[str, Any]) -> list[str]:
    """The schemas of the local warehouse that hold an offsets log."""
    from dbt_tablestream._offsets import OFFSETS_TABLE

    warehouse = local_warehouse(project_dir, target)
    if not warehouse.is_dir():
        return []
    return sorted(
        entry.name[: -len(".db")]
        for entry in warehouse.iterdir()
        if entry.name.endswith(".db") and (entry / OFFSETS_TABLE / "_delta_log").is_dir()
    )


def history_table(rows: list[dict[str, Any]]) -> str:
    """The offsets-log rows as a text table; with a stream column when they are of several streams
    (a model reading several sources)."""

    def cell(value: Any) -> str:
        return "-" if value is None else str(value)

    several = len({row["stream_name"] for row in rows}) > 1
    body = [
        (
            *((cell(row["stream_name"]),) if several else ()),
            cell(row["epoch"]),
            cell(row["mode"]),
            cell(row["from_version"]),
            cell(row["to_version"]),
            cell(row["rows_written"]),
            cell(row["committed_at"]),
            cell(row["invocation_id"]),
        )
        for row in rows
    ]
    return table((*(("stream",) if several else ()), *HISTORY_COLUMNS), body)


def console_main() -> None:
    """The `tablestream` console command: main(), then exit without the interpreter's teardown,
    where pyarrow can abort a process whose work is done (docs/architecture.md, "Exiting without an
    abort"). main() stays importable for callers that go on running.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    console_main()

"""The `tablestream` command: the streams of a dbt project, their position, lag and health.

    tablestream status [--check]                    every stream: offset, lag, last run
    tablestream history STREAM                      the offsets log of one stream
    tablestream describe STREAM                     one stream in detail: lag, health, when it goes stale
    tablestream pending [--exit-code]               the stream models with changes to apply, as dbt selectors
                                                    (exit 3 when it cannot tell: dbt has not parsed the project)
    tablestream vacuum SOURCE [--retain-hours N] [--dry-run] [--force]
                                                    VACUUM a source, keeping what its streams still need
    tablestream reset STREAM [--to-version N | --to-timestamp TS] [--dry-run]
    tablestream drop STREAM [--dry-run]             forget a stream; its target is kept

STREAM is a stream (`<model>__<source>_<table>`, or its `stream_name`) or a stream model (each of
its streams). Every command takes dbt's `--project-dir`, `--profiles-dir`, `--profile`, `--target`
(`-t`) and `--vars` (and their DBT_* variables), `--schema` (default: every schema holding the
project's streams) and `--output text|json` (`--json`: one JSON document on stdout, an error too:
`{"error": ..., "exit_code": N}`). The profile is read and rendered by dbt's own loader.

Exit codes: 0 done (`pending --exit-code`: something is pending), 1 nothing pending (`pending
--exit-code`) or no such stream, 2 an error, 3 `pending` cannot tell (dbt has not parsed the project).

On the local profile (`type: tablestream`) `status`, `history` and `pending` read the offsets logs
and the sources' Delta logs with delta-rs and start no Spark. `status --check`, every other
profile, `describe`, `vacuum`, `reset` and `drop` run the package's dbt operations (`dbt
run-operation dbt_tablestream.<name>`) with the project's profile; `show_streams` also checks that
each stream's next window can be read. Both paths report the package macros' documents
(`_stream_status_document`, `_stream_history_entry`): the same keys, types and order.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml

from dbt_tablestream import __version__
from dbt_tablestream._status import history_table, status_table
from dbt_tablestream.exceptions import NoSuchStreamError, PendingUnknownError, ProfileError, TablestreamError

# The commands that are one stream operation and nothing else: the macro each runs, and its help.
STREAM_OPERATIONS = {
    "describe": ("describe_stream", "one stream in detail: position, lag, health, recent runs"),
    "drop": ("drop_stream", "forget a stream (its target is kept; its next run starts over)"),
}
STREAM_HELP = "a stream (`<model>__<source>_<table>`, or its stream_name) or a stream model (each of its streams)"
# How many offsets-log rows `history` shows of each stream, on either path.
HISTORY_LIMIT = 50
# Exit codes (README, "Operating streams").
DONE, NOTHING, ERROR, CANNOT_TELL = 0, 1, 2, 3
# dbt's framing of an error raised in a macro: a "Compilation Error in macro X (path)" line (one
# per macro it passed through) and "> in macro ..." / "> called by macro ..." lines.
DBT_ERROR_FRAME = re.compile(r"^(?:(?:Compilation|Runtime|Database) Error(?: in .*)?|> .*)$")


class ArgumentError(TablestreamError):
    """The command line cannot be parsed (argparse's message)."""


class Parser(argparse.ArgumentParser):
    """argparse, raising instead of exiting, so that a bad command line is one JSON error too."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(f"{self.prog}: {message}")


def parser() -> argparse.ArgumentParser:
    # dbt's flags and the DBT_* variables that stand for them, with dbt's defaults.
    common = Parser(add_help=False)
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
        "-t",
        "--target",
        default=os.environ.get("DBT_TARGET"),
        help="the profile target (default: $DBT_TARGET, else the profile's)",
    )
    common.add_argument(
        "--vars", help="dbt's --vars (a YAML dictionary), for the profile and the dbt operations it runs"
    )
    common.add_argument(
        "--schema",
        help="only the streams whose offsets log is in this schema (default: every schema holding the project's "
        "streams: each stream model's schema and the target's; on the local profile status and history read every "
        "offsets log in the warehouse, and vacuum always reads every offsets log unless given one)",
    )
    common.add_argument(
        "--output",
        choices=("text", "json"),
        default="text",
        help="text for people (default), json for scripts: one JSON document on stdout, an error too",
    )
    common.add_argument("--json", dest="output", action="store_const", const="json", help="the same as --output json")
    # allow_abbrev=False: `--force` must be spelled out, never reached from `--f`.
    root = Parser(prog="tablestream", description=__doc__.split("\n\n")[0], allow_abbrev=False)
    root.add_argument("--version", action="version", version=f"tablestream {__version__}")
    commands = root.add_subparsers(dest="command", required=True, parser_class=Parser)
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
        operation = commands.add_parser(command, parents=[common], allow_abbrev=False, help=description)
        operation.add_argument("stream", help=STREAM_HELP)
        if command == "drop":
            operation.add_argument("--dry-run", action="store_true", help="say what it would drop; write nothing")
    return root


def profiles_dir(args: argparse.Namespace, project_dir: Path) -> Path:
    if args.profiles_dir:
        return Path(args.profiles_dir)
    if os.environ.get("DBT_PROFILES_DIR"):
        return Path(os.environ["DBT_PROFILES_DIR"])
    if (project_dir / "profiles.yml").exists():
        return project_dir
    return Path.home() / ".dbt"


def load_target(args: argparse.Namespace) -> tuple[Path, Path, dict[str, Any]]:
    """The project directory, the profiles directory and the target's settings, read and rendered
    by dbt's own profile loader (env_var, var from --vars, the target's default), without loading
    the adapter: no Spark, and no local extra needed."""
    from dbt.config.profile import Profile, read_profile
    from dbt.config.renderer import ProfileRenderer
    from dbt.config.utils import parse_cli_vars
    from dbt_common.context import set_invocation_context
    from dbt_common.exceptions import DbtBaseException

    project_dir = Path(args.project_dir).resolve()
    project_file = project_dir / "dbt_project.yml"
    if not project_file.exists():
        raise ProfileError(
            f"No dbt_project.yml in {project_dir}: run tablestream in a dbt project, or pass --project-dir."
        )
    directory = profiles_dir(args, project_dir)
    # env_var() reads the invocation's environment, which dbt sets as each of its commands starts.
    set_invocation_context(os.environ)
    try:
        renderer = ProfileRenderer(parse_cli_vars(args.vars) if args.vars else {})
        profile_name = args.profile or renderer.render_value(
            (yaml.safe_load(project_file.read_text()) or {}).get("profile")
        )
        raw_profiles = read_profile(str(directory))
        if not raw_profiles:
            raise ProfileError(f"No profiles.yml in {directory}: pass --profiles-dir or set DBT_PROFILES_DIR.")
        raw_profile = raw_profiles.get(profile_name)
        if not raw_profile:
            raise ProfileError(
                f"Profile {profile_name!r} (from dbt_project.yml or --profile) is not in {directory / 'profiles.yml'}; "
                f"profiles there: {', '.join(name for name in raw_profiles if name != 'config') or 'none'}."
            )
        # dbt's own default target when a profile names none.
        target_name = args.target or (
            renderer.render_value(raw_profile["target"]) if "target" in raw_profile else "default"
        )
        _, target = Profile.render_profile(raw_profile, profile_name, target_name, renderer)
    except DbtBaseException as error:
        raise ProfileError(f"{directory / 'profiles.yml'}: {str(error).strip()}") from error
    return project_dir, directory, target


def local_warehouse(project_dir: Path, target: dict[str, Any]) -> Path:
    from dbt_tablestream._warehouse import warehouse_path

    return warehouse_path(target.get("warehouse"), project_dir)


def operation_command(
    project_dir: Path,
    directory: Path,
    args: argparse.Namespace,
    macro: str,
    macro_args: dict[str, Any],
    *,
    quiet: bool = False,
) -> list[str]:
    """dbt's arguments for `dbt run-operation dbt_tablestream.<macro>` with the command's dbt flags."""
    # With --output json (or quiet), dbt logs errors only: the command prints the macro's document.
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


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Everything written to stdout goes to stderr meanwhile: dbt's log, and what Spark's JVM
    (Ivy's resolution of the Delta jars) writes to the process's stdout."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:
        saved = None
    try:
        if saved is not None:
            os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def no_such_stream_prefix() -> str:
    """How the package's refusal of an unknown stream begins (_no_such_stream_message)."""
    from dbt_tablestream._macros import render

    marker = "\x00"
    return str(render("_no_such_stream_message", marker, [], [])).partition(marker)[0]


def operation_error(macro: str, message: str | None) -> TablestreamError:
    """The error of a failed operation: its message without dbt's header; no such stream, or another."""
    if not message:
        return TablestreamError(
            f"dbt run-operation dbt_tablestream.{macro} failed before it ran; run it with dbt to see dbt's log."
        )
    lines = (line.strip() for line in message.splitlines())
    text = "\n".join(line for line in lines if line and not DBT_ERROR_FRAME.match(line))
    return NoSuchStreamError(text) if no_such_stream_prefix() in text else TablestreamError(text)


def run_operation(command: list[str], args: argparse.Namespace) -> list[str]:
    """Runs `command` (operation_command's `dbt run-operation dbt_tablestream.<macro>`): what the
    macro printed, or its error raised. In JSON mode nothing reaches stdout meanwhile: the caller
    prints the one document."""
    from dbt.cli.main import dbtRunner

    printed: list[str] = []
    errors: list[str] = []

    def collect(event: Any) -> None:
        if event.info.name == "PrintEvent":
            printed.append(event.data.msg)
        elif event.info.name in ("RunningOperationCaughtError", "RunningOperationUncaughtError"):
            errors.append(event.data.exc)

    macro = command[command.index("run-operation") + 1].removeprefix("dbt_tablestream.")
    with stdout_to_stderr() if args.json else contextlib.nullcontext():
        result = dbtRunner(callbacks=[collect]).invoke(command)
    if not result.success:
        raise operation_error(macro, errors[-1] if errors else str(result.exception or "") or None)
    return printed


def operation_document(printed: list[str], macro: str) -> Any:
    """The one JSON document a macro printed with `format: json`."""
    documents = [line for line in printed if line.strip()]
    if len(documents) != 1:
        raise TablestreamError(f"dbt_tablestream.{macro} printed {len(documents)} documents, not one JSON document.")
    return json.loads(documents[0])


def emit(args: argparse.Namespace, document: Any, text: str | None) -> None:
    if args.json:
        print(json.dumps(document, indent=2, default=str))
    elif text is not None:
        print(text)


def json_requested(argv: Sequence[str]) -> bool:
    """Whether a command line asks for JSON, read before (or without) parsing it."""
    listed = list(argv)
    return (
        "--json" in listed
        or "--output=json" in listed
        or any(flag == "--output" and value == "json" for flag, value in itertools.pairwise(listed))
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 done (pending: a model is pending, with --exit-code), 1 nothing found (pending
    with --exit-code: nothing pending; no such stream), 2 an error, 3 pending cannot tell. In JSON
    mode an error is the one document: {"error": message, "exit_code": code}."""
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = json_requested(argv)
    try:
        args = parser().parse_args(argv)
        args.json = args.output == "json"
        return command(args)
    except NoSuchStreamError as error:
        return failed(as_json, str(error), NOTHING)
    except PendingUnknownError as error:
        return failed(as_json, str(error), CANNOT_TELL)
    except TablestreamError as error:
        return failed(as_json, str(error), ERROR)
    except Exception as error:
        # Any other failure is an error too: exit 2 with its message, JSON or not.
        return failed(as_json, f"{type(error).__name__}: {error}", ERROR)


def failed(as_json: bool, message: str, code: int) -> int:
    if as_json:
        print(json.dumps({"error": message, "exit_code": code}, indent=2))
    else:
        print(f"tablestream: {message}", file=sys.stderr)
    return code


def command(args: argparse.Namespace) -> int:
    project_dir, directory, target = load_target(args)
    schema = args.schema or target.get("schema")
    local = target.get("type") == "tablestream"
    schemas = [args.schema] if args.schema else None

    def operation(macro: str, macro_args: dict[str, Any]) -> int:
        """Runs a macro that takes `format`; in JSON mode prints its document."""
        printed = run_operation(operation_command(project_dir, directory, args, macro, macro_args), args)
        if args.json:
            emit(args, operation_document(printed, macro), None)
        return DONE

    if args.command == "status" and local and not args.check:
        from dbt_tablestream._offsets import stream_statuses

        warehouse = local_warehouse(project_dir, target)
        statuses = [
            status
            for each_schema in schemas or offsets_schemas(project_dir, target) or [str(schema)]
            for status in stream_statuses(warehouse, each_schema)
        ]
        emit(
            args,
            statuses,
            status_table(statuses)
            + "\n\n(stale: not checked here; `tablestream status --check` asks Spark whether each next window can be read)",
        )
        return DONE
    if args.command == "history" and local:
        from dbt_tablestream._macros import render
        from dbt_tablestream._offsets import stream_history, stream_names

        listed = schemas or offsets_schemas(project_dir, target) or [str(schema)]
        warehouse = local_warehouse(project_dir, target)
        rows = stream_history(warehouse, listed, args.stream, HISTORY_LIMIT)
        if not rows:
            logs = [f"{each}.tablestream_offsets" for each in listed]
            raise NoSuchStreamError(
                str(render("_no_such_stream_message", args.stream, logs, stream_names(warehouse, listed)))
            )
        emit(args, rows, history_table(rows))
        return DONE
    if args.command == "pending":
        return pending(project_dir, directory, args, target, local, schema=args.schema)
    output = "json" if args.json else None
    if args.command == "vacuum":
        return operation(
            "vacuum_source",
            {
                "relation": args.source,
                "retain_hours": args.retain_hours,
                "dry_run": args.dry_run,
                "force": args.force,
                "schemas": [args.schema] if args.schema else offsets_schemas(project_dir, target) if local else None,
                "format": output or "text",
            },
        )
    if args.command == "status":
        return operation("show_streams", {"schema": args.schema, "format": output or "table"})
    if args.command == "history":
        return operation(
            "stream_history",
            {"stream_name": args.stream, "schema": args.schema, "limit": HISTORY_LIMIT, "format": output or "table"},
        )
    if args.command == "describe":
        return operation(
            "describe_stream", {"stream_name": args.stream, "schema": args.schema, "format": output or "text"}
        )
    if args.command == "drop":
        return operation(
            "drop_stream",
            {"stream_name": args.stream, "schema": args.schema, "dry_run": args.dry_run, "format": output or "text"},
        )
    return operation(
        "reset_stream",
        {
            "stream_name": args.stream,
            "to_version": args.to_version,
            "to_timestamp": args.to_timestamp,
            "schema": args.schema,
            "dry_run": args.dry_run,
            "format": output or "text",
        },
    )


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
        emit(args, entries, "\n".join(selectors(entries)) if entries else None)
        found = bool(entries)
    else:
        macro_args = {"schema": schema, "format": "json" if args.json else "lines"}
        printed = run_operation(
            operation_command(project_dir, directory, args, "pending_streams", macro_args, quiet=True), args
        )
        if args.json:
            document = operation_document(printed, "pending_streams")
            emit(args, document, None)
            found = bool(document)
        else:
            found = any(line.strip() for line in printed)
    return (DONE if found else NOTHING) if args.exit_code else DONE


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

"""The README's Quickstart, run as written.

Its fenced blocks are the test's script: a block whose first line names a path (`# profiles.yml`,
`-- models/orders_changes.sql`) is that file of a new project, a `bash` block holds commands, and
the plain block after `tablestream status` is what that command prints. The test adds only what
the Install section and `dbt init` give a user: `dbt_project.yml`, and a `packages.yml` pointing at
this checkout instead of the git URL, with `dbt deps`.

The dbt commands run in one process of their own (tests/functional/quickstart_runner.py): the
profile's warehouse and metastore are the project's, which this pytest process's session cannot
open, and one JVM start instead of one per command (five of the Quickstart's start Spark) keeps
the test at 72 to 114 s in three runs on two busy cores. That JVM gets the tests' settings
through the Java launcher's JDK_JAVA_OPTIONS, leaving the README's profile as it is.
`tablestream status` runs as its own command.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml
from deltalake import DeltaTable

from tests.functional.dbt_project_helper import PACKAGE_ROOT
from tests.functional.local import SHORT_LIVED_JVM

README = PACKAGE_ROOT / "README.md"
RUNNER = Path(__file__).with_name("quickstart_runner.py")
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
PATH_COMMENT = re.compile(r"^(?:#|--) ([\w./-]+\.(?:yml|yaml|sql))\n")
# `tablestream status`'s times: the README's sample was printed on another day.
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
FEED_CHANGE_TYPES = {
    "insert": "INSERT",
    "update_preimage": "UPDATE_BEFORE",
    "update_postimage": "UPDATE_AFTER",
    "delete": "DELETE",
}
ORDER_COLUMNS = ("order_id", "customer", "amount", "status")


@dataclass
class Quickstart:
    """The Quickstart's steps in the README's order: files to write, then commands to run."""

    files: dict[str, str] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    printed: dict[str, str] = field(default_factory=dict)


def quickstart_section() -> str:
    text = README.read_text(encoding="utf-8")
    assert "\n## Quickstart\n" in text, "README.md has no `## Quickstart` section"
    return text.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]


def shell_commands(script: str) -> list[list[str]]:
    """A bash block's commands, one per line unless a quote or a trailing backslash continues it."""
    commands: list[list[str]] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if pending.endswith("\\\n"):
            pending = pending[:-2]
            continue
        try:
            argv = shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        if argv:
            commands.append(argv)
        pending = ""
    assert not pending.strip(), f"a command in the README's Quickstart never closes its quote: {pending!r}"
    return commands


def parse_quickstart() -> Quickstart:
    quickstart = Quickstart()
    last_command: list[str] | None = None
    for language, body in BLOCK.findall(quickstart_section()):
        path = PATH_COMMENT.match(body)
        if path:
            quickstart.files[path.group(1)] = body
            quickstart.steps.append({"write": path.group(1), "text": body})
        elif language == "bash":
            for argv in shell_commands(body):
                if argv[0] == "dbt":
                    assert not quickstart.commands, (
                        f"the Quickstart runs `dbt` after `{shlex.join(quickstart.commands[0])}`: this test runs "
                        "its dbt commands first, in one process (see its docstring)"
                    )
                    quickstart.steps.append({"dbt": argv[1:]})
                else:
                    quickstart.commands.append(argv)
                last_command = argv
        elif language == "":
            assert last_command is not None, f"an output block before any command: {body!r}"
            quickstart.printed[shlex.join(last_command)] = body
        else:
            raise AssertionError(f"a `{language}` block without a `# path` line in the Quickstart: {body!r}")
    return quickstart


def dbt_commands(quickstart: Quickstart) -> list[str]:
    return [" ".join(step["dbt"]) for step in quickstart.steps if "dbt" in step]


def test_the_quickstart_parses_into_the_steps_a_user_takes() -> None:
    """What the running test relies on, said where it is cheap: the Quickstart's files, the source's
    creation before its change feed, two builds with a change between them, and a status sample."""
    quickstart = parse_quickstart()
    assert set(quickstart.files) == {
        "profiles.yml",
        "models/sources.yml",
        "models/orders_changes.sql",
        "models/orders_current.sql",
    }
    commands = dbt_commands(quickstart)
    tracking = next((i for i, command in enumerate(commands) if "enable_change_tracking" in command), None)
    assert tracking is not None, f"the Quickstart never turns on the source's change feed: {commands}"
    assert tracking >= 1, "the Quickstart must create app.orders before turning on its change feed"
    builds = [i for i, command in enumerate(commands) if command == "build"]
    assert len(builds) == 2 and tracking < builds[0] < builds[1] - 1, commands
    assert quickstart.commands == [["tablestream", "status"]]
    assert "tablestream status" in quickstart.printed


def project_profile(quickstart: Quickstart) -> tuple[str, dict[str, Any]]:
    profiles = yaml.safe_load(quickstart.files["profiles.yml"])
    (name, profile), *others = profiles.items()
    assert not others, "the Quickstart's profiles.yml holds one profile"
    return name, profile["outputs"][profile["target"]]


def user_environment() -> dict[str, str]:
    """A user's shell with this environment's commands on its PATH, and none of this run's dbt
    or test variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DBT_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    env["JDK_JAVA_OPTIONS"] = SHORT_LIVED_JVM["spark.driver.extraJavaOptions"]
    return env


def rows(table: DeltaTable | pa.Table, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    data = table if isinstance(table, pa.Table) else table.to_pyarrow_table()
    return sorted(tuple(row[column] for column in columns) for row in data.to_pylist())


def test_the_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    quickstart = parse_quickstart()
    project = tmp_path / "shop"
    project.mkdir()
    name, target = project_profile(quickstart)
    assert target["type"] == "tablestream", "the Quickstart runs on the local profile"
    (project / "dbt_project.yml").write_text(yaml.safe_dump({"name": name, "profile": name}))
    (project / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(PACKAGE_ROOT)}]}))
    steps_file = tmp_path / "steps.json"
    steps_file.write_text(json.dumps([{"dbt": ["deps"]}, *quickstart.steps]))
    env = user_environment()

    runner = subprocess.run(
        # -I: the runner's folder stays off sys.path, where dbt would import dbt_project_helper
        # as a plugin (it imports every top-level module named dbt_*).
        [sys.executable, "-I", str(RUNNER), str(steps_file)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert runner.returncode == 0, runner.stdout + runner.stderr

    # The targets against the source's own history, read with delta-rs: the first build read the
    # orders as of the change feed's start (a snapshot), the second only the commits after it.
    warehouse = project / target["warehouse"]
    source = DeltaTable(str(warehouse / "app.db" / "orders"))
    latest = source.version()
    tracked_from = next(
        commit["version"]
        for commit in source.history()
        if "delta.enableChangeDataFeed" in str(commit.get("operationParameters", {}).get("properties", ""))
    )
    assert latest > tracked_from, "the Quickstart changes the source between its two builds"
    schema = warehouse / f"{target['schema']}.db"
    changes = DeltaTable(str(schema / "orders_changes"))
    current = DeltaTable(str(schema / "orders_current"))
    offsets = DeltaTable(str(schema / "tablestream_offsets"))
    log_columns = (*ORDER_COLUMNS, "__change_type", "__commit_version")
    as_tracked = DeltaTable(str(warehouse / "app.db" / "orders"), version=tracked_from)
    snapshot = [(*row, "INSERT", tracked_from) for row in rows(as_tracked, ORDER_COLUMNS)]
    feed = pa.table(source.load_cdf(starting_version=tracked_from + 1).read_all()).to_pylist()
    changed = [
        (*(row[column] for column in ORDER_COLUMNS), FEED_CHANGE_TYPES[row["_change_type"]], row["_commit_version"])
        for row in feed
    ]
    assert changed, "the change between the builds reached the source's change feed"
    assert rows(changes, log_columns) == sorted(snapshot + changed)
    assert rows(current, ORDER_COLUMNS) == rows(source, ORDER_COLUMNS)
    for stream in ("orders_changes__app_orders", "orders_current__app_orders"):
        windows = sorted(
            (row["from_version"], row["to_version"])
            for row in offsets.to_pyarrow_table().to_pylist()
            if row["stream_name"] == stream
        )
        assert windows == [(tracked_from, tracked_from), (tracked_from, latest)], (stream, windows)

    status = subprocess.run(quickstart.commands[0], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert status.returncode == 0, status.stdout + status.stderr
    printed = status.stdout
    header, _, *lines = printed.splitlines()
    # The table ends at the blank line before the note on staleness.
    table = lines[: lines.index("")] if "" in lines else lines
    columns = re.split(r"\s{2,}", header)
    for line in table:
        cells = dict(zip(columns, re.split(r"\s{2,}", line), strict=True))
        assert (cells["offset"], cells["source at"], cells["lag"]) == (str(latest), str(latest), "0"), printed
    assert len(table) == 2, printed
    # The sample holds every column and the line after the table, as printed but for its times.
    sample = quickstart.printed["tablestream status"]
    assert TIMESTAMP.sub("YYYY-MM-DD hh:mm:ss", printed) == TIMESTAMP.sub("YYYY-MM-DD hh:mm:ss", sample), printed

"""`dbt parse` of the example project on the cluster engine's adapters: `type: spark` (dbt-spark,
installed with this package) and `type: databricks`. Both must resolve the package's
`table_stream`, `stream_merge` and `stream_aggregate` materializations and its spark__ engine macros.

The Databricks side is a cluster user's install, in a virtualenv of its own: this package's light
install (no `local` extra: no pyspark, delta-spark or dbt-spark session) beside the newest
dbt-databricks from PyPI, which pins its own dbt-spark.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner
from dbt.contracts.graph.manifest import Manifest

from tests.spark_sql.render import PACKAGE_ROOT, local_package, write_profile

pytestmark = pytest.mark.spark_sql

EXAMPLE = PACKAGE_ROOT / "example_project"
DATABRICKS_VENV = Path(os.environ.get("TABLESTREAM_DATABRICKS_VENV", PACKAGE_ROOT / ".venv-databricks"))
DATABRICKS_REQUIREMENT = "dbt-databricks"
# The light install allows dbt-core 1.12, whose releases from 1.12.5 build their parser by
# downloading it at install time, which this machine cannot do: the Databricks side runs on the
# dbt-core this suite runs on.
DBT_CORE_REQUIREMENT = f"dbt-core=={version('dbt-core')}"
# The installed copy of the package is refreshed when what the light install runs changes.
LIGHT_INSTALL_FILES = (
    "pyproject.toml",
    "setup.py",
    "dbt_tablestream/__init__.py",
    "dbt_tablestream/cli.py",
    "dbt/adapters/tablestream/__init__.py",
)
STREAM_MODELS = {"orders_changes": "table_stream", "orders_current": "stream_merge"}
# The package's stream materializations: each must resolve to the package on both adapters.
MATERIALIZATIONS = ("table_stream", "stream_merge", "stream_aggregate")
# Every macro the package dispatches to a spark__ implementation (docs/architecture.md,
# "Dispatch"): each must resolve to it on dbt-spark and on dbt-databricks.
_MACRO_SOURCES = "".join(path.read_text() for path in (PACKAGE_ROOT / "macros").rglob("*.sql"))
ENGINE_MACROS = sorted(
    name
    for name in set(re.findall(r"adapter\.dispatch\('(\w+)', 'dbt_tablestream'\)", _MACRO_SOURCES))
    if f"macro spark__{name}(" in _MACRO_SOURCES
)

# Runs inside the dbt-databricks virtualenv; prints what the parsed manifest resolves.
RESOLVE_SCRIPT = """
import json, sys
from dbt.cli.main import dbtRunner
project = sys.argv[1]
dirs = ["--project-dir", project, "--profiles-dir", project]
for command in (["deps"], ["parse"]):
    result = dbtRunner().invoke([*command, *dirs])
    if not result.success:
        print(json.dumps({"error": str(result.exception)}))
        sys.exit(1)
manifest = result.result
adapter_type, project_name = sys.argv[2], sys.argv[3]
macros = {m.name: m.package_name for m in manifest.macros.values()}
print(json.dumps({
    "materialized": {n.name: n.config.materialized for n in manifest.nodes.values() if n.resource_type == "model"},
    "materializations": {
        name: getattr(manifest.find_materialization_macro_by_name(project_name, name, adapter_type), "package_name", None)
        for name in sys.argv[4:]
    },
    "macros": macros,
}))
"""


def example_copy(tmp_path: Path, adapter_type: str) -> Path:
    project = tmp_path / f"example_{adapter_type}"
    project.mkdir()
    for item in ("dbt_project.yml", "models", "seeds"):
        source = EXAMPLE / item
        (shutil.copytree if source.is_dir() else shutil.copy)(source, project / item)
    local_package(project)
    write_profile(project, adapter_type, "tablestream_example")
    return project


def check_resolution(resolved: dict) -> None:
    for model, materialization in STREAM_MODELS.items():
        assert resolved["materialized"][model] == materialization
    assert resolved["materializations"] == dict.fromkeys(MATERIALIZATIONS, "dbt_tablestream")
    for name in ENGINE_MACROS:
        assert resolved["macros"].get(f"spark__{name}") == "dbt_tablestream", name


def parse_on_spark(project: Path, project_name: str) -> dict:
    """What `dbt parse` of `project` resolves on dbt-spark, in this process (RESOLVE_SCRIPT's shape)."""
    dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]
    assert dbtRunner().invoke(["deps", *dirs]).success
    result = dbtRunner().invoke(["parse", *dirs])
    assert result.success, result.exception
    manifest = result.result
    assert isinstance(manifest, Manifest)
    return {
        "materialized": {n.name: n.config.materialized for n in manifest.nodes.values() if n.resource_type == "model"},
        "materializations": {
            name: getattr(
                manifest.find_materialization_macro_by_name(project_name, name, "spark"), "package_name", None
            )
            for name in MATERIALIZATIONS
        },
        "macros": {m.name: m.package_name for m in manifest.macros.values()},
    }


def test_dbt_parse_example_project_on_spark(tmp_path: Path) -> None:
    check_resolution(parse_on_spark(example_copy(tmp_path, "spark"), "tablestream_example"))


def databricks_python() -> Path:
    """The light install beside dbt-databricks, installed once per version of the package's files;
    the lock keeps two pytest workers from installing it at the same time."""
    python = DATABRICKS_VENV / "bin" / "python"
    installed = DATABRICKS_VENV / "installed"
    digest = hashlib.sha256(b"".join((PACKAGE_ROOT / name).read_bytes() for name in LIGHT_INSTALL_FILES)).hexdigest()
    DATABRICKS_VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{DATABRICKS_VENV}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists() or installed.read_text() != digest:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(DATABRICKS_VENV)], check=True)
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    str(PACKAGE_ROOT),
                    DATABRICKS_REQUIREMENT,
                    DBT_CORE_REQUIREMENT,
                ],
                check=True,
                timeout=900,
            )
            installed.write_text(digest)
    return python


def in_databricks_venv(*command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`command` with that virtualenv's python (`python ...`) or one of its scripts (`dbt ...`)."""
    program, *rest = command
    bin_dir = databricks_python().parent
    return subprocess.run(
        [str(bin_dir / program), *rest],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"},
    )


def parse_on_databricks(project: Path, project_name: str) -> dict:
    """What `dbt parse` of `project` resolves on dbt-databricks (RESOLVE_SCRIPT's output)."""
    completed = in_databricks_venv(
        "python", "-c", RESOLVE_SCRIPT, str(project), "databricks", project_name, *MATERIALIZATIONS
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return {**json.loads(completed.stdout.strip().splitlines()[-1]), "log": completed.stdout}


def test_dbt_parse_example_project_on_databricks(tmp_path: Path) -> None:
    resolved = parse_on_databricks(example_copy(tmp_path, "databricks"), "tablestream_example")
    check_resolution(resolved)
    # The example sets its stream configs under meta, where dbt-databricks expects a package's keys.
    assert "CustomKeyInConfigDeprecation" not in resolved["log"], resolved["log"][-3000:]


def test_the_light_install_runs_beside_dbt_databricks(tmp_path: Path) -> None:
    """No pyspark, delta-spark or dbt-spark session: the command and the writer import, and the
    local profile says which extra it needs instead of failing inside dbt-spark."""
    from dbt_tablestream import __version__

    version = in_databricks_venv("tablestream", "--version")
    assert version.stdout.strip() == f"tablestream {__version__}", version.stderr
    # dbt imports every plugin's __version__ and catches only ImportError: the plugin must import
    # without the local engine, and say what it lacks only for a `type: tablestream` profile.
    dbt_version = in_databricks_venv("dbt", "--version")
    assert dbt_version.returncode == 0, dbt_version.stdout[-3000:] + dbt_version.stderr[-3000:]
    assert re.search(rf"tablestream:\s+{re.escape(__version__)}", dbt_version.stdout), dbt_version.stdout
    assert "databricks:" in dbt_version.stdout
    imports = in_databricks_venv(
        "python",
        "-c",
        "import importlib.util, sys, dbt_tablestream.cli, dbt_tablestream.ingest, dbt.adapters.databricks;"
        "print([m for m in ('pyspark', 'delta') if importlib.util.find_spec(m)])",
    )
    assert imports.returncode == 0, imports.stderr
    assert imports.stdout.strip() == "[]", "the light install brought the local engine"

    project = example_copy(tmp_path, "databricks")
    (project / "profiles.yml").write_text(
        "tablestream_example:\n  target: local\n  outputs:\n    local:\n      type: tablestream\n"
        "      schema: analytics\n"
    )
    # The command reads that profile with dbt's own loader, which loads no adapter: its delta-rs
    # path answers without pyspark (here: no offsets log yet, so no such stream, exit 1).
    history = in_databricks_venv("tablestream", "history", "nope", "--project-dir", str(project), "--json")
    assert history.returncode == 1, history.stdout + history.stderr
    assert json.loads(history.stdout)["error"].startswith(
        "No stream or stream model nope in analytics.tablestream_offsets"
    )
    parsed = in_databricks_venv("dbt", "parse", "--project-dir", str(project), "--profiles-dir", str(project))
    assert parsed.returncode != 0
    assert "needs the `local` extra: pip install 'dbt-tablestream[local]' (missing: pyspark, delta)" in parsed.stdout

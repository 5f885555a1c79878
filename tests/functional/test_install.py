"""Adopting the package: the README's `packages.yml` snippet (a new dbt project installs it with
`dbt deps` from a git URL at a revision and runs a stream model), and a quiet first start of the
local profile."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from dbt.adapters.tablestream._class_archive import DYNAMIC_ARCHIVE_MAGIC
from dbt.adapters.tablestream._session import IVY_HOME, delta_package, recorded_jars_file
from tests.functional.dbt_project_helper import PACKAGE_ROOT, DbtProject
from tests.functional.local import dbt_process, local_profile
from tests.functional.streams import StreamBench, stream_model


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def package_repository(tmp_path: Path) -> Path:
    """A git repository of the package as this checkout has it (its dbt files, uncommitted changes
    included), tagged as a release would be."""
    repository = tmp_path / "dbt-tablestream"
    repository.mkdir()
    shutil.copy(PACKAGE_ROOT / "dbt_project.yml", repository / "dbt_project.yml")
    shutil.copytree(PACKAGE_ROOT / "macros", repository / "macros")
    git("init", "-q", cwd=repository)
    git("add", "-A", cwd=repository)
    git("commit", "-q", "-m", "release", cwd=repository)
    git("tag", "v0.1.0", cwd=repository)
    return repository


def test_a_project_installs_the_package_from_git_and_runs_a_stream(tmp_path: Path) -> None:
    repository = package_repository(tmp_path)
    bench = StreamBench(tmp_path, {"log": stream_model()})
    packages = {"packages": [{"git": f"file://{repository}", "revision": "v0.1.0"}]}
    (bench.project.root / "packages.yml").write_text(yaml.safe_dump(packages))
    bench.project.install_packages()
    installed = bench.project.root / "dbt_packages" / "dbt_tablestream"
    assert (installed / "macros" / "streams" / "source_stream.sql").exists()
    assert not installed.is_symlink(), "a git install is a copy, not the local path"

    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.append([(3, "c", 3)])
    bench.run()
    rows = bench.target_rows("log")
    assert sorted((row[0], row[3]) for row in rows) == [(1, "INSERT"), (2, "INSERT"), (3, "INSERT")]
    assert [(row["from_version"], row["to_version"]) for row in bench.offsets()] == [(0, 0), (0, 1)]


def start_once(project: DbtProject, warehouse: Path) -> str:
    """`dbt debug` in a process of its own (its connection test starts Spark); what it printed."""
    debug = dbt_process(project.root, {}, "debug")
    output, _ = debug.communicate(timeout=600)
    assert debug.returncode == 0, output
    started = [line for line in output.splitlines() if "Tablestream adapter: starting Spark" in line]
    assert len(started) == 1, output
    assert f"its log: {warehouse.resolve() / 'spark.log'}" in started[0]
    for noise in (
        ":: loading settings",
        ":: resolving dependencies",
        "found io.delta#delta-spark",
        "Using incubator modules",
    ):
        assert noise not in output, output
    return output


def test_the_local_profile_starts_spark_in_one_line_and_logs_the_rest(tmp_path: Path) -> None:
    """Ivy's report of delta-spark's jars (about 80 lines) and Spark's own output go to the
    warehouse's spark.log; dbt's output says in one line that Spark starts and where it logs. The
    first start on an Ivy cache records the jars it resolved, and the next start uses them and
    resolves nothing; that process writes the class archive at its exit, and the start after it
    loads Delta's classes from the archive. A file in the archive's place that is not one is
    replaced. The cache is a copy of the suite's, without its record, so nothing is fetched."""
    ivy = tmp_path / "ivy"
    for folder in ("cache", "jars"):
        shutil.copytree(Path(IVY_HOME).expanduser() / folder, ivy / folder)
    warehouse = tmp_path / "warehouse"
    loaded = tmp_path / "classes.log"
    parameters = {"spark.jars.ivy": str(ivy), "spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={loaded}"}
    profile = local_profile(warehouse, server_side_parameters=parameters)
    project = DbtProject(tmp_path / "project", warehouse, profile=profile)
    project.install_packages()

    start_once(project, warehouse)
    logged = (warehouse / "spark.log").read_text()
    assert "io.delta#delta-spark" in logged and ":: resolving dependencies" in logged
    record = recorded_jars_file({"spark.jars.packages": delta_package(), "spark.jars.ivy": str(ivy)})
    assert record is not None and record.is_file()
    jars = record.read_text().splitlines()
    assert any(Path(jar).name.startswith("io.delta_delta-spark_") for jar in jars), jars
    assert all(Path(jar).is_relative_to(ivy / "jars") for jar in jars), jars

    start_once(project, warehouse)
    second = (warehouse / "spark.log").read_text()[len(logged) :]
    assert second.strip(), "the second start logged nothing"
    assert ":: resolving dependencies" not in second, second

    archives = list((ivy / "tablestream").glob("classes-*.jsa"))
    assert len(archives) == 1, archives
    magic = DYNAMIC_ARCHIVE_MAGIC.to_bytes(4, sys.byteorder)
    assert archives[0].read_bytes()[:4] == magic
    extension = "io.delta.sql.DeltaSparkSessionExtension"
    assert f"{extension} source: jar:" in loaded.read_text() or f"{extension} source: file:" in loaded.read_text()

    start_once(project, warehouse)
    assert f"{extension} source: shared objects file (top)" in loaded.read_text()

    # Replaced, not written over: the JVM of the process before may still be exiting with the
    # archive mapped, and a file truncated under a mapping kills it (SIGBUS).
    damaged = archives[0].with_name("damaged.tmp")
    damaged.write_bytes(b"not an archive")
    damaged.replace(archives[0])
    start_once(project, warehouse)
    assert f"{extension} source: shared objects file" not in loaded.read_text()
    assert archives[0].read_bytes()[:4] == magic, "the file that was not an archive is dumped anew"

"""The local session's class archive, without a JVM: which archive a start uses, the options it
starts with, and what it does with a file that is not an archive. tests/functional/test_install.py
starts real Spark with it: the dump at exit, and the next start mapping it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dbt.adapters.tablestream import _class_archive
from dbt.adapters.tablestream._class_archive import (
    ARCHIVE_FLAG,
    CLASS_ARCHIVE_SETTING,
    DYNAMIC_ARCHIVE_MAGIC,
    RECORD_FLAG,
    archive_file,
    prune,
    records_dump_info,
    with_archive,
    without_archive,
)


def jars(tmp_path: Path, *names: str) -> list[Path]:
    folder = tmp_path / "jars"
    folder.mkdir(exist_ok=True)
    made = []
    for name in names:
        (folder / name).write_bytes(name.encode())
        made.append(folder / name)
    return made


def java(tmp_path: Path) -> Path:
    binary = tmp_path / "java"
    binary.write_text("#!/bin/sh\n")
    return binary


def test_a_start_that_resolves_packages_or_opts_out_uses_no_archive(tmp_path: Path) -> None:
    delta = jars(tmp_path, "delta.jar")
    folder = tmp_path / "ivy" / "tablestream"
    resolving = {"spark.jars.packages": "io.delta:delta-spark_4.2_2.13:4.4.0"}
    assert archive_file(resolving, folder, java(tmp_path), []) is None
    settings = {"spark.jars": str(delta[0]), CLASS_ARCHIVE_SETTING: "false"}
    assert archive_file(settings, folder, java(tmp_path), [str(delta[0])]) is None


def test_the_archive_is_named_by_the_class_path_java_and_heap(tmp_path: Path) -> None:
    delta, storage = jars(tmp_path, "delta.jar", "storage.jar")
    binary, folder = java(tmp_path), tmp_path / "ivy" / "tablestream"
    settings, both = {"spark.driver.memory": "4g"}, [str(delta), str(storage)]
    first = archive_file(settings, folder, binary, both)
    assert first is not None and first.parent == folder and first.name.startswith("classes-")
    assert archive_file(settings, folder, binary, both) == first, "the same install names the same archive"
    assert archive_file({**settings, "spark.driver.memory": "48g"}, folder, binary, both) != first
    assert archive_file({**settings, "spark.driver.extraJavaOptions": "-Xss4m"}, folder, binary, both) != first
    other_warehouse = {**settings, "spark.driver.extraJavaOptions": "-Dderby.system.home=/elsewhere"}
    assert archive_file(other_warehouse, folder, binary, both) == first, "system properties do not name an archive"
    assert archive_file(settings, folder, binary, [str(delta)]) != first
    storage.write_bytes(b"a newer jar")
    assert archive_file(settings, folder, binary, both) != first, "a replaced jar gets an archive of its own"
    storage.unlink()
    assert archive_file(settings, folder, binary, both) is None, "a missing jar: no archive, Spark reports it"


def test_a_start_without_an_archive_records_what_a_dump_needs(tmp_path: Path) -> None:
    (delta,) = jars(tmp_path, "delta.jar")
    archive = tmp_path / "classes-x.jsa"
    settings = {"spark.jars": str(delta), "spark.driver.extraJavaOptions": "-Dderby.system.home=/w"}
    started = with_archive(settings, archive)
    assert started["spark.driver.extraJavaOptions"] == f"-Dderby.system.home=/w {RECORD_FLAG}"
    assert records_dump_info(started)
    assert without_archive(started)["spark.driver.extraJavaOptions"] == "-Dderby.system.home=/w"


def test_a_start_with_an_archive_maps_it(tmp_path: Path) -> None:
    (delta,) = jars(tmp_path, "delta.jar")
    archive = tmp_path / "classes-x.jsa"
    archive.write_bytes(DYNAMIC_ARCHIVE_MAGIC.to_bytes(4, sys.byteorder) + b"\0" * 64)
    started = with_archive({"spark.jars": str(delta)}, archive)
    assert started["spark.driver.extraJavaOptions"] == f"{ARCHIVE_FLAG}{archive}"
    assert not records_dump_info(started)
    assert without_archive(started)["spark.driver.extraJavaOptions"] == ""


def test_a_file_that_is_not_an_archive_is_deleted_and_dumped_again(tmp_path: Path) -> None:
    (delta,) = jars(tmp_path, "delta.jar")
    archive = tmp_path / "classes-x.jsa"
    archive.write_bytes(b"not an archive at all")
    started = with_archive({"spark.jars": str(delta)}, archive)
    assert records_dump_info(started)
    assert not archive.exists()


def test_prune_keeps_the_newest_archives(tmp_path: Path) -> None:
    made = []
    for index in range(5):
        archive = tmp_path / f"classes-{index}.jsa"
        archive.write_bytes(b"x")
        os.utime(archive, (1_000_000 + index, 1_000_000 + index))
        made.append(archive)
    prune(made[-1])
    assert sorted(path.name for path in tmp_path.glob("classes-*.jsa")) == [
        path.name for path in made[-_class_archive.KEPT_ARCHIVES :]
    ]


def test_a_start_removes_what_a_stopped_dump_left(tmp_path: Path) -> None:
    (delta,) = jars(tmp_path, "delta.jar")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f"classes-x.jsa.{int(gone.stdout)}.tmp"
    dumping = tmp_path / f"classes-x.jsa.{os.getpid()}.tmp"
    for temporary in (left, dumping):
        temporary.write_bytes(b"x")
    with_archive({"spark.jars": str(delta)}, tmp_path / "classes-x.jsa")
    assert not left.exists(), "the file of a process that is gone is removed"
    assert dumping.exists(), "a dump in progress is left alone"

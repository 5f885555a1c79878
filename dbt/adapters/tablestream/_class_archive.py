"""A class-data-sharing archive for the local session's JVM, built once beside the Ivy cache.

A new dbt process loads and verifies over 13,000 of Spark's, Delta's and Hive's classes before its
first Delta statements are done; mapping them took a new process's start and first two
statements from 21.8 s to 17.3 s here (bench/results/local_start.json). Java 17 can write the classes a JVM
loaded to an archive (a dynamic CDS archive, `jcmd VM.cds dynamic_dump`) that later JVMs map
instead of loading the classes again. So a start that finds no archive for its class path asks
its JVM to record what a dump needs, and at the process's normal exit it dumps the archive to a
temporary file that is moved into place; later starts with the same Java, class path and heap map
it. docs/local-profile.md, "Starting", has the measurements and the opt-out.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("Tablestream")

# `server_side_parameters: {spark.tablestream.classArchive: "false"}` turns the archive off.
CLASS_ARCHIVE_SETTING = "spark.tablestream.classArchive"
# Archives for other class paths (another virtualenv, an older pyspark) kept beside the newest.
KEPT_ARCHIVES = 3
RECORD_FLAG = "-XX:+RecordDynamicDumpInfo"
ARCHIVE_FLAG = "-XX:SharedArchiveFile="
# The first four bytes of a dynamic archive (HotSpot's CDS_DYNAMIC_ARCHIVE_MAGIC), in the
# machine's byte order. A file without them is not mapped, and would never be replaced.
DYNAMIC_ARCHIVE_MAGIC = 0xF00BABA8


def spark_jars_folder() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()) / "jars"


def archive_file(settings: Mapping[str, str], folder: Path, java: Path, jars: list[str]) -> Path | None:
    """The archive for this JVM's class path (pyspark's jars and `jars`, the files on `spark.jars`),
    or None where none applies: the setting is off, or this start still resolves
    `spark.jars.packages` (its class path is known only afterwards).

    The name is a digest of what the JVM checks an archive against (the java binary, every jar on
    the class path with its size and time, the heap size that picks the base archive) and of the
    JVM options, so a changed install gets an archive of its own, not a refused one."""
    if settings.get(CLASS_ARCHIVE_SETTING, "true").strip().lower() in ("false", "0", "no", "off"):
        return None
    if settings.get("spark.jars.packages"):
        return None
    digest = hashlib.sha256()
    java = java.resolve()
    digest.update(f"{java}:{java.stat().st_mtime_ns}\n".encode())
    # The JVM's own options (-X, -XX), not system properties: those name the project's warehouse.
    options = [
        option for option in settings.get("spark.driver.extraJavaOptions", "").split() if option.startswith("-X")
    ]
    digest.update(f"{settings.get('spark.driver.memory', '')}\n{' '.join(options)}\n".encode())
    for jar in sorted(spark_jars_folder().glob("*.jar")) + [Path(jar) for jar in jars]:
        try:
            stat = jar.stat()
        except OSError:
            return None
        digest.update(f"{jar}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return folder / f"classes-{digest.hexdigest()[:16]}.jsa"


def with_archive(settings: Mapping[str, str], archive: Path) -> dict[str, str]:
    """The settings that map `archive` if it exists, or record what a dump of it needs. The archive
    keeps the classes of `spark.jars` too: Spark's own loader for them reads them from jar files,
    which a dynamic archive supports (tests/functional/test_install.py sees Delta's mapped)."""
    remove_leftovers(archive.parent)
    flag = f"{ARCHIVE_FLAG}{archive}" if usable(archive) else RECORD_FLAG
    return {
        **settings,
        "spark.driver.extraJavaOptions": f"{settings.get('spark.driver.extraJavaOptions', '')} {flag}".strip(),
    }


def usable(archive: Path) -> bool:
    """Whether `archive` is a dynamic archive; a file that is not one is deleted, to be dumped anew."""
    try:
        with open(archive, "rb") as file:
            head = file.read(4)
    except OSError:
        return False
    if head == DYNAMIC_ARCHIVE_MAGIC.to_bytes(4, sys.byteorder):
        return True
    logger.debug(f"tablestream: {archive} is not a class archive; it is written again at this process's exit")
    archive.unlink(missing_ok=True)
    return False


def without_archive(settings: Mapping[str, str]) -> dict[str, str]:
    """The settings `with_archive` started from, for a retry after a start that failed with them."""
    options = settings.get("spark.driver.extraJavaOptions", "").split()
    kept = [option for option in options if option != RECORD_FLAG and not option.startswith(ARCHIVE_FLAG)]
    return {**settings, "spark.driver.extraJavaOptions": " ".join(kept)}


def records_dump_info(settings: Mapping[str, str]) -> bool:
    return RECORD_FLAG in settings.get("spark.driver.extraJavaOptions", "").split()


def dump(spark: SparkSession, archive: Path) -> None:
    """Dump the classes this JVM loaded to `archive`, through the JVM's DiagnosticCommand MBean
    (what `jcmd <pid> VM.cds dynamic_dump` calls), into a temporary file moved into place, so a
    concurrent start maps either no archive or a whole one. Any failure leaves no archive: later
    starts then run as they would without one and dump again. It runs at the process's exit, where
    dbt's log may be closed already, so it logs nothing."""
    if archive.is_file():  # another process wrote it since this one started
        return
    temporary = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        context = spark.sparkContext
        gateway, jvm = context._gateway, context._jvm
        assert gateway is not None and jvm is not None

        def array(kind: object, *items: object) -> object:
            made = gateway.new_array(kind, len(items))
            for index, item in enumerate(items):
                made[index] = item
            return made

        java_class = jvm.java.lang.Class
        server = jvm.java.lang.management.ManagementFactory.getPlatformMBeanServer()
        # py4j cannot call the server's class (not exported by its module): call the public
        # interface's method by reflection instead.
        signature = ("javax.management.ObjectName", "java.lang.String", "[Ljava.lang.Object;", "[Ljava.lang.String;")
        invoke = java_class.forName("javax.management.MBeanServer").getMethod(
            "invoke", array(java_class, *(java_class.forName(name) for name in signature))
        )
        command = jvm.javax.management.ObjectName("com.sun.management:type=DiagnosticCommand")
        arguments = array(jvm.java.lang.String, "dynamic_dump", str(temporary))
        call = array(
            jvm.java.lang.Object,
            command,
            "vmCds",
            array(jvm.java.lang.Object, arguments),
            array(jvm.java.lang.String, "[Ljava.lang.String;"),
        )
        invoke.invoke(server, call)
        if not temporary.is_file() or temporary.stat().st_size == 0:
            raise OSError(f"the JVM wrote no archive at {temporary}")
        temporary.replace(archive)
        prune(archive)
    except Exception:  # the run is done: an archive not written costs later starts only time
        temporary.unlink(missing_ok=True)


def prune(newest: Path) -> None:
    """Keep the newest KEPT_ARCHIVES archives (each is 100-250 MB)."""
    archives = sorted(newest.parent.glob("classes-*.jsa"), key=lambda path: path.stat().st_mtime, reverse=True)
    for stale in archives[KEPT_ARCHIVES:]:
        stale.unlink(missing_ok=True)


def remove_leftovers(folder: Path) -> None:
    """Delete the temporary files of dumps whose process is gone: a process stopped during its dump
    (a kill, a test runner's worker ended at its exit) leaves one of 100-250 MB."""
    for left in folder.glob("classes-*.jsa.*.tmp"):
        try:
            pid = int(left.name.split(".")[-2])
            os.kill(pid, 0)
        except ProcessLookupError:
            left.unlink(missing_ok=True)
        except (ValueError, PermissionError, OSError):
            continue

"""The local SparkSession behind `type: tablestream`: delta-spark, settings for a small machine,
the warehouse and metastore under the project, and one session per dbt thread.

No SQL is sent from here: every statement comes from dbt-spark's macros and the package's
`spark__` macros (docs/architecture.md, "The layers", item 7).
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.tablestream import _class_archive
from dbt.adapters.tablestream._java import require_java
from dbt_tablestream.exceptions import EngineStartError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("Tablestream")

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
IVY_SETTINGS = Path(__file__).with_name("ivysettings.xml")
LOOPBACK = "127.0.0.1"
# Spark 4's default Ivy home (spark.jars.ivy), where the fetched jars are kept between starts.
IVY_HOME = "~/.ivy2.5.2"
# The JVM's own output (Ivy's resolution report, Spark's log) goes here, beside the tables.
JVM_LOG = "spark.log"

DELTA_SETTINGS: Mapping[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}

# Spark's defaults are sized for clusters. On a laptop or a 2-core CI machine they turn every
# tiny statement into hundreds of tasks: 200 shuffle partitions, and 10,000-way file listing
# (VACUUM of a tiny table took 90 s with it). Each is overridable in `server_side_parameters`.
SMALL_MACHINE_SETTINGS: Mapping[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "dbt-tablestream",
    "spark.driver.memory": "4g",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.session.timeZone": "UTC",
    # Nothing the session starts listens beyond this machine.
    "spark.driver.host": LOOPBACK,
    "spark.driver.bindAddress": LOOPBACK,
}


def delta_package() -> str:
    """The Maven coordinate of delta-spark's jar for the installed pyspark and delta-spark,
    named as delta-spark's own `configure_spark_with_delta_pip` names it."""
    try:
        delta_version = metadata.version("delta-spark")
        spark_version = metadata.version("pyspark")
    except metadata.PackageNotFoundError as error:
        raise EngineStartError(
            f"The tablestream adapter needs pyspark and delta-spark installed ({error.name} is missing). "
            "Install them with `pip install dbt-tablestream`, which pins versions that work together."
        ) from error
    spark_minor = ".".join(spark_version.split(".")[:2])
    return f"io.delta:delta-spark_{spark_minor}_2.13:{delta_version}"


def session_settings(warehouse: Path, overrides: Mapping[str, str]) -> dict[str, str]:
    """Every setting of the local session, the profile's `server_side_parameters` last."""
    settings = dict(SMALL_MACHINE_SETTINGS)
    settings.update(DELTA_SETTINGS)
    # With `spark.jars` the user brings the jars (the offline way); otherwise Spark fetches them.
    if "spark.jars" not in overrides:
        settings["spark.jars.packages"] = delta_package()
        # Maven Central only: Spark's default chain also tries ~/.m2, where one POM without its jar
        # fails the whole resolution. A user's own repositories or settings take precedence.
        if "spark.jars.repositories" not in overrides and "spark.jars.ivySettings" not in overrides:
            settings["spark.jars.ivySettings"] = IVY_SETTINGS.as_posix()
    metastore = warehouse / "metastore_db"
    settings["spark.sql.warehouse.dir"] = warehouse.as_posix()
    settings["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
        f"jdbc:derby:;databaseName={metastore.as_posix()};create=true"
    )
    java_options = f"-Dderby.system.home={warehouse.as_posix()} -Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}"
    settings.update(overrides)
    if "spark.driver.extraJavaOptions" in overrides:
        settings["spark.driver.extraJavaOptions"] = f"{java_options} {overrides['spark.driver.extraJavaOptions']}"
    else:
        settings["spark.driver.extraJavaOptions"] = java_options
    return settings


def check_warehouse(warehouse: Path) -> Path:
    """Resolve the warehouse directory, creating it if needed; raise if it cannot be written."""
    warehouse = warehouse.expanduser().resolve()
    remedy = "Point the profile's `warehouse` at a directory you can write (it is created if missing)."
    if warehouse.exists() and not warehouse.is_dir():
        raise EngineStartError(f"The warehouse {warehouse} is not a directory. {remedy}")
    for ancestor in [warehouse, *warehouse.parents]:
        if ancestor.exists():
            if not ancestor.is_dir():
                raise EngineStartError(f"The warehouse {warehouse} cannot be created: {ancestor} is a file. {remedy}")
            if not os.access(ancestor, os.W_OK | os.X_OK):
                raise EngineStartError(f"The warehouse {warehouse} is not writable ({ancestor}). {remedy}")
            break
    try:
        warehouse.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise EngineStartError(f"The warehouse {warehouse} is not writable: {error}. {remedy}") from error
    return warehouse


class LocalSpark:
    """The process's one SparkContext, and a SparkSession per thread that asks for one.

    Sessions made with `newSession()` share the SparkContext, the catalog and cached data, but
    not SQL settings: Delta's `write.txnAppId`, `write.txnVersion` and
    `commitInfo.userMetadata` set by one dbt thread are not seen by another.
    """

    _lock = threading.Lock()
    _root: SparkSession | None = None
    _threads = threading.local()

    @classmethod
    def session(cls, warehouse: Path, overrides: Mapping[str, str]) -> SparkSession:
        """The calling thread's session for these settings; a thread that comes with other
        settings (another profile in the same process) gets a fresh session, not a mix of both."""
        key = (warehouse, tuple(sorted(overrides.items())))
        cached: tuple[tuple[Path, tuple[tuple[str, str], ...]], SparkSession] | None = getattr(
            cls._threads, "session", None
        )
        if cached is None or cached[0] != key:
            root = cls.root(warehouse, overrides)
            session = root.newSession()
            cls._apply_runtime_settings(session, session_settings(warehouse, overrides))
            cls._threads.session = (key, session)
            return session
        return cached[1]

    @classmethod
    def root(cls, warehouse: Path, overrides: Mapping[str, str]) -> SparkSession:
        with cls._lock:
            if cls._root is None:
                cls._root = start_session(warehouse, overrides)
            return cls._root

    @staticmethod
    def _apply_runtime_settings(session: SparkSession, settings: Mapping[str, str]) -> None:
        """A session started elsewhere in the process (a notebook, a test fixture) keeps its static
        settings; the runtime ones are set on each thread's session so they hold all the same."""
        for key, value in settings.items():
            if key.startswith("spark.sql.") or key.startswith("spark.databricks."):
                try:
                    if session.conf.isModifiable(key) and session.conf.get(key, None) != value:
                        session.conf.set(key, value)
                except Exception as error:  # a setting this Spark does not know: Spark says why
                    logger.debug(f"tablestream: could not set {key}: {error}")


def ivy_home(settings: Mapping[str, str]) -> Path:
    return Path(settings.get("spark.jars.ivy", IVY_HOME)).expanduser()


def delta_jars_cached(settings: Mapping[str, str]) -> bool:
    """Whether Spark's Ivy cache already holds delta-spark's jar, so the start fetches nothing."""
    packages = settings.get("spark.jars.packages")
    if not packages:
        return True
    group, artifact, version = packages.split(",")[0].split(":")
    return (ivy_home(settings) / "jars" / f"{group}_{artifact}-{version}.jar").exists()


def recorded_jars_file(settings: Mapping[str, str]) -> Path | None:
    """Where a start records the jar files Ivy resolved for these packages, in the Ivy cache."""
    packages = settings.get("spark.jars.packages")
    if not packages:
        return None
    name = "".join(char if char.isalnum() or char in "._-" else "_" for char in packages)
    return ivy_home(settings) / "tablestream" / f"{name}.jars"


def with_recorded_jars(settings: Mapping[str, str]) -> dict[str, str]:
    """The settings with the jars an earlier start resolved for the same packages as `spark.jars`.

    Ivy resolves `spark.jars.packages` at every start, cache or not: about 4 s of each new dbt
    process here (docs/local-profile.md, "Starting"). The record is used only while every jar it
    names is still in the cache; otherwise Spark resolves again and the start records anew."""
    record = recorded_jars_file(settings)
    if record is None or not record.is_file():
        return dict(settings)
    jars = [line for line in record.read_text().splitlines() if line.strip()]
    if not jars or not all(Path(jar).is_file() for jar in jars):
        return dict(settings)
    reused = {key: value for key, value in settings.items() if key != "spark.jars.packages"}
    reused["spark.jars"] = ",".join(jars)
    return reused


def jar_files(listed: str | None) -> list[str]:
    """The files a `spark.jars` value lists (Spark writes them as `file:` URIs once it runs)."""
    return [item.removeprefix("file://").removeprefix("file:") for item in (listed or "").split(",") if item]


def session_jars(spark: SparkSession) -> list[str]:
    """The jar files on a running session's `spark.jars` (after a resolution, Ivy's)."""
    return jar_files(spark.sparkContext.getConf().get("spark.jars", ""))


def record_resolved_jars(settings: Mapping[str, str], spark: SparkSession) -> None:
    """Record the jar files this start's Ivy resolution put on `spark.jars`, for later starts."""
    record = recorded_jars_file(settings)
    if record is None:
        return
    jars = session_jars(spark)
    if not jars or not all(Path(jar).is_file() for jar in jars):
        return
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        written = record.with_name(f"{record.name}.{os.getpid()}.tmp")
        written.write_text("".join(f"{jar}\n" for jar in jars))
        written.replace(record)
    except OSError as error:  # a read-only cache: later starts resolve, as Spark does
        logger.debug(f"tablestream: could not record the resolved jars in {record}: {error}")


@contextmanager
def first_fetch_lock(settings: Mapping[str, str]) -> Iterator[None]:
    """Hold a lock on the Ivy cache while Spark resolves `spark.jars.packages`.

    Two JVMs that resolve the same packages into an empty Ivy cache at once fail: one of them
    reports `unresolved dependency: io.delta#delta-spark...: not found` while the other is still
    downloading (seen with two dbt processes started together on a fresh machine). A start that
    reuses recorded jars (`with_recorded_jars`) resolves nothing and takes no lock."""
    if not settings.get("spark.jars.packages"):
        yield
        return
    try:
        import fcntl
    except ImportError:  # no flock on this platform: concurrent first starts stay the user's to avoid
        yield
        return
    folder = ivy_home(settings) / "tablestream"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "fetch.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.info("waiting for another process to finish fetching delta-spark's jars")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def launch_jvm(settings: Mapping[str, str], log: Path) -> None:
    """Launch Spark's JVM for this process with its output (Ivy's report of 80 lines, Spark's own
    log lines) in ``log``, not between dbt's lines: pyspark's launcher takes the child's stdout and
    stderr, and the session started next joins this JVM."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    with open(log, "ab") as output:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": output, "stderr": output})  # type: ignore[no-untyped-call]
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def launch_jvm_with_archive(settings: Mapping[str, str], log: Path, archive: Path | None) -> dict[str, str]:
    """Launch the JVM with the class archive's options; if it does not start with them (a damaged
    archive, a JVM without the option), drop the archive and launch once more without them.
    Returns the settings the JVM runs with."""
    try:
        launch_jvm(settings, log)
        return dict(settings)
    except Exception as error:
        if archive is None:
            raise
        logger.debug(f"tablestream: Spark did not start with the class archive {archive} ({error}); without it")
        archive.unlink(missing_ok=True)
        plain = _class_archive.without_archive(settings)
        launch_jvm(plain, log)
        return plain


def start_session(warehouse: Path, overrides: Mapping[str, str]) -> SparkSession:
    """Start (or join) this process's SparkSession with delta-spark configured for ``warehouse``."""
    java = require_java()
    warehouse = check_warehouse(warehouse)
    # Workers must run the interpreter that runs dbt.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    settings = with_recorded_jars(session_settings(warehouse, overrides))
    existing = SparkContext._active_spark_context
    log = warehouse / JVM_LOG
    # A process whose earlier session stopped keeps its JVM; only a first start launches one.
    launching = existing is None and SparkContext._gateway is None
    archive = (
        _class_archive.archive_file(
            settings, ivy_home(settings) / "tablestream", java, jar_files(settings.get("spark.jars"))
        )
        if launching
        else None
    )
    if archive is not None:
        settings = _class_archive.with_archive(settings, archive)
    if launching:
        fetching = (
            ""
            if delta_jars_cached(settings)
            else ", fetching delta-spark's jars from Maven Central (first start only, about 35 s)"
        )
        logger.info(f"starting Spark{fetching}; its log: {log}")
    try:
        if launching:
            with first_fetch_lock(settings):
                settings = launch_jvm_with_archive(settings, log, archive)
        builder = SparkSession.builder.enableHiveSupport()
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if launching:
            record_resolved_jars(settings, spark)
            if archive is not None and _class_archive.records_dump_info(settings):
                logger.info(
                    f"this process writes Spark's class archive at its exit (once), for faster starts: {archive}"
                )
                atexit.register(_class_archive.dump, spark, archive)
    except Exception as error:
        raise EngineStartError(
            f"The local Spark session could not start: {error}. Spark's log: {log}. If delta-spark's jars could "
            "not be fetched, see docs/local-profile.md, 'Offline' (spark.jars)."
        ) from error
    if existing is not None:
        running = spark.conf.get("spark.sql.warehouse.dir", "") or ""
        if Path(running.removeprefix("file:")).resolve() != warehouse:
            logger.warning(
                f"tablestream: this process already runs a Spark session with warehouse {running}; "
                f"the profile's warehouse {warehouse} applies only when dbt starts the session."
            )
    spark.sparkContext.setLogLevel("ERROR")
    # PySpark logs every failed query as JSON on stderr; dbt already reports the error once.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return spark

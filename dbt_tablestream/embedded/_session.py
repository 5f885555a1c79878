"""Starting the local Spark session of the embedded engine."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dbt_tablestream.embedded._java import require_java
from dbt_tablestream.exceptions import EngineStartError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")

DEFAULT_SPARK_CONFIG: Mapping[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "dbt-tablestream",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.catalogImplementation": "in-memory",
    # One machine: a few shuffle partitions beat Spark's cluster default of 200.
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "4g",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.python.worker.reuse": "true",
}


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
        # Unique per thread: dbt opens connections from several threads at once.
        probe = warehouse / f".tablestream-write-probe-{os.getpid()}-{threading.get_ident()}"
        probe.write_text("")
        probe.unlink(missing_ok=True)
    except OSError as error:
        raise EngineStartError(f"The warehouse {warehouse} is not writable: {error}. {remedy}") from error
    return warehouse


def start_spark(warehouse: Path, spark_config: Mapping[str, str]) -> SparkSession:
    """Start (or join) this process's local SparkSession configured for ``warehouse``."""
    require_java()
    # Workers must run the interpreter that runs dbt, or they cannot import deltalake or us.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    config = dict(DEFAULT_SPARK_CONFIG)
    config["spark.sql.warehouse.dir"] = (warehouse / ".spark" / "warehouse").as_posix()
    config["spark.driver.extraJavaOptions"] = (
        f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()} -Dderby.system.home={(warehouse / '.spark').as_posix()}"
    )
    config.update(spark_config)
    builder = SparkSession.builder
    for key, value in config.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as error:
        raise EngineStartError(f"The local Spark session could not start: {error}") from error
    spark.sparkContext.setLogLevel("ERROR")
    # PySpark logs every failed query as JSON on stderr; dbt already reports the error once.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return spark

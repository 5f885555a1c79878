"""A local Spark standalone cluster behind the Thrift server, from pyspark's own wheel.

A master, one worker and `HiveThriftServer2` submitted to that master with delta-spark's jars and
settings: the topology dbt-spark's `method: thrift` reaches in production, where each connection is
a Spark session of its own. Every process is bound to 127.0.0.1 and started in a process group of
its own, so stopping the cluster ends everything it started (the worker's executors included).

Run it by hand (Ctrl-C stops it):

    python tests/cluster/local_cluster.py --workdir /tmp/tablestream-cluster

It prints the dbt profile that reaches it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from dbt.adapters.tablestream._session import (
    DELTA_SETTINGS,
    IVY_HOME,
    IVY_SETTINGS,
    LOOPBACK,
    SMALL_MACHINE_SETTINGS,
    session_jars,
)

# The local profile's small-machine sizing, less what only a local-mode driver takes, plus what a
# standalone cluster adds: executors sized for 2 cores.
CLUSTER_SETTINGS = {
    **{
        key: value
        for key, value in SMALL_MACHINE_SETTINGS.items()
        if key not in ("spark.master", "spark.app.name", "spark.driver.memory")
    },
    "spark.executor.memory": "2g",
    "spark.cores.max": "2",
}


class ClusterStartError(RuntimeError):
    """The local cluster did not come up; the message names the process and its log."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def maven_repository() -> str:
    """The Maven repository the local profile's Ivy settings resolve delta-spark from, so the
    cluster's one extra jar comes from the same place."""
    (central,) = ElementTree.parse(IVY_SETTINGS).getroot().iter("ibiblio")
    return central.attrib["root"].rstrip("/")


def hive_llap_common_jar() -> str:
    """hive-llap-common for the Thrift server's own class path, fetched once from Maven Central into
    Ivy's jar folder. Spark 4 no longer ships it (SPARK-51029), yet Hive's FunctionRegistry needs it
    to initialize, which a session's close can trigger: without it that close fails with
    NoClassDefFoundError LlapSigner$Signable, and the dbt run that closed the session ends in an
    error. The version is the Hive that pyspark bundles."""
    (hive_exec,) = (spark_home() / "jars").glob("hive-exec-*-core.jar")
    version = hive_exec.name.removeprefix("hive-exec-").removesuffix("-core.jar")
    jar = Path(IVY_HOME).expanduser() / "jars" / f"org.apache.hive_hive-llap-common-{version}.jar"
    if not jar.is_file():
        url = f"{maven_repository()}/org/apache/hive/hive-llap-common/{version}/hive-llap-common-{version}.jar"
        jar.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: two test workers may fetch it at once.
        partial = jar.with_name(f"{jar.name}.{os.getpid()}.part")
        with urllib.request.urlopen(url, timeout=60) as response:
            partial.write_bytes(response.read())
        partial.replace(jar)
    return jar.as_posix()


def resolved_delta_jars(workdir: Path) -> list[str]:
    """delta-spark's jars as the local profile resolves them (Maven Central, Ivy's cache): a local
    session is started for it, and stopped."""
    from dbt.adapters.tablestream._session import start_session

    spark = start_session(workdir, {})
    try:
        return session_jars(spark)
    finally:
        spark.stop()


@dataclass
class LocalCluster:
    """Start with `start()`, stop with `stop()` (also on a failed start)."""

    workdir: Path
    startup_timeout: float = 240.0
    master_port: int = field(default_factory=free_port)
    thrift_port: int = field(default_factory=free_port)
    jars: list[str] = field(default_factory=list)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    @property
    def warehouse(self) -> Path:
        return self.workdir / "warehouse"

    def profile(self, schema: str = "analytics", threads: int = 1) -> dict[str, object]:
        """A stock dbt-spark `method: thrift` profile target for this cluster."""
        return {
            "type": "spark",
            "method": "thrift",
            "host": LOOPBACK,
            "port": self.thrift_port,
            "user": "dbt",
            "schema": schema,
            "threads": threads,
            "connect_retries": 3,
            "connect_timeout": 10,
        }

    def start(self) -> LocalCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        jars = self.jars or resolved_delta_jars(self.workdir / "resolver")
        self.warehouse.mkdir(exist_ok=True)
        (self.workdir / "logs").mkdir(exist_ok=True)
        home = spark_home()
        # The master's REST submission server (port 6066) is on by default: nothing here uses it.
        master_properties = self.workdir / "master.properties"
        master_properties.write_text("spark.master.rest.enabled false\n")
        try:
            self._launch(
                "master",
                [
                    str(home / "bin" / "spark-class"),
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    LOOPBACK,
                    "--port",
                    str(self.master_port),
                    "--webui-port",
                    str(free_port()),
                    "--properties-file",
                    str(master_properties),
                ],
            )
            self._wait_for_port("master", self.master_port)
            self._launch(
                "worker",
                [
                    str(home / "bin" / "spark-class"),
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    LOOPBACK,
                    "--webui-port",
                    str(free_port()),
                    "--cores",
                    "2",
                    "--memory",
                    "4g",
                    "--work-dir",
                    str(self.workdir / "worker"),
                    self.master_url,
                ],
            )
            settings = {
                **CLUSTER_SETTINGS,
                **DELTA_SETTINGS,
                "spark.sql.warehouse.dir": self.warehouse.as_posix(),
            }
            command = [
                str(home / "bin" / "spark-submit"),
                "--master",
                self.master_url,
                "--class",
                "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
                # Delta's own jars on the driver's class path, not only in --jars: the Thrift server
                # resolves the `delta` data source per connection (a session of its own), and only
                # its first session saw jars added at run time. Only io.delta's: a dependency's older
                # Jackson ahead of Spark's would break Spark itself. And hive-llap-common, which
                # Hive's own function registry needs (hive_llap_common_jar).
                "--jars",
                ",".join(jars),
                "--driver-class-path",
                os.pathsep.join(
                    [*(jar for jar in jars if Path(jar).name.startswith("io.delta_")), hive_llap_common_jar()]
                ),
                "--driver-java-options",
                f"-Dderby.system.home={self.workdir.as_posix()}",
            ]
            for key, value in settings.items():
                command += ["--conf", f"{key}={value}"]
            command += [
                "--hiveconf",
                f"hive.server2.thrift.port={self.thrift_port}",
                "--hiveconf",
                f"hive.server2.thrift.bind.host={LOOPBACK}",
                "spark-internal",
            ]
            self._launch("thrift", command)
            self._wait_for_port("thrift", self.thrift_port)
            self._wait_for_sql()
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, name: str, command: list[str]) -> None:
        environment = {
            **os.environ,
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_HOME": str(spark_home()),
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOG_DIR": str(self.workdir / "logs"),
        }
        log = (self.workdir / "logs" / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(
            command, cwd=self.workdir, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def _log_tail(self, name: str) -> str:
        lines = (self.workdir / "logs" / f"{name}.log").read_text(errors="replace").splitlines()
        return "\n".join(lines[-15:])

    def _wait_for_port(self, name: str, port: int) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.processes[name].poll() is not None:
                raise ClusterStartError(
                    f"The local cluster's {name} exited with {self.processes[name].returncode} before listening "
                    f"on {LOOPBACK}:{port}. Its log ({self.workdir / 'logs' / (name + '.log')}) ends:\n"
                    + self._log_tail(name)
                )
            with socket.socket() as probe:
                probe.settimeout(1)
                if probe.connect_ex((LOOPBACK, port)) == 0:
                    return
            time.sleep(0.5)
        raise ClusterStartError(
            f"The local cluster's {name} did not listen on {LOOPBACK}:{port} within {self.startup_timeout:.0f} s. "
            f"Its log ({self.workdir / 'logs' / (name + '.log')}) ends:\n" + self._log_tail(name)
        )

    def _wait_for_sql(self) -> None:
        """The Thrift port opens before the server takes statements; wait for a real one."""
        from pyhive import hive

        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                connection = hive.connect(host=LOOPBACK, port=self.thrift_port, username="dbt")
                cursor = connection.cursor()
                cursor.execute("select 1")
                cursor.fetchall()
                connection.close()
                return
            except Exception as error:
                if time.monotonic() > deadline:
                    raise ClusterStartError(
                        f"The local Thrift server on {LOOPBACK}:{self.thrift_port} took no statement within "
                        f"{self.startup_timeout:.0f} s ({error}). Its log ends:\n" + self._log_tail("thrift")
                    ) from error
                time.sleep(1)

    def sql(self, statement: str) -> list[tuple[object, ...]]:
        """One statement on a connection of its own (a Spark session of its own on the server)."""
        from pyhive import hive

        connection = hive.connect(host=LOOPBACK, port=self.thrift_port, username="dbt")
        try:
            cursor = connection.cursor()
            cursor.execute(statement)
            return list(cursor.fetchall()) if cursor.description else []
        finally:
            connection.close()

    def statement_ids(self, fragment: str) -> list[str]:
        """The ids the Thrift server gave the statements holding `fragment`, from its log's
        "Submitting query '<statement>' with <id>" lines, oldest first."""
        text = (self.workdir / "logs" / "thrift.log").read_text(errors="replace")
        return [
            found.group(2)
            for found in re.finditer(r"Submitting query '(.*?)' with ([0-9a-f-]{36})", text, re.DOTALL)
            if fragment in found.group(1)
        ]

    def wait_for_statement(self, fragment: str, timeout: float = 300) -> str:
        """The id of the first statement holding `fragment` the Thrift server has taken, once it has."""
        deadline = time.monotonic() + timeout
        while not (ids := self.statement_ids(fragment)):
            if time.monotonic() > deadline:
                raise AssertionError(f"the Thrift server never took a statement holding {fragment!r}")
            time.sleep(0.2)
        return ids[0]

    def wait_for_log(self, pattern: str, timeout: float = 300) -> re.Match[str]:
        """The first match of the regular expression `pattern` in the Thrift server's log, once it
        is there: a handshake with what the server has done, rather than a guess of how long it takes."""
        log = self.workdir / "logs" / "thrift.log"
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, log.read_text(errors="replace"), re.DOTALL)
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the Thrift server never logged {pattern!r}; its log ends:\n{self._log_tail('thrift')}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop every process this cluster started, newest first: SIGTERM to its process group,
        then SIGKILL to what is left after 20 s."""
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # executors the worker started, if any survived
            process.wait()
        self.processes.clear()


def main() -> int:
    parser = argparse.ArgumentParser(description="Start a local Spark cluster behind the Thrift server.")
    parser.add_argument("--workdir", type=Path, default=Path("tablestream-cluster"))
    arguments = parser.parse_args()
    cluster = LocalCluster(arguments.workdir.resolve())
    started = time.monotonic()
    cluster.start()
    print(
        f"Local cluster up in {time.monotonic() - started:.0f} s: master {cluster.master_url}, "
        f"Thrift {LOOPBACK}:{cluster.thrift_port}, warehouse {cluster.warehouse}."
    )
    print("dbt profile target (stock dbt-spark, `pip install 'dbt-spark[PyHive]'`):")
    for key, value in cluster.profile().items():
        print(f"  {key}: {value}")
    print("Ctrl-C (or SIGTERM) stops it.")
    # SIGTERM as well as Ctrl-C: `kill` of this script must not leave the cluster's JVMs behind.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

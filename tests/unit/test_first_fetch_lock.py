"""A start's Ivy resolution, shared safely: two processes that resolve delta-spark's packages take
turns (`first_fetch_lock`), and a start reuses the jars an earlier start recorded
(`with_recorded_jars`), which resolves nothing and takes no lock. tests/functional/test_install.py
starts real Spark both ways."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
import time
from pathlib import Path

from dbt.adapters.tablestream._session import (
    delta_package,
    first_fetch_lock,
    recorded_jars_file,
    with_recorded_jars,
)

WAITING = "waiting for another process to finish fetching delta-spark's jars"

# A second process enters the lock and prints when it got in (its last line; the adapter's log
# line saying that it waits comes before).
SECOND = """
import sys, time
from dbt.adapters.tablestream._session import first_fetch_lock
settings = {"spark.jars.packages": sys.argv[1], "spark.jars.ivy": sys.argv[2]}
with first_fetch_lock(settings):
    print(time.time())
"""


def settings_for(ivy: Path) -> dict[str, str]:
    return {"spark.jars.packages": delta_package(), "spark.jars.ivy": str(ivy), "spark.app.name": "probe"}


def start_second(settings: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        # Unbuffered: its line saying it waits must reach this process while it waits.
        [sys.executable, "-u", "-c", SECOND, settings["spark.jars.packages"], settings["spark.jars.ivy"]],
        stdout=subprocess.PIPE,
        text=True,
    )


def read_until_waiting(second: subprocess.Popen[str]) -> str:
    """The second process's output up to the line saying it waits for the lock: it has tried the
    lock and found it held."""
    assert second.stdout is not None
    lines = []
    for line in second.stdout:
        lines.append(line)
        if WAITING in line:
            return "".join(lines)
    raise AssertionError("the second start never waited for the lock:\n" + "".join(lines))


def entered_at(second: subprocess.Popen[str]) -> tuple[float, str]:
    """When the second process got the lock, and what it printed."""
    output, _ = second.communicate(timeout=60)
    assert second.returncode == 0, output
    return float(output.strip().splitlines()[-1]), output


def record(settings: dict[str, str], jars: list[Path]) -> None:
    for jar in jars:
        jar.parent.mkdir(parents=True, exist_ok=True)
        jar.touch()
    path = recorded_jars_file(settings)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{jar}\n" for jar in jars))


def test_a_second_resolution_waits_for_the_first(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    with first_fetch_lock(settings):
        second = start_second(settings)
        waited = read_until_waiting(second)
        released = time.time()
    entered, output = entered_at(second)
    assert entered >= released, "the second start resolved while the first was still fetching:\n" + waited + output


def test_a_start_over_recorded_jars_resolves_nothing_and_takes_no_lock(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    jars = [tmp_path / "ivy" / "jars" / "io.delta_delta-spark.jar", tmp_path / "ivy" / "jars" / "antlr.jar"]
    record(settings, jars)
    reused = with_recorded_jars(settings)
    assert "spark.jars.packages" not in reused
    assert reused["spark.jars"] == ",".join(str(jar) for jar in jars)
    assert reused["spark.app.name"] == "probe"
    # Someone holds the lock, yet this start goes straight on (a wait would outlive the join).
    folder = tmp_path / "ivy" / "tablestream"
    with open(folder / "fetch.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entered = threading.Event()

        def start() -> None:
            with first_fetch_lock(reused):
                entered.set()

        starting = threading.Thread(target=start, daemon=True)
        starting.start()
        starting.join(timeout=10)
        assert entered.is_set(), "a start over recorded jars waited for the fetch lock"
        fcntl.flock(lock, fcntl.LOCK_UN)


def test_a_record_naming_a_jar_no_longer_cached_is_not_used(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    jars = [tmp_path / "ivy" / "jars" / "io.delta_delta-spark.jar", tmp_path / "ivy" / "jars" / "antlr.jar"]
    record(settings, jars)
    jars[1].unlink()
    assert with_recorded_jars(settings) == settings


def test_no_record_or_the_users_own_jars_leave_the_settings_as_they_are(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    assert with_recorded_jars(settings) == settings
    offline = {"spark.jars": "/jars/a.jar"}
    assert recorded_jars_file(offline) is None and with_recorded_jars(offline) == offline


def test_a_record_is_kept_per_package_version(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    record(settings, [tmp_path / "ivy" / "jars" / "io.delta_delta-spark.jar"])
    other = {**settings, "spark.jars.packages": settings["spark.jars.packages"] + "0"}
    assert with_recorded_jars(other) == other

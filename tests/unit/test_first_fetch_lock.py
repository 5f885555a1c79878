"""Two processes that start Spark into an empty Ivy cache take turns (`first_fetch_lock`): the
second waits until the first has resolved the jars, and starts after one complete resolution no
longer lock at all."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import time
from pathlib import Path

from dbt.adapters.tablestream._session import delta_package, first_fetch_lock, resolved_marker

HOLD_SECONDS = 3.0

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
    return {"spark.jars.packages": delta_package(), "spark.jars.ivy": str(ivy)}


def cache_delta_jar(settings: dict[str, str]) -> None:
    group, artifact, version = settings["spark.jars.packages"].split(":")
    jars = Path(settings["spark.jars.ivy"]) / "jars"
    jars.mkdir(parents=True, exist_ok=True)
    (jars / f"{group}_{artifact}-{version}.jar").touch()


def start_second(settings: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SECOND, settings["spark.jars.packages"], settings["spark.jars.ivy"]],
        stdout=subprocess.PIPE,
        text=True,
    )


def entered_at(second: subprocess.Popen[str]) -> tuple[float, str]:
    """When the second process got the lock, and what it printed."""
    output, _ = second.communicate(timeout=60)
    assert second.returncode == 0, output
    return float(output.strip().splitlines()[-1]), output


def test_a_second_first_start_waits_for_the_first(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    marker = resolved_marker(settings)
    assert marker is not None and not marker.exists()
    with first_fetch_lock(settings):
        # The first start is resolving: the second process waits for all of it.
        second = start_second(settings)
        time.sleep(HOLD_SECONDS)
        cache_delta_jar(settings)
        released = time.time()
    entered, output = entered_at(second)
    assert entered >= released, "the second start went on while the first was still fetching"
    assert "waiting for another process to finish fetching delta-spark's jars" in output
    assert marker.exists()


def test_a_failed_first_start_leaves_the_next_to_resolve(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    try:
        with first_fetch_lock(settings):
            raise RuntimeError("unresolved dependency")
    except RuntimeError:
        pass
    marker = resolved_marker(settings)
    assert marker is not None and not marker.exists()


def test_starts_after_a_complete_resolution_do_not_wait(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    with first_fetch_lock(settings):
        cache_delta_jar(settings)
    marker = resolved_marker(settings)
    assert marker is not None
    # The lock is held by someone else, yet a start over a resolved cache goes straight on.
    with open(marker.parent / "fetch.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entered, output = entered_at(start_second(settings))
        assert entered < time.time()
        assert "waiting" not in output


def test_an_emptied_jar_folder_takes_the_lock_again(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "ivy")
    with first_fetch_lock(settings):
        cache_delta_jar(settings)
    for jar in (Path(settings["spark.jars.ivy"]) / "jars").iterdir():
        jar.unlink()
    marker = resolved_marker(settings)
    assert marker is not None
    with open(marker.parent / "fetch.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        second = start_second(settings)
        time.sleep(HOLD_SECONDS)
        released = time.time()
        fcntl.flock(lock, fcntl.LOCK_UN)
    entered, _ = entered_at(second)
    assert entered >= released

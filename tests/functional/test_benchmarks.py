"""The maintained benchmarks run on tiny data in the default suite, so that they do not break unseen:
bench/tiny.py runs each `--tiny` in turn, in a process of its own with one local session (the
benchmarks drop and create the `app` and `analytics` schemas, which a worker's shared session must
keep), and fails unless each printed its RESULT line with the keys its full run prints and wrote it
in its JSON."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.functional.dbt_project_helper import PACKAGE_ROOT

# What fits the 120 s of one worker's time this test may add to the default suite: a stream run
# costs seconds whatever its data. bench/README.md gives the others' tiny seconds; they run by hand,
# `python bench/tiny.py <name>`.
IN_DEFAULT_SUITE = ("ingest", "directory", "year", "run_profile")


def test_maintained_benchmarks_run_on_tiny_data(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(PACKAGE_ROOT / "bench" / "tiny.py"), "--out-dir", str(tmp_path), *IN_DEFAULT_SUITE],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{done.stdout[-8000:]}\n{done.stderr[-3000:]}"
    for name in IN_DEFAULT_SUITE:
        assert f"BENCHMARK {name}\n" in done.stdout and (tmp_path / f"{name}.json").exists(), name

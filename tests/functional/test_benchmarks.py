"""The maintained benchmarks run on tiny data (bench/README.md), so that they do not break unseen.

Those that fit the default suite run there together: bench/tiny.py runs each `--tiny` in turn, in a
process of its own with one local session (the benchmarks drop and create the `app` and
`analytics` schemas, which a worker's shared session must keep), and fails unless each printed its
RESULT line with the keys its full run prints and wrote it in its JSON. The others, each tens of
seconds to minutes even on tiny data (a stream run costs seconds whatever its data, and some start
processes or a cluster of their own), are opt-in tests marked `benches`: CI runs them in its slices
of the opt-in tiers (tests/opt_in_slices.py), so every one runs within a rotation of CI runs, and
`pytest -m benches` runs them all."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.dbt_project_helper import PACKAGE_ROOT

BENCH = PACKAGE_ROOT / "bench"
# What fits the 120 s of one worker's time this test may add to the default suite.
IN_DEFAULT_SUITE = ("ingest", "directory", "year", "run_profile")
# The rest, each its command after the interpreter: bench/tiny.py for those that run in one
# process, the script with --tiny for those that start processes of their own.
IN_SLICES: dict[str, list[str]] = {
    **{
        name: [str(BENCH / "tiny.py"), name]
        for name in (
            "run",
            "run_scale",
            "run_carryovers",
            "run_warehouse",
            "run_changes",
            "aggregate",
            "view",
            "events",
            "history",
            "log_read",
            "long_run",
            "mirror",
        )
    },
    "small_window": [str(BENCH / "small_window.py"), "--tiny"],
    "fresh_scale": [str(BENCH / "fresh_scale.py"), "--tiny"],
    "pending": [str(BENCH / "pending.py"), "--tiny"],
    "local_start": [str(BENCH / "local_start.py"), "--tiny"],
    "run_cold_only": [str(BENCH / "run.py"), "--cold-only", "--tiny"],
}


def run_tiny(command: list[str], timeout: int) -> str:
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=timeout, cwd=PACKAGE_ROOT)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-8000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_maintained_benchmarks_run_on_tiny_data(tmp_path: Path) -> None:
    printed = run_tiny([str(BENCH / "tiny.py"), "--out-dir", str(tmp_path), *IN_DEFAULT_SUITE], timeout=900)
    for name in IN_DEFAULT_SUITE:
        assert f"BENCHMARK {name}\n" in printed and (tmp_path / f"{name}.json").exists(), name


@pytest.mark.benches
@pytest.mark.parametrize("name", sorted(IN_SLICES))
def test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice(name: str) -> None:
    printed = run_tiny(IN_SLICES[name], timeout=1800)
    results = [line for line in printed.splitlines() if line.startswith("RESULT ")]
    assert results, f"{name} printed no RESULT line:\n{printed[-4000:]}"


def test_every_maintained_benchmark_runs_on_tiny_data_somewhere() -> None:
    """Every benchmark bench/README.md's table names is run tiny by one of the tests above."""
    named = set(re.findall(r"^\| `(\w+)\.py", (BENCH / "README.md").read_text(), re.MULTILINE))
    covered = set(IN_DEFAULT_SUITE) | set(IN_SLICES) | {Path(command[0]).stem for command in IN_SLICES.values()}
    assert len(named) > 10 and named <= covered, named - covered

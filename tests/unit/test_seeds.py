"""A test run's seed (tests/seeds.py): each run prints a new one in its header, and
TABLESTREAM_SEED=<n> replays the run that printed n, histories included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.functional.lanes import lane_randoms

ROOT = Path(__file__).resolve().parents[2]


def printed_seed(**environment: str) -> int:
    """The seed a pytest run prints in its header (a collection of one small file, no Spark)."""
    env = {name: value for name, value in os.environ.items() if name not in ("CI", "TABLESTREAM_SEED")}
    env.update(environment)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "--collect-only",
            "tests/unit/test_pure.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found = re.search(r"random histories from seed (\d+) \(replay: TABLESTREAM_SEED=\1\)", result.stdout)
    assert found, result.stdout + result.stderr
    return int(found.group(1))


def test_two_runs_print_different_seeds_and_a_printed_seed_replays() -> None:
    first, second = printed_seed(), printed_seed()
    assert first != second
    assert printed_seed(TABLESTREAM_SEED=str(first)) == first


def test_a_replayed_seed_draws_the_same_histories() -> None:
    def draws(seed: int) -> list[list[float]]:
        return [[lane.random() for _ in range(5)] for lane in lane_randoms(seed, lanes=3)]

    assert draws(123456789) == draws(123456789)
    assert draws(123456789) != draws(123456790)

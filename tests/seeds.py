"""The seed of a test run's random histories (CONTRIBUTING.md, "Random histories").

Each pytest run draws a new seed, prints it in its header, and hands it to its workers; the
property tests' first example is that seed, so every CI run explores new histories.
`TABLESTREAM_SEED=<n> pytest ...` replays the run that printed n. A property example of lanes
(tests/functional/lanes.py) also carries seed 0's histories, beside the run's own.
"""

from __future__ import annotations

import os
import secrets

from hypothesis import strategies as st

SEED_VARIABLE = "TABLESTREAM_SEED"
# The most a seed may be: random.Random takes any integer, and a short one is easy to copy.
SEED_LIMIT = 2**32


def draw_run_seed() -> int:
    """The run's seed: TABLESTREAM_SEED when set (a replay), else a new one. pytest's controller
    calls it once and exports it, so that its workers, which inherit its environment, use it too."""
    given = os.environ.get(SEED_VARIABLE)
    seed = int(given) if given else secrets.randbelow(SEED_LIMIT)
    os.environ[SEED_VARIABLE] = str(seed)
    return seed


def run_seed() -> int:
    """The seed draw_run_seed chose for this run (a new one outside pytest)."""
    given = os.environ.get(SEED_VARIABLE)
    return int(given) if given else draw_run_seed()


def seeds() -> st.SearchStrategy[int]:
    """A property test's seeds: Hypothesis's first example is its simplest value, 0, which is
    moved to the run's seed; a soak's further examples follow it."""
    return st.integers(min_value=0, max_value=SEED_LIMIT - 1).map(lambda offset: (run_seed() + offset) % SEED_LIMIT)


def example_seeds(seed: int) -> list[int]:
    """The seeds of one example's lanes: its own, then 0, whose histories every run keeps trying."""
    return [seed] if seed == 0 else [seed, 0]

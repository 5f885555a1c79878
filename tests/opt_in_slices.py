"""The opt-in tiers' tests in slices, one of which each CI run runs (CONTRIBUTING.md, "The opt-in
tiers in CI").

The soaks, the scenarios and the `changes_full` variants cannot all fit in CI's 60 minutes.
`.ci/run` runs `pytest -m 'extended or soak or scenarios or changes_full' --opt-in-slice <its
commit count>`: the extended tier whole, and one slice of the opt-in tests. The opt-in tests are
split into slices of about SLICE_SECONDS of one worker's time each, by their times in a slice
(OPT_IN_SECONDS; a test not measured yet counts UNMEASURED_SECONDS), and the commit count, modulo
the number of slices, picks one. Consecutive commits pick consecutive slices, so every opt-in test
runs within as many CI runs as there are slices. In a slice a property soak runs SLICE_EXAMPLES of
its examples, each from the run's new seed, so consecutive runs of it explore different histories;
`pytest -m soak` runs them all.
"""

from __future__ import annotations

import math
from typing import Protocol

OPT_IN_MARKERS = ("soak", "scenarios", "changes_full")
# A slice's share of CI's 60 minutes: one worker's seconds (the slice runs on two workers, beside
# the extended tier).
SLICE_SECONDS = 600
UNMEASURED_SECONDS = 120
# The examples a property soak runs in a slice (a soak's own count, 4 to 8, with `-m soak`).
SLICE_EXAMPLES = 2
# Each opt-in test's seconds on one worker in a slice: its time in the last full run of the tiers
# (its date and commit in CONTRIBUTING.md, "The opt-in tiers in CI"), a property soak's scaled to
# SLICE_EXAMPLES of its examples. Refresh it after that run.
OPT_IN_SECONDS: dict[str, float] = {}

_in_slice = False


class Item(Protocol):
    nodeid: str

    def get_closest_marker(self, name: str) -> object | None: ...


def enter_slice() -> None:
    """This process runs a slice (conftest's pytest_configure, in the controller and each worker)."""
    global _in_slice
    _in_slice = True


def examples_in_run(examples: int) -> int:
    """A property test's examples in this process: its own, or at most SLICE_EXAMPLES in a slice."""
    return min(examples, SLICE_EXAMPLES) if _in_slice else examples


def is_opt_in(item: Item) -> bool:
    return any(item.get_closest_marker(marker) is not None for marker in OPT_IN_MARKERS)


def slices(items: list[Item]) -> list[list[Item]]:
    """The items in slices of about SLICE_SECONDS each, longest first into the lightest slice; the
    same items always give the same slices."""
    cost = {item.nodeid: OPT_IN_SECONDS.get(item.nodeid, UNMEASURED_SECONDS) for item in items}
    count = max(1, math.ceil(sum(cost.values()) / SLICE_SECONDS))
    bins: list[list[Item]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for item in sorted(items, key=lambda item: (-cost[item.nodeid], item.nodeid)):
        lightest = loads.index(min(loads))
        bins[lightest].append(item)
        loads[lightest] += cost[item.nodeid]
    return bins


def choose_slice(items: list[Item], chosen: int) -> tuple[list[Item], list[Item]]:
    """Every item that is not opt-in, with the opt-in items of slice `chosen` (modulo the number of
    slices); and the other opt-in items."""
    opt_in = [item for item in items if is_opt_in(item)]
    if not opt_in:
        return list(items), []
    every = slices(opt_in)
    names = {item.nodeid for item in every[chosen % len(every)]}
    kept = [item for item in items if not is_opt_in(item) or item.nodeid in names]
    dropped = [item for item in opt_in if item.nodeid not in names]
    return kept, dropped

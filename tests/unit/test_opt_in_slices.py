"""CI's slice of the opt-in tiers (tests/opt_in_slices.py): every opt-in test in exactly one slice,
each slice within its share, the extended tier always whole."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests import opt_in_slices
from tests.opt_in_slices import (
    SLICE_EXAMPLES,
    SLICE_SECONDS,
    choose_slice,
    examples_in_run,
    kill_steps_in_run,
    slices,
)


@dataclass
class FakeItem:
    nodeid: str
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def items(times: dict[str, float], monkeypatch: pytest.MonkeyPatch) -> list[FakeItem]:
    monkeypatch.setattr(opt_in_slices, "OPT_IN_SECONDS", times)
    marks = ({"soak"}, {"scenarios"}, {"changes_full", "extended"})
    opt_in = [FakeItem(name, set(marks[index % 3])) for index, name in enumerate(times)]
    return [FakeItem("extended_a", {"extended"}), *opt_in, FakeItem("extended_b", {"extended"})]


def test_every_opt_in_test_is_in_one_slice_and_the_extended_tier_in_all(monkeypatch: pytest.MonkeyPatch) -> None:
    times = {f"t{index}": float(30 + (index * 37) % 400) for index in range(40)}
    every = items(times, monkeypatch)
    count = len(slices([item for item in every if item.markers - {"extended"}]))
    assert count > 1
    seen: list[str] = []
    for chosen in range(count):
        kept, dropped = choose_slice(every, chosen)
        names = [item.nodeid for item in kept]
        assert {"extended_a", "extended_b"} <= set(names)
        assert len(kept) + len(dropped) == len(every)
        chosen_opt_in = [name for name in names if name.startswith("t")]
        assert sum(times[name] for name in chosen_opt_in) <= SLICE_SECONDS + max(times.values())
        seen += chosen_opt_in
    assert sorted(seen) == sorted(times), "each opt-in test runs in exactly one slice"
    # The choice wraps around: the next commit starts the rotation again.
    assert [item.nodeid for item in choose_slice(every, count)[0]] == [
        item.nodeid for item in choose_slice(every, 0)[0]
    ]


def test_an_unmeasured_test_still_lands_in_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    every = [*items({"t0": 100.0}, monkeypatch), FakeItem("new", {"soak"})]
    assert "new" in [item.nodeid for item in choose_slice(every, 0)[0]]


def test_a_soak_runs_fewer_examples_only_in_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opt_in_slices, "_in_slice", False)
    assert examples_in_run(8) == 8
    monkeypatch.setattr(opt_in_slices, "_in_slice", True)
    assert examples_in_run(8) == SLICE_EXAMPLES
    assert examples_in_run(1) == 1


def test_a_slice_kills_at_half_the_steps_and_two_consecutive_slices_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = ["window_pinned", "before_target_commit", "after_target_commit", "after_offsets_append"]
    monkeypatch.setattr(opt_in_slices, "_slice_number", None)
    assert kill_steps_in_run(steps) == steps
    for number in (514, 515):
        monkeypatch.setattr(opt_in_slices, "_slice_number", number)
        this = kill_steps_in_run(steps)
        monkeypatch.setattr(opt_in_slices, "_slice_number", number + 1)
        following = kill_steps_in_run(steps)
        assert len(this) == len(following) == 2 and sorted(this + following) == sorted(steps)

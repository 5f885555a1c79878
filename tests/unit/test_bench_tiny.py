"""bench/tiny.py's check of a tiny run (tests/functional/test_benchmarks.py runs the benchmarks): a
benchmark fails without a RESULT line, with other keys than its full run's, or with a JSON that
does not hold its RESULT line; a size or share in a key is not a difference."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.functional.dbt_project_helper import PACKAGE_ROOT

sys.path.insert(0, str(PACKAGE_ROOT / "bench"))

import tiny

EVENTS_FULL_RUN = "RESULT events_vs_plain_0.1%=1.21 events_vs_plain_1.0%=1.19"


def written(tmp_path: Path, line: str) -> Path:
    out = tmp_path / "events.json"
    out.write_text(json.dumps({"result": line}))
    return out


def test_a_tiny_run_with_its_full_runs_keys_passes(tmp_path: Path) -> None:
    line = "RESULT events_vs_plain_1.0%=0.93"
    assert tiny.result_keys(line) == tiny.result_keys(EVENTS_FULL_RUN) == {"events_vs_plain_N%"}
    assert tiny.check("events", f"window 100 events\n{line}\n", written(tmp_path, line)) is None


@pytest.mark.parametrize(
    ("printed", "json_line", "found"),
    [
        ("window 100 events\n", "RESULT events_vs_plain_1.0%=0.93", "no RESULT line"),
        ("RESULT events_vs_plain=0.93\n", "RESULT events_vs_plain=0.93", "not its full run's"),
        (
            "RESULT events_vs_plain_1.0%=0.93 extra=1\n",
            "RESULT events_vs_plain_1.0%=0.93 extra=1",
            "not its full run's",
        ),
        ("RESULT events_vs_plain_1.0%=0.93\n", "RESULT events_vs_plain_1.0%=0.94", "does not hold its RESULT line"),
    ],
)
def test_a_tiny_run_fails_without_its_result_keys_or_json(
    tmp_path: Path, printed: str, json_line: str, found: str
) -> None:
    assert found in (tiny.check("events", printed, written(tmp_path, json_line)) or "")


def test_a_digit_in_a_name_is_kept() -> None:
    assert tiny.result_keys("RESULT scd2_vs_plain=0.96") == {"scd2_vs_plain"}

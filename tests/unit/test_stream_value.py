"""A stream's value is made by its constructors (_stream_input, _stream_input_with), never changed in
place, so every key passes _stream_input's check (docs/architecture.md, "The stream value")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbt_tablestream._macros import render
from dbt_tablestream.exceptions import StreamError

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = render("_settings_from_configs", {}, "Stream s", "pyspark")
FIELDS = {"stream": "s", "source": "app.t", "after": 2, "through": 5, "epoch": 1}


def test_an_input_with_changes_is_a_new_input_whose_stream_id_follows_the_epoch() -> None:
    input_ = render("_stream_input", SETTINGS, FIELDS)
    moved = render("_stream_input_with", input_, {"epoch": 2, "after": 5, "note": "n"})
    assert (input_["epoch"], input_["after"], input_["note"]) == (1, 2, None)
    assert (moved["epoch"], moved["after"], moved["note"]) == (2, 5, "n")
    assert moved["stream_id"] == render("_stream_app_id", ["s"], [2]) != input_["stream_id"]
    assert list(moved) == list(input_)


@pytest.mark.parametrize("changes", [{"views": "v"}, {"stream_id": "x"}])
def test_an_unknown_key_or_the_stream_id_is_refused(changes: dict[str, str]) -> None:
    with pytest.raises(StreamError, match="_stream_input_with: unknown key"):
        render("_stream_input_with", render("_stream_input", SETTINGS, FIELDS), changes)


def test_nothing_changes_a_stream_value_in_place() -> None:
    in_place = re.compile(r"\b(?:stream|input|range|window)(?:\.files)?\.update\(|\bwindow\[\"\w+\"\] =")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in [*(ROOT / "macros").rglob("*.sql"), *(ROOT / "dbt_tablestream").rglob("*.py")]
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if in_place.search(line) and "stream_value.sql" not in path.name
    ]
    assert found == []

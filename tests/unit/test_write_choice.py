"""The write of a later net window (_stream_net_write_choice, docs/architecture.md, "A window's
write"), a pure macro, as a table of cases: the window's numbers, the target's layout and the
model's settings in, the write and its commit's session settings out."""

from __future__ import annotations

from typing import Any

import pytest

from dbt_tablestream._macros import render

FILE_ROWS = 250_000
TEN_MILLION = {"rows": 10_000_000, "vectors": False, "feed": False}  # 40 files of FILE_ROWS
AUTO = {"merge_write": "auto", "replace_where_keys": 100_000, "max_rows_per_file": FILE_ROWS}


def window(keys: int | None, files: int | None, listed: bool = True) -> dict[str, Any]:
    return {"count": keys, "files": files, "listed": [str(k) for k in range(keys or 0)] if listed else None}


CASES = [
    # (case, window, target, settings, write)
    ("a scattered window touching every file: rewritten", window(10_000, 40), TEN_MILLION, AUTO, "rewrite"),
    ("keys in exactly half the files: rewritten", window(10_000, 20), TEN_MILLION, AUTO, "rewrite"),
    ("keys in under half the files, spread: replaced", window(10_000, 19), TEN_MILLION, AUTO, "replace_where"),
    ("a clustered window in 3 files: merged", window(10_000, 3), TEN_MILLION, AUTO, "merge"),
    ("4 files but more than 1 key per 20 rows of them: merged", window(60_000, 4), TEN_MILLION, AUTO, "merge"),
    (
        "too many keys to list, touching every file: rewritten",
        window(200_000, 40, listed=False),
        TEN_MILLION,
        AUTO,
        "rewrite",
    ),
    ("too many keys to list, in 10 files: merged", window(200_000, 10, listed=False), TEN_MILLION, AUTO, "merge"),
    (
        "keys above the model's cap though listed: merged",
        window(20_000, 10),
        TEN_MILLION,
        AUTO | {"replace_where_keys": 10_000},
        "merge",
    ),
    (
        "a target with deletion vectors: replaced, never rewritten",
        window(10_000, 40),
        TEN_MILLION | {"vectors": True},
        AUTO,
        "replace_where",
    ),
    (
        "a target with a change feed: replaced, never rewritten",
        window(10_000, 40),
        TEN_MILLION | {"feed": True},
        AUTO,
        "replace_where",
    ),
    (
        "a target with vectors, a clustered window: merged by copying files",
        window(100, 1),
        TEN_MILLION | {"vectors": True},
        AUTO,
        "merge_copying",
    ),
    (
        "no file estimate (not an integer key), vectors: merged in vectors",
        window(10_000, None),
        TEN_MILLION | {"vectors": True},
        AUTO,
        "merge",
    ),
    (
        "the target's rows not counted: no rewrite",
        window(10_000, 40),
        TEN_MILLION | {"rows": None},
        AUTO,
        "replace_where",
    ),
    ("an empty window: merged", window(0, 0), TEN_MILLION, AUTO, "merge"),
    ("keys not counted: merged", window(None, None, listed=False), TEN_MILLION, AUTO, "merge"),
    (
        "a model that may not replace (cap 0): merged",
        window(10_000, 40),
        TEN_MILLION,
        AUTO | {"replace_where_keys": 0},
        "merge",
    ),
    (
        "merge_write: rewrite, a clustered window: rewritten",
        window(10, 1),
        TEN_MILLION,
        AUTO | {"merge_write": "rewrite"},
        "rewrite",
    ),
    (
        "merge_write: replace_where, a clustered window: replaced",
        window(10, 1),
        TEN_MILLION,
        AUTO | {"merge_write": "replace_where"},
        "replace_where",
    ),
    (
        "merge_write: replace_where, keys not listed: merged",
        window(200_000, 40, listed=False),
        TEN_MILLION,
        AUTO | {"merge_write": "replace_where"},
        "merge",
    ),
    (
        "a small table of one file: rewritten",
        window(10, 1),
        {"rows": 10_000, "vectors": False, "feed": False},
        AUTO,
        "rewrite",
    ),
]


@pytest.mark.parametrize(("case", "window", "target", "settings", "write"), CASES, ids=[case[0] for case in CASES])
def test_the_write_of_a_window(
    case: str, window: dict[str, Any], target: dict[str, Any], settings: dict[str, Any], write: str
) -> None:
    chosen = render("_stream_net_write_choice", window, target, settings)
    assert chosen["write"] == write, case
    assert chosen["write_options"] == {
        "max_rows_per_file": settings["max_rows_per_file"],
        "copy_files": write == "merge_copying",
        "replaces": write == "replace_where",
        "aligned": write == "rewrite" and not (target["rows"] is not None and target["rows"] <= FILE_ROWS),
    }


def test_a_rewrite_reads_each_file_in_one_task_and_a_merge_leaves_the_setting_alone() -> None:
    """The rewrite's commit prices opening a file above any split, so each task reads one file
    and writes its key range back; no other write changes the setting."""
    settings = dict(render("_stream_write_option_settings", {"aligned": True}))
    assert int(settings["spark.sql.files.openCostInBytes"]) >= 1 << 40
    assert dict(render("_stream_write_option_settings", {"replaces": True}))["spark.sql.files.openCostInBytes"] is None

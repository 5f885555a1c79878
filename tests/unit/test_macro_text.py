"""The macros' text: every line a reader can take in at once, and comments that say why rather
than what a benchmark measured. A figure belongs in bench/README.md, rendered from its results,
so that a rerun changes one place; a comment cites the section that holds it."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

MACROS = Path(__file__).resolve().parents[2] / "macros"
LONGEST_LINE = 120

# A measured figure: a number followed by a unit of time (2 s, 47.1 seconds, 98 ms, 3 minutes), a
# ratio (2.3x, or with the times sign) or a percentage (20%). A number in quotes is a value a config
# takes ('30 minutes'), and a number without a unit is a count or a rule of the code (at most
# 10,000 keys, 8 files or more).
FIGURE = re.compile(
    r"(?<![\w.'\"`])\d+(?:[.,]\d+)*\s*"
    r"(?:(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b|[x\u00d7](?!\w)|%)",
    re.IGNORECASE,
)


def long_lines(root: Path) -> list[str]:
    """Each line of the .sql files under `root` longer than LONGEST_LINE, as file:line (length)."""
    return [
        f"{path.relative_to(root)}:{number} ({len(line)} characters)"
        for path in sorted(root.rglob("*.sql"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if len(line) > LONGEST_LINE
    ]


def comment_lines(text: str) -> list[tuple[int, str]]:
    """The lines of the Jinja comments of a template, with their line numbers, as Jinja's own
    lexer finds them (a `{#` inside a string or a tag starts none)."""
    found: list[tuple[int, str]] = []
    for lineno, token, value in jinja2.Environment().lexer.tokeniter(text, None):
        if token == "comment":
            found.extend((lineno + offset, line) for offset, line in enumerate(value.split("\n")))
    return found


def figures_in_comments(root: Path) -> list[str]:
    """Each comment line of the .sql files under `root` that holds a figure, as file:line: text."""
    return [
        f"{path.relative_to(root)}:{number}: {line.strip(' -')}"
        for path in sorted(root.rglob("*.sql"))
        for number, line in comment_lines(path.read_text())
        if FIGURE.search(line)
    ]


def test_every_macro_line_is_at_most_120_characters() -> None:
    assert list(MACROS.rglob("*.sql")), "no macros found"
    assert long_lines(MACROS) == []


def test_no_macro_comment_holds_a_measured_figure() -> None:
    assert comment_lines((MACROS / "delta" / "aggregate.sql").read_text()), "no comments found"
    assert figures_in_comments(MACROS) == []


def test_the_checks_find_a_long_line_and_a_figure(tmp_path: Path) -> None:
    (tmp_path / "m.sql").write_text(
        '{#-- Why: Delta checks each row (bench/README.md, "A replaceWhere\'s key list"), at most\n'
        "     10,000 keys; max_age takes '30 minutes'. A 2M-row target took 47 s, 2.3x, 20% off. --#}\n"
        "{% macro m() %}{{ return('" + "x" * 100 + " took 5 s') }}{% endmacro %}\n"
        "{# 98 ms #}\n"
    )
    assert long_lines(tmp_path) == ["m.sql:3 (154 characters)"]
    assert figures_in_comments(tmp_path) == [
        "m.sql:2: 10,000 keys; max_age takes '30 minutes'. A 2M-row target took 47 s, 2.3x, 20% off.",
        "m.sql:4: 98 ms",
    ]
    assert [match.group(0) for match in FIGURE.finditer(figures_in_comments(tmp_path)[0])] == ["47 s", "2.3x", "20%"]

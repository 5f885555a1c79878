"""The macros reached only through names built at run time: a commit protocol's steps
(`_protocol_step`: `_<protocol>_<step>`) and a setting kind's checks (`_accepted_<kind>`,
`_checked_<kind>`). Each family is listed in one table (`_protocol_steps` and `_commit_protocols`
in macros/protocols/commit_protocol.sql, `_setting_kinds` in settings_kinds.sql), so a reader finds
every such macro by grep; this holds the tables to the macros that exist, both ways."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dbt_tablestream._macros import render

MACROS = Path(__file__).resolve().parents[2] / "macros"


def defined_macros() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in MACROS.rglob("*.sql"):
        for name in re.findall(r"{%-?\s*macro\s+(\w+)\(", path.read_text()):
            found[name] = path
    return found


def listed(path: Path, table: str) -> list[str]:
    """The list a table macro returns, read from its source (commit_protocol.sql reads project vars
    and the target, so it is not among the files the pure renderer loads)."""
    body = re.search(rf"macro {table}\(\)\s*%}}\s*{{{{\s*return\((\[.*?\])\)", path.read_text(), re.S)
    assert body, f"no table {table} in {path}"
    names = ast.literal_eval(body.group(1))
    assert isinstance(names, list)
    return [str(name) for name in names]


def test_every_protocol_defines_every_step_and_no_other() -> None:
    macros = defined_macros()
    protocols = listed(MACROS / "protocols" / "commit_protocol.sql", "_commit_protocols")
    steps = listed(MACROS / "protocols" / "commit_protocol.sql", "_protocol_steps")
    assert len(set(steps)) == len(steps)
    for protocol in protocols:
        named = {name[len(protocol) + 2 :] for name in macros if name.startswith(f"_{protocol}_")}
        assert sorted(named) == sorted(steps), protocol
        assert {macros[f"_{protocol}_{step}"].name for step in steps} == {f"{protocol}.sql"}
    # Every step a caller asks for is in the table: a name a reader could not find otherwise.
    asked = set()
    for path in MACROS.rglob("*.sql"):
        asked |= set(re.findall(r"_protocol_step\('(\w+)'", path.read_text()))
    assert asked and sorted(asked - set(steps)) == []


def test_every_setting_kind_has_its_two_checks_and_the_spec_uses_only_listed_kinds() -> None:
    macros = defined_macros()
    kinds = render("_setting_kinds")
    for prefix in ("_accepted_", "_checked_"):
        named = {name[len(prefix) :] for name in macros if name.startswith(prefix)}
        assert sorted(named) == sorted(kinds), prefix
    spec = render("_stream_config_spec")
    used = {entry["kind"] for entry in spec.values()} | {
        entry["pyspark"]["kind"] for entry in spec.values() if "pyspark" in entry
    }
    assert sorted(used - set(kinds)) == []


def test_a_kind_outside_the_table_is_refused_by_name() -> None:
    with pytest.raises(Exception, match="no setting kind 'colour'; the kinds are choice, "):
        render("_stream_config_accepted", {"kind": "colour"})

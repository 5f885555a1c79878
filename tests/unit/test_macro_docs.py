"""Every macro and materialization of the dbt package is documented in a yml beside it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

MACROS = Path(__file__).resolve().parents[2] / "macros"
DISPATCH_IMPLEMENTATION = re.compile(r"^(default|spark|databricks|tablestream)__")


def test_every_public_macro_is_documented() -> None:
    defined: set[str] = set()
    for path in MACROS.rglob("*.sql"):
        text = path.read_text()
        defined |= set(re.findall(r"{%-?\s*macro\s+(\w+)", text))
        defined |= {
            f"materialization_{name}_default" for name in re.findall(r"{%-?\s*materialization\s+(\w+),\s*default", text)
        }
        defined |= {f"test_{name}" for name in re.findall(r"{%-?\s*test\s+(\w+)", text)}
    documented: dict[str, str] = {}
    for path in MACROS.rglob("*.yml"):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            documented[entry["name"]] = entry.get("description", "")
    public = {name for name in defined if not DISPATCH_IMPLEMENTATION.match(name)}
    assert public, "no macros found"
    assert sorted(public - set(documented)) == []
    assert sorted(set(documented) - defined) == []
    assert all(documented[name].strip() for name in public)
    # dbt renders descriptions as Jinja: a code example must sit inside {% raw %}.
    unescaped = [
        name for name, text in documented.items() if "{{" in re.sub(r"{% raw %}.*?{% endraw %}", "", text, flags=re.S)
    ]
    assert unescaped == []


def test_every_engine_piece_dispatches_and_nothing_calls_an_implementation() -> None:
    """docs/architecture.md, "Dispatch": each spark__X has a public X that dispatches to it, and
    nothing (macros, the Python package, the tests) calls spark__X by name."""
    sources = "".join(path.read_text() for path in MACROS.rglob("*.sql"))
    implemented = set(re.findall(r"{%-?\s*macro\s+spark__(\w+)\(", sources))
    dispatched = set(re.findall(r"adapter\.dispatch\('(\w+)', 'dbt_tablestream'\)", sources))
    assert implemented, "no spark__ macros found"
    assert sorted(implemented - dispatched) == []
    root = MACROS.parent
    callers = [*MACROS.rglob("*.sql"), *(root / "dbt_tablestream").rglob("*.py"), *(root / "tests").rglob("*.py")]
    direct = [
        f"{path.relative_to(root)}: {call}"
        for path in callers
        for call in re.findall(r"""(?:dbt_tablestream\.|["'])spark__\w+""", path.read_text())
    ]
    assert direct == []


def test_every_macro_argument_has_only_dbt_s_keys() -> None:
    """dbt refuses a macro argument with other keys than name, type and description; YAML reads a
    comma in an unquoted flow-mapping description as a new key, which only `dbt parse` would catch."""
    extra = [
        (path.name, entry["name"], sorted(set(argument) - {"name", "type", "description"}))
        for path in MACROS.rglob("*.yml")
        for entry in yaml.safe_load(path.read_text()).get("macros", [])
        for argument in entry.get("arguments") or []
        if set(argument) - {"name", "type", "description"}
    ]
    assert extra == []

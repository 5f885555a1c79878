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

"""The dbt package's own macros, rendered from Python.

The PySpark stream API builds its SQL with these, so a rule of the stream protocol (the column
contract, the window check, the marker, the offsets row) stays written once, in the package's
macros (docs/architecture.md). Only pure macros are called here, by their public (dispatched)
names: SQL builders and checks that are handed what they read. Their dbt context is small:
`return`, `adapter.dispatch`, `tojson` / `fromjson`, `exceptions`, `modules`,
`invocation_id` and the package's own namespace.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from dbt_tablestream.exceptions import StreamError

# Shipped inside the wheel as data (pyproject.toml); a source checkout reads the package's own folder.
_INSTALLED = Path(__file__).with_name("_dbt_macros")
_CHECKOUT = Path(__file__).resolve().parents[1] / "macros"
MACRO_FILES = (
    "streams/stream_value.sql",
    "streams/stream_inputs.sql",
    "streams/stream_position.sql",
    "streams/change_rows.sql",
    "streams/window_checks.sql",
    "streams/source_history.sql",
    "streams/window_relation.sql",
    "streams/remedies.sql",
    "delta/quoting.sql",
    "offsets/offsets_log.sql",
    "offsets/append_offsets_row.sql",
    "offsets/target_marker.sql",
    "delta/commit.sql",
    "delta/commit_proof.sql",
    "delta/compaction.sql",
    "delta/describe.sql",
    "delta/source_state.sql",
    "delta/changelog.sql",
    "operations/pending_streams.sql",
    "operations/stream_documents.sql",
    "materializations/settings_spec.sql",
    "materializations/settings_kinds.sql",
    "materializations/validate.sql",
    "materializations/stream_write_choice.sql",
    "streams/view_shape.sql",
    "streams/view_reads.sql",
)


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise _Return(value)


def _raise_compiler_error(message: str) -> None:
    raise StreamError(message)


class _Adapter:
    """The part of dbt's `adapter` the pure macros use: dispatch to the Spark implementation
    (`spark__<name>`), which is what dbt picks on every engine the package runs on. They quote
    names with the package's own `_sql_identifier`, not `adapter.quote`."""

    def __init__(self, invocation_id: str) -> None:
        self.invocation_id = invocation_id

    def dispatch(self, name: str, namespace: str = "dbt_tablestream") -> Callable[..., Any]:
        return macro(f"spark__{name}", self.invocation_id)


def macros_folder() -> Path:
    return _INSTALLED if _INSTALLED.is_dir() else _CHECKOUT


@cache
def _environment() -> Any:
    import jinja2

    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    environment.globals.update(
        {
            "return": _return,
            "tojson": json.dumps,
            "fromjson": json.loads,
            "exceptions": type("Exceptions", (), {"raise_compiler_error": staticmethod(_raise_compiler_error)}),
            "modules": type("Modules", (), {"re": re, "datetime": datetime}),
        }
    )
    return environment


@lru_cache(maxsize=8)
def _modules(invocation_id: str) -> tuple[dict[str, Any], ...]:
    """The macros of each file, by name, for one run (its invocation id is fixed when they load).
    A file's top-level names are read from its render context rather than its exported module,
    which leaves out the `_`-prefixed private macros other macros call."""
    environment = _environment()
    context = {
        "invocation_id": invocation_id,
        "dbt_tablestream": _Namespace(invocation_id),
        "adapter": _Adapter(invocation_id),
    }
    modules = []
    for name in MACRO_FILES:
        template = environment.from_string((macros_folder() / name).read_text())
        file_context = template.new_context(context)
        for _ in template.root_render_func(file_context):
            pass
        modules.append(dict(file_context.vars))
    return tuple(modules)


class _Namespace:
    """`dbt_tablestream.<macro>` inside a macro: another package macro, called as dbt calls it."""

    def __init__(self, invocation_id: str) -> None:
        self.invocation_id = invocation_id

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return macro(name, self.invocation_id)


def macro(name: str, invocation_id: str = "") -> Callable[..., Any]:
    """The package macro ``name`` as a function returning what the macro returns (or renders)."""
    for module in _modules(invocation_id):
        found = module.get(name)
        if found is not None:
            break
    else:
        raise KeyError(f"no macro {name} in {', '.join(MACRO_FILES)}")

    def call(*args: Any) -> Any:
        try:
            rendered = found(*args)
        except _Return as returned:
            return returned.value
        return str(rendered)

    return call


def render(name: str, *args: Any, invocation_id: str = "") -> Any:
    """What the package macro ``name`` returns for ``args``; ``invocation_id`` names the caller's run
    (the offsets row and the marker record it)."""
    return macro(name, invocation_id)(*args)

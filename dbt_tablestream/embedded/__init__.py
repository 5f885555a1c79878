"""The embedded engine: a local PySpark session whose Delta tables are stored by delta-rs.

Nothing starts at import; :func:`get_engine` starts Spark on first use. The public names are
loaded on first access, so tools that only read Delta logs (the ``tablestream`` command) do not
import pyspark.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbt_tablestream.embedded._delta import CommitMarker, MergeSpec, merge_table, write_table
    from dbt_tablestream.embedded._engine import Engine, StatementResult, get_engine

_PUBLIC = {
    "CommitMarker": "_delta",
    "MergeSpec": "_delta",
    "merge_table": "_delta",
    "write_table": "_delta",
    "Engine": "_engine",
    "StatementResult": "_engine",
    "get_engine": "_engine",
}

__all__ = ["CommitMarker", "Engine", "MergeSpec", "StatementResult", "get_engine", "merge_table", "write_table"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_PUBLIC[name]}"), name)

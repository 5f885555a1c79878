"""Where relations live under a warehouse directory (see _catalog for the whole layout)."""

from __future__ import annotations

import os
from pathlib import Path

SCHEMA_SUFFIX = ".db"
VIEW_SUFFIX = ".view.sql"


def case_insensitive_child(parent: Path, name: str) -> Path:
    """``parent / name``, or the existing entry whose name equals ``name`` ignoring case.

    Spark folds identifiers to lower case; a table written by another tool may not be.
    """
    exact = parent / name
    if exact.exists() or not parent.is_dir():
        return exact
    for entry in os.scandir(parent):
        if entry.name.lower() == name:
            return Path(entry.path)
    return exact


def schema_dir(warehouse: Path, schema: str) -> Path:
    return case_insensitive_child(warehouse, f"{schema.lower()}{SCHEMA_SUFFIX}")


def table_dir(warehouse: Path, schema: str, name: str) -> Path:
    return case_insensitive_child(schema_dir(warehouse, schema), name.lower())

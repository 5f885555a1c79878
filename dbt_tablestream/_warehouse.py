"""The local profile's warehouse folder: where it is, and where it keeps a managed table."""

from __future__ import annotations

import os
from pathlib import Path

# The `warehouse` of a `type: tablestream` profile when it sets none.
DEFAULT_WAREHOUSE = "./warehouse"


def warehouse_path(warehouse: str | os.PathLike[str] | None, project_root: str | os.PathLike[str] | None) -> Path:
    """The profile's `warehouse`, absolute: a relative one is under the dbt project, where dbt runs
    from, so the CLI, the adapter and the writer find the same folder from any working directory."""
    path = Path(warehouse if warehouse is not None else DEFAULT_WAREHOUSE).expanduser()
    if not path.is_absolute() and project_root is not None:
        path = Path(project_root) / path
    return path.resolve()


def table_dir(warehouse: Path, schema: str, table: str) -> Path:
    """``<warehouse>/<schema>.db/<table>``, where Spark's catalog keeps a managed table of the
    local profile. Spark folds identifiers to lower case; a folder another tool wrote may not be,
    so an existing folder whose name differs only in case is taken."""
    schema_dir = _child_ignoring_case(warehouse, f"{schema.lower()}.db")
    return _child_ignoring_case(schema_dir, table.lower())


def _child_ignoring_case(parent: Path, name: str) -> Path:
    exact = parent / name
    if exact.exists() or not parent.is_dir():
        return exact
    for entry in os.scandir(parent):
        if entry.name.lower() == name:
            return Path(entry.path)
    return exact

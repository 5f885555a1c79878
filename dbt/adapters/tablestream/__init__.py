"""dbt's entry point for `type: tablestream`: a thin plugin over dbt-spark's session method."""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from typing import Any

# The light install (`pip install dbt-tablestream`) leaves the local profile's engine out. dbt
# imports every installed plugin's `__version__` for `dbt --version` and catches only ImportError,
# so this module imports without the engine and builds the plugin when dbt first asks for it,
# which dbt does only for a `type: tablestream` profile: only then is a missing engine an error.
_ENGINE_MODULES = ("pyspark", "delta", "dbt.adapters.spark")

_EXPORTS = {
    "TablestreamAdapter": "dbt.adapters.tablestream.impl",
    "TablestreamConnectionManager": "dbt.adapters.tablestream.connections",
    "TablestreamCredentials": "dbt.adapters.tablestream.connections",
}


def _require_engine() -> None:
    missing = [name for name in _ENGINE_MODULES if find_spec(name) is None]
    if missing:
        from dbt_common.exceptions import DbtRuntimeError

        raise DbtRuntimeError(
            "The local profile (type: tablestream) runs Spark in the dbt process and needs the `local` extra: "
            f"pip install 'dbt-tablestream[local]' (missing: {', '.join(missing)}). "
            "On a cluster or Databricks, use its own profile type (spark, databricks) instead."
        )


def _build_plugin() -> Any:
    from dbt.adapters.base.plugin import AdapterPlugin

    from dbt.include import tablestream

    return AdapterPlugin(
        adapter=__getattr__("TablestreamAdapter"),
        credentials=__getattr__("TablestreamCredentials"),
        include_path=tablestream.PACKAGE_PATH,
        dependencies=["spark"],
        # The default, dbt_<dir>, would be dbt_tablestream: the name of the dbt package users install.
        project_name="dbt_tablestream_adapter",
    )


def __getattr__(name: str) -> Any:
    if name != "Plugin" and name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _require_engine()
    value = _build_plugin() if name == "Plugin" else getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


__all__ = ["Plugin", "TablestreamAdapter", "TablestreamConnectionManager", "TablestreamCredentials"]

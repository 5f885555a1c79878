"""dbt's entry point for `type: tablestream`: a thin plugin over dbt-spark's session method."""

from importlib.util import find_spec

from dbt_common.exceptions import DbtRuntimeError

# The light install (`pip install dbt-tablestream`) leaves the local profile's engine out; say how
# to add it instead of failing deep inside dbt-spark's session module.
_MISSING = [name for name in ("pyspark", "delta", "dbt.adapters.spark") if find_spec(name) is None]
if _MISSING:
    raise DbtRuntimeError(
        "The local profile (type: tablestream) runs Spark in the dbt process and needs the `local` extra: "
        f"pip install 'dbt-tablestream[local]' (missing: {', '.join(_MISSING)}). "
        "On a cluster or Databricks, use its own profile type (spark, databricks) instead."
    )

from dbt.adapters.base import AdapterPlugin  # noqa: E402

from dbt.adapters.tablestream.connections import TablestreamConnectionManager, TablestreamCredentials  # noqa: E402
from dbt.adapters.tablestream.impl import TablestreamAdapter  # noqa: E402
from dbt.include import tablestream  # noqa: E402

Plugin = AdapterPlugin(
    adapter=TablestreamAdapter,  # type: ignore[arg-type]
    credentials=TablestreamCredentials,
    include_path=tablestream.PACKAGE_PATH,
    dependencies=["spark"],
    # The default, dbt_<dir>, would be dbt_tablestream: the name of the dbt package users install.
    project_name="dbt_tablestream_adapter",
)

__all__ = ["Plugin", "TablestreamAdapter", "TablestreamConnectionManager", "TablestreamCredentials"]

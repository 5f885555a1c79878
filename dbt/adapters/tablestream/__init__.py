"""dbt's entry point for `type: tablestream`: a thin plugin over dbt-spark's session method."""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.tablestream.connections import TablestreamConnectionManager, TablestreamCredentials
from dbt.adapters.tablestream.impl import TablestreamAdapter
from dbt.include import tablestream

Plugin = AdapterPlugin(
    adapter=TablestreamAdapter,  # type: ignore[arg-type]
    credentials=TablestreamCredentials,
    include_path=tablestream.PACKAGE_PATH,
    dependencies=["spark"],
    # The default, dbt_<dir>, would be dbt_tablestream: the name of the dbt package users install.
    project_name="dbt_tablestream_adapter",
)

__all__ = ["Plugin", "TablestreamAdapter", "TablestreamConnectionManager", "TablestreamCredentials"]

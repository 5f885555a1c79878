"""dbt's entry point for `type: tablestream`; the implementation lives in dbt_tablestream.embedded."""

from dbt.adapters.base import AdapterPlugin

from dbt.include import tablestream
from dbt_tablestream.embedded._adapter import (
    TablestreamAdapter,
    TablestreamConnectionManager,
    TablestreamCredentials,
)

Plugin = AdapterPlugin(
    adapter=TablestreamAdapter,  # type: ignore[arg-type]
    credentials=TablestreamCredentials,
    include_path=tablestream.PACKAGE_PATH,
    dependencies=["spark"],
    # The default, dbt_<dir>, would be dbt_tablestream: the name of the dbt package users install.
    project_name="dbt_tablestream_adapter",
)

__all__ = ["Plugin", "TablestreamAdapter", "TablestreamConnectionManager", "TablestreamCredentials"]

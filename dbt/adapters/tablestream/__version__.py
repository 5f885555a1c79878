# dbt lists the plugin with this version; it is the package's, written once in dbt_tablestream/__init__.py.
from dbt_tablestream import __version__ as version

__all__ = ["version"]

"""The embedded engine: a local PySpark session whose Delta tables are stored by delta-rs.

Nothing starts at import; :func:`get_engine` starts Spark on first use.
"""

from __future__ import annotations

from dbt_tablestream.embedded._delta import CommitMarker, MergeSpec, merge_table, write_table
from dbt_tablestream.embedded._engine import Engine, StatementResult, get_engine

__all__ = ["CommitMarker", "Engine", "MergeSpec", "StatementResult", "get_engine", "merge_table", "write_table"]

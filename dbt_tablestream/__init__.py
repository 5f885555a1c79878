"""Table streams for Spark lakehouse tables: a dbt package and its embedded Delta engine.

Importing this package has no side effects: no Spark session starts and nothing is written
until an engine is asked for explicitly.
"""

from __future__ import annotations

from dbt_tablestream.exceptions import (
    ChangeFeedError,
    DirectiveError,
    EngineStartError,
    IngestError,
    ProfileError,
    StreamError,
    TablestreamError,
)

__version__ = "0.1.0"

__all__ = [
    "ChangeFeedError",
    "DirectiveError",
    "EngineStartError",
    "IngestError",
    "ProfileError",
    "StreamError",
    "TablestreamError",
    "__version__",
]

"""Table streams for Spark lakehouse tables: the Python tools around the dbt package.

Importing this package has no side effects: no Spark session starts and nothing is written
until a tool is asked to.
"""

from __future__ import annotations

from dbt_tablestream.exceptions import (
    EngineStartError,
    IngestError,
    NoSuchStreamError,
    PendingUnknownError,
    ProfileError,
    StreamError,
    TablestreamError,
)

__version__ = "0.1.0"

__all__ = [
    "EngineStartError",
    "IngestError",
    "NoSuchStreamError",
    "PendingUnknownError",
    "ProfileError",
    "StreamError",
    "TablestreamError",
    "__version__",
]

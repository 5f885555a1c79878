"""The package's errors. Every error raised on purpose derives from :class:`TablestreamError`."""

from __future__ import annotations


class TablestreamError(Exception):
    """Root of every error dbt_tablestream raises on purpose."""


class EngineStartError(TablestreamError):
    """The local Spark session cannot start (Java missing or too old, unusable warehouse, no jars)."""


class ProfileError(TablestreamError):
    """A dbt project or profile the `tablestream` command was pointed at cannot be used."""


class StreamError(TablestreamError):
    """A stream cannot be read or applied as configured (stale, source recreated, feed off, bad config)."""


class IngestError(TablestreamError):
    """A realtime writer refused a row, a setting or a table, or a flush could not commit."""


class PendingUnknownError(ProfileError):
    """`tablestream pending` cannot tell which stream models are pending (the project's manifest is
    missing, so models that never ran are unknown); the command exits 3, not "nothing pending"."""


class NoSuchStreamError(TablestreamError):
    """A name is neither a stream nor a stream model in the offsets logs looked in; the
    `tablestream` command exits 1 ("no such stream"), not 2."""

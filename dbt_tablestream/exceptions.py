"""The package's errors. Every error raised on purpose derives from :class:`TablestreamError`."""

from __future__ import annotations


class TablestreamError(Exception):
    """Root of every error dbt_tablestream raises on purpose."""


class EngineStartError(TablestreamError):
    """The embedded engine cannot start (Java missing or too old, unusable warehouse)."""


class ProfileError(TablestreamError):
    """A `type: tablestream` profile has an unknown key or an invalid value."""


class ChangeFeedError(TablestreamError):
    """A change feed read cannot be served as asked (feed disabled, range out of bounds)."""


class DirectiveError(TablestreamError):
    """An engine directive embedded in SQL is malformed."""


class StreamError(TablestreamError):
    """A stream cannot be read or applied as configured (stale, source recreated, feed off, bad config)."""


class IngestError(TablestreamError):
    """A realtime writer refused a row, a setting or a table, or a flush could not commit."""

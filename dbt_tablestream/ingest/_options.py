"""The realtime writer's settings, named as in the ClickZetta ingestion SDK (seed 001)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from dbt_tablestream.exceptions import IngestError


class RealtimeOperation(enum.Enum):
    """What a realtime stream writes: appended rows, or keyed changes (upserts and deletes)."""

    APPEND_ONLY = "APPEND_ONLY"
    CDC = "CDC"


class RowOperator(enum.Enum):
    """The kind of a row: INSERT for APPEND_ONLY streams; UPSERT and DELETE_IGNORE for CDC streams."""

    INSERT = "INSERT"
    UPSERT = "UPSERT"
    DELETE_IGNORE = "DELETE_IGNORE"


class FlushMode(enum.Enum):
    AUTO_FLUSH_SYNC = "AUTO_FLUSH_SYNC"
    AUTO_FLUSH_BACKGROUND = "AUTO_FLUSH_BACKGROUND"
    MANUAL_FLUSH = "MANUAL_FLUSH"


class RetryStatus(enum.Enum):
    """Failures a commit may be retried on.

    FAILED is a Delta commit conflict (a concurrent writer changed what this commit read);
    INTERNAL_ERROR an I/O error. THROTTLED and PRECHECK_FAILED come from the SDK's ingestion
    service and never occur against a Delta table, but are accepted so the SDK's settings carry over.
    """

    THROTTLED = "THROTTLED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    FAILED = "FAILED"
    PRECHECK_FAILED = "PRECHECK_FAILED"


@dataclass(frozen=True)
class RealtimeOptions:
    """Settings of one realtime stream; build them with :class:`RealtimeOptionsBuilder`."""

    flush_mode: FlushMode = FlushMode.AUTO_FLUSH_BACKGROUND
    mutation_buffer_lines_num: int = 1000
    mutation_buffer_space: int = 10 * 1024 * 1024
    mutation_buffer_max_num: int = 50
    flush_interval_ms: int = 10 * 1000
    request_failed_retry_enable: bool = True
    request_failed_retry_times: int = 5
    request_failed_retry_internal_ms: int = 5 * 1000
    request_failed_retry_log_debug_enable: bool = True
    request_failed_retry_status: frozenset[RetryStatus] = field(
        default_factory=lambda: frozenset(RetryStatus)  # every status, as the SDK's default
    )

    def __post_init__(self) -> None:
        positive = {
            "with_mutation_buffer_lines_num": self.mutation_buffer_lines_num,
            "with_mutation_buffer_space": self.mutation_buffer_space,
            "with_mutation_buffer_max_num": self.mutation_buffer_max_num,
            "with_flush_interval": self.flush_interval_ms,
        }
        for name, value in positive.items():
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise IngestError(f"RealtimeOptionsBuilder.{name} takes a positive integer, got {value!r}.")
        if self.request_failed_retry_times < 0 or self.request_failed_retry_internal_ms < 0:
            raise IngestError("Retry times and the retry interval cannot be negative.")
        if not isinstance(self.flush_mode, FlushMode):
            accepted = ", ".join(f"FlushMode.{mode.name}" for mode in FlushMode)
            raise IngestError(f"with_flush_mode takes one of {accepted}; got {self.flush_mode!r}.")


class RealtimeOptionsBuilder:
    """Fluent builder of :class:`RealtimeOptions`; every setter returns the builder."""

    def __init__(self) -> None:
        self._options = RealtimeOptions()

    def _with(self, **changes: object) -> RealtimeOptionsBuilder:
        self._options = replace(self._options, **changes)  # type: ignore[arg-type]
        return self

    def with_flush_mode(self, mode: FlushMode) -> RealtimeOptionsBuilder:
        return self._with(flush_mode=mode)

    def with_mutation_buffer_lines_num(self, rows: int) -> RealtimeOptionsBuilder:
        """Seal a buffer once it holds this many rows."""
        return self._with(mutation_buffer_lines_num=rows)

    def with_mutation_buffer_space(self, size_bytes: int) -> RealtimeOptionsBuilder:
        """Seal a buffer once its rows take about this many bytes."""
        return self._with(mutation_buffer_space=size_bytes)

    def with_mutation_buffer_max_num(self, buffers: int) -> RealtimeOptionsBuilder:
        """Sealed buffers that may wait for their commit before apply() blocks (background) or fails (manual)."""
        return self._with(mutation_buffer_max_num=buffers)

    def with_flush_interval(self, milliseconds: int) -> RealtimeOptionsBuilder:
        """Commit a buffer that has waited this long even when it is not full."""
        return self._with(flush_interval_ms=milliseconds)

    def with_request_failed_retry_enable(self, enabled: bool) -> RealtimeOptionsBuilder:
        return self._with(request_failed_retry_enable=bool(enabled))

    def with_request_failed_retry_times(self, times: int) -> RealtimeOptionsBuilder:
        return self._with(request_failed_retry_times=times)

    def with_request_failed_retry_internal_ms(self, milliseconds: int) -> RealtimeOptionsBuilder:
        """The first retry's delay; each further retry doubles it (backoff)."""
        return self._with(request_failed_retry_internal_ms=milliseconds)

    def with_request_failed_retry_log_debug_enable(self, enabled: bool) -> RealtimeOptionsBuilder:
        return self._with(request_failed_retry_log_debug_enable=bool(enabled))

    def with_request_failed_retry_status(self, statuses: Iterable[RetryStatus]) -> RealtimeOptionsBuilder:
        return self._with(request_failed_retry_status=frozenset(statuses))

    def build(self) -> RealtimeOptions:
        return self._options

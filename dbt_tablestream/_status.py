"""A stream's status: position, lag and health, as `tablestream status` and `show_streams` print it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class StreamStatus:
    stream: str
    source: str
    mode: str
    epoch: int
    offset_version: int | None
    offset_time: datetime | None
    source_version: int | None
    source_time: datetime | None
    # None when not checked: the Delta logs alone do not say whether the next window can be read.
    stale: bool | None
    problem: str | None
    target: str
    last_run: datetime | None
    rows_written: int | None
    # When the oldest change the stream has not consumed may be lost to log cleanup or VACUUM.
    at_risk_from: datetime | None = None

    @property
    def lag_versions(self) -> int | None:
        if self.offset_version is None or self.source_version is None:
            return None
        return max(self.source_version - self.offset_version, 0)

    @property
    def lag(self) -> timedelta | None:
        if self.lag_versions == 0:
            return timedelta(0)
        if self.offset_time is None or self.source_time is None:
            return None
        return self.source_time - self.offset_time

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, datetime):
                data[key] = value.isoformat()
        data["lag_versions"] = self.lag_versions
        data["lag_seconds"] = self.lag.total_seconds() if self.lag is not None else None
        return data


COLUMNS = (
    "stream",
    "source",
    "mode",
    "offset",
    "offset time",
    "source at",
    "lag",
    "lag time",
    "stale",
    "target",
    "last run",
    "rows",
)


def duration(value: timedelta | None) -> str:
    if value is None:
        return "-"
    seconds = int(value.total_seconds())
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {seconds:02d}s"
    return f"{seconds}s"


def moment(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def text(value: object) -> str:
    return "-" if value is None else str(value)


def status_row(status: StreamStatus) -> tuple[str, ...]:
    return (
        status.stream,
        status.source,
        status.mode,
        text(status.offset_version),
        moment(status.offset_time),
        text(status.source_version),
        text(status.lag_versions),
        duration(status.lag),
        "-" if status.stale is None else ("STALE" if status.stale else "no"),
        status.target,
        moment(status.last_run),
        text(status.rows_written),
    )


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=False)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def status_table(statuses: list[StreamStatus]) -> str:
    """The human form: one line per stream, then each stale stream's problem and remedy."""
    if not statuses:
        return "No streams yet: a stream appears here after its model's first successful run."
    lines = [table(COLUMNS, [status_row(status) for status in statuses])]
    for status in statuses:
        if status.problem:
            lines.append(f"\n{status.stream}: {status.problem}")
    return "\n".join(lines)


def statuses_json(statuses: list[StreamStatus]) -> str:
    return json.dumps([status.as_json() for status in statuses], indent=2)

"""`tablestream status` and `history` as text: the documents of the package's
`_stream_status_document` and `_stream_history_entry` macros (docs/architecture.md), as tables."""

from __future__ import annotations

from datetime import timedelta

from dbt_tablestream._documents import HistoryEntry, StreamStatus

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
HISTORY_COLUMNS = ("epoch", "mode", "from", "to", "rows", "committed at", "invocation")


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


def moment(value: str | None) -> str:
    """A document's time to the second."""
    return value[:19] if value is not None else "-"


def text(value: object) -> str:
    return "-" if value is None else str(value)


def status_row(status: StreamStatus) -> tuple[str, ...]:
    lag = status["lag_seconds"]
    stale = status["stale"]
    return (
        status["stream_name"],
        status["source"],
        text(status["stream_mode"]),
        text(status["to_version"]),
        moment(status["offset_time"]),
        text(status["source_version"]),
        text(status["lag_versions"]),
        duration(timedelta(seconds=lag) if lag is not None else None),
        "-" if stale is None else (str(status["refusal"] or "stale").upper() if stale else "no"),
        status["target"],
        moment(status["committed_at"]),
        text(status["rows_written"]),
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
    """The human form: one line per stream, then each stream's problem and remedy."""
    if not statuses:
        return "No streams yet: a stream appears here after its model's first successful run."
    lines = [table(COLUMNS, [status_row(status) for status in statuses])]
    for status in statuses:
        if status["problem"]:
            lines.append(f"\n{status['stream_name']}: {status['problem']}")
    return "\n".join(lines)


def history_table(rows: list[HistoryEntry]) -> str:
    """History entries as a text table; with a stream column when they are of several streams
    (a model reading several sources)."""
    several = len({row["stream_name"] for row in rows}) > 1
    body = [
        (
            *((text(row["stream_name"]),) if several else ()),
            *(
                text(row[key])
                for key in (
                    "epoch",
                    "mode",
                    "from_version",
                    "to_version",
                    "rows_written",
                    "committed_at",
                    "invocation_id",
                )
            ),
        )
        for row in rows
    ]
    return table((*(("stream",) if several else ()), *HISTORY_COLUMNS), body)

"""A stream's view of a Delta table's log: source state, window checks, target markers.

Plain Python over the ``_delta_log`` JSON and delta-rs: no Spark, so the ``tablestream`` command
can answer from it without starting one. A stream is refused here *before* any read, with a
message that names the stream, the source and the remedy (DESIGN.md sections 6 and 7).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from dbt_tablestream.exceptions import StreamError

CHANGE_FEED_PROPERTY = "delta.enableChangeDataFeed"
RECENT_HISTORY = 50


@dataclass(frozen=True)
class SourceState:
    latest_version: int
    table_id: str
    latest_timestamp: datetime
    change_feed_enabled: bool
    earliest_change_version: int | None
    version_at_timestamp: int | None


def _log_file(path: Path, version: int) -> Path:
    return path / "_delta_log" / f"{version:020d}.json"


def read_commit(path: Path, version: int) -> list[dict[str, Any]] | None:
    """The actions of one commit, or None when the log entry is gone (log cleanup)."""
    try:
        text = _log_file(path, version).read_text()
    except FileNotFoundError:
        return None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _feed_setting(actions: list[dict[str, Any]]) -> bool | None:
    for action in actions:
        if "metaData" in action:
            configuration = action["metaData"].get("configuration") or {}
            return str(configuration.get(CHANGE_FEED_PROPERTY, "false")).lower() == "true"
    return None


def _changes_data(actions: list[dict[str, Any]]) -> bool:
    for action in actions:
        if "cdc" in action:
            return True
        for kind in ("add", "remove"):
            if kind in action and action[kind].get("dataChange", True):
                return True
    return False


def _files_needed(actions: list[dict[str, Any]]) -> list[str]:
    """Files the change feed of this commit is read from: its cdc files, else its data files."""
    cdc = [action["cdc"]["path"] for action in actions if "cdc" in action]
    if cdc:
        return cdc
    return [
        action[kind]["path"]
        for action in actions
        for kind in ("add", "remove")
        if kind in action and action[kind].get("dataChange", True)
    ]


def _open(path: str, source: str, stream: str, version: int | None = None) -> Any:
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        raise StreamError(
            f"Stream {stream}: the source {source} does not exist (no Delta table at {path}). "
            "Create it, or point the model at the right source."
        )
    return DeltaTable(path) if version is None else DeltaTable(path, version=version)


def source_state(
    path: str, source: str, stream: str, *, at_timestamp: str | None = None, want_earliest: bool = False
) -> SourceState:
    table = _open(path, source, stream)
    latest = table.version()
    history = table.history(1)
    latest_ms = history[0]["timestamp"] if history else 0
    resolved = None
    if at_timestamp is not None:
        resolved = version_at(table, at_timestamp, source, stream)
    return SourceState(
        latest_version=latest,
        table_id=table.metadata().id,
        latest_timestamp=datetime.fromtimestamp(latest_ms / 1000, tz=timezone.utc),
        change_feed_enabled=str(table.metadata().configuration.get(CHANGE_FEED_PROPERTY, "false")).lower() == "true",
        earliest_change_version=earliest_change_version(Path(path), latest) if want_earliest else None,
        version_at_timestamp=resolved,
    )


def version_at(table: Any, at_timestamp: str, source: str, stream: str) -> int:
    """The last version committed at or before ``at_timestamp`` (ISO-8601; UTC when no zone)."""
    try:
        moment = datetime.fromisoformat(at_timestamp.replace("Z", "+00:00"))
    except ValueError as error:
        raise StreamError(
            f"Stream {stream}: start_at timestamp {at_timestamp!r} is not ISO-8601 (e.g. '2024-01-15T10:00:00Z')."
        ) from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    limit_ms = moment.timestamp() * 1000
    candidates = [entry["version"] for entry in table.history() if entry["timestamp"] <= limit_ms]
    if not candidates:
        raise StreamError(
            f"Stream {stream}: the source {source} has no version committed at or before {at_timestamp}. "
            "Use a later start_at timestamp, or start_at: earliest."
        )
    return max(candidates)


def earliest_change_version(path: Path, latest: int) -> int | None:
    """The first version of the last gap-free run of readable change-feed versions up to ``latest``."""
    earliest: int | None = None
    enabled = False
    for version in range(0, latest + 1):
        actions = read_commit(path, version)
        if actions is None:
            earliest = None
            continue
        setting = _feed_setting(actions)
        if setting is not None:
            enabled = setting
        readable = not _changes_data(actions) or (
            enabled and all((path / unquote(file)).exists() for file in _files_needed(actions))
        )
        if not readable:
            earliest = None
        elif earliest is None:
            earliest = version
    return earliest


def check_window(
    path: str,
    source: str,
    stream: str,
    after: int,
    through: int,
    table_id: str | None,
    *,
    model: str,
    remedy: str | None = None,
) -> None:
    """Refuse a window ``(after, through]`` that cannot be read completely and exactly.

    ``remedy`` replaces the default advice (rebuild the dbt model) for streams read from Python.
    """
    table = _open(path, source, stream)
    remedy_reset = remedy or reset_remedy(model)
    if table_id is not None and table.metadata().id != table_id:
        raise StreamError(
            f"Stream {stream}: the source {source} was dropped and recreated (Delta table id "
            f"{table_id} is now {table.metadata().id}), so its versions no longer continue the stream. {remedy_reset}"
        )
    latest = table.version()
    if after > latest:
        raise StreamError(
            f"Stream {stream}: its offset is version {after} but the source {source} is only at version {latest}; "
            f"the source was recreated or restored. {remedy_reset}"
        )
    root = Path(path)
    enabled = _enabled_at(path, source, stream, after, remedy_reset)
    for version in range(after + 1, through + 1):
        actions = read_commit(root, version)
        if actions is None:
            raise StreamError(
                f"Stream {stream} is stale: version {version} of {source} is no longer in its Delta log "
                f"(log retention, delta.logRetentionDuration), so the changes after the stream's offset "
                f"{after} cannot be read. {remedy_reset}"
            )
        setting = _feed_setting(actions)
        if setting is not None:
            enabled = setting
        if not _changes_data(actions):
            continue
        if not enabled:
            raise StreamError(
                f"Stream {stream}: the change data feed of {source} was not enabled at version {version}, "
                f"inside the stream's window ({after}, {through}], so its changes were not recorded. "
                f"Enable it with `dbt run-operation dbt_tablestream.enable_change_tracking --args "
                f"'{{relation: {source}}}'` and {remedy_reset[0].lower()}{remedy_reset[1:]}"
            )
        missing = [file for file in _files_needed(actions) if not (root / unquote(file)).exists()]
        if missing:
            raise StreamError(
                f"Stream {stream} is stale: files of version {version} of {source} were removed (VACUUM), "
                f"e.g. {missing[0]}, so the changes after the stream's offset {after} cannot be read. "
                f"Reading past them would silently drop changes. {remedy_reset}"
            )


def reset_remedy(model: str) -> str:
    return (
        f"Reset the stream with `dbt run --full-refresh -s {model}`: it rebuilds the target and starts "
        "the stream again from its start_at."
    )


def _enabled_at(path: str, source: str, stream: str, version: int, remedy: str) -> bool:
    if version < 0:
        return False
    try:
        table = _open(path, source, stream, version)
    except Exception as error:
        raise StreamError(
            f"Stream {stream} is stale: version {version} of {source} (the stream's offset) can no longer be "
            f"loaded ({error}). {remedy}"
        ) from error
    return str(table.metadata().configuration.get(CHANGE_FEED_PROPERTY, "false")).lower() == "true"


def target_marker(path: str, stream_name: str) -> dict[str, Any] | None:
    """The newest commit on the target made by ``stream_name``: its commitInfo marker."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        return None
    table = DeltaTable(path)
    # The stream's last commit is normally among the newest; read the whole history only if not.
    recent = table.history(RECENT_HISTORY)
    entries = recent if len(recent) < RECENT_HISTORY or _has_marker(recent, stream_name) else table.history()
    for entry in entries:
        fields = _marker_fields(entry)
        if fields.get("tablestream.stream") == stream_name:
            marker = {key[len("tablestream.") :]: value for key, value in fields.items()}
            app_id = marker.get("stream_id")
            marker["applied_version"] = table.transaction_version(app_id) if app_id else None
            return marker
    return None


def _has_marker(entries: list[dict[str, Any]], stream_name: str) -> bool:
    return any(_marker_fields(entry).get("tablestream.stream") == stream_name for entry in entries)


def _marker_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """The tablestream.* fields of a commit: top-level commitInfo keys (this engine), or the JSON
    in commitInfo.userMetadata (how delta-spark carries them)."""
    fields = {key: value for key, value in entry.items() if key.startswith("tablestream.")}
    if fields:
        return fields
    user_metadata = entry.get("userMetadata")
    if isinstance(user_metadata, str) and '"tablestream.stream"' in user_metadata:
        try:
            parsed = json.loads(user_metadata)
        except ValueError:
            return {}
        if isinstance(parsed, dict):
            return {key: value for key, value in parsed.items() if key.startswith("tablestream.")}
    return {}

"""Directory tables on the embedded engine: the files under a local location, kept as a Delta
table with change data feed, so a stream on it yields file arrivals, replacements and removals.

One sync lists the location, compares the listing with the table by relative path (size and
modification time), and applies the difference in one commit; no difference, no commit. The
content fingerprint (MD5) is computed only for files that are new or changed, so a sync of an
unchanged folder reads no file contents.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa

from dbt_tablestream.exceptions import StreamError

DIRECTORY_SCHEMA = pa.schema(
    [
        pa.field("relative_path", pa.string(), nullable=False),
        ("url", pa.string()),
        ("size", pa.int64()),
        ("last_modified_time", pa.timestamp("us", tz="UTC")),
        ("fingerprint", pa.string()),
    ]
)
CHUNK = 1024 * 1024
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class ListedFile:
    relative_path: str
    path: Path
    size: int
    modified: datetime


@dataclass(frozen=True)
class DirectorySync:
    files: int
    inserted: int
    updated: int
    deleted: int
    version: int | None  # the commit, or None when nothing changed


def _hidden(relative_path: str) -> bool:
    # As Spark's file sources: names starting with '.' or '_' are metadata or in-flight uploads.
    return any(part.startswith((".", "_")) for part in relative_path.split("/"))


def _wanted(relative_path: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    if include and not any(fnmatch.fnmatchcase(relative_path, pattern) for pattern in include):
        return False
    return not any(fnmatch.fnmatchcase(relative_path, pattern) for pattern in exclude)


def list_files(
    location: Path, *, recursive: bool, include: Sequence[str], exclude: Sequence[str]
) -> Iterator[ListedFile]:
    """The files under ``location`` (``recursive``: in every subdirectory), filtered by the globs."""
    pending = [location]
    while pending:
        directory = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                relative = Path(entry.path).relative_to(location).as_posix()
                if _hidden(relative):
                    continue
                if entry.is_dir(follow_symlinks=True):
                    if recursive:
                        pending.append(Path(entry.path))
                    continue
                if not entry.is_file(follow_symlinks=True) or not _wanted(relative, include, exclude):
                    continue
                stat = entry.stat(follow_symlinks=True)
                modified = EPOCH + timedelta(microseconds=stat.st_mtime_ns // 1000)
                yield ListedFile(relative, Path(entry.path), stat.st_size, modified)


def local_location(location: str, project_dir: str | None) -> str:
    """A local folder from a `location` config: a path or a file: URI; a relative path is taken
    from the dbt project directory, as dbt does for its own paths."""
    from urllib.parse import unquote, urlparse

    if location.startswith("file:"):
        location = unquote(urlparse(location).path)
    elif "://" in location:
        raise StreamError(
            f"Directory table: the embedded engine lists local folders; {location} is not one. "
            "Use a local path, or run on the cluster engine for other file systems."
        )
    path = Path(location).expanduser()
    if not path.is_absolute() and project_dir:
        path = Path(project_dir) / path
    return str(path)


def fingerprint(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sync_directory(
    table_path: str,
    location: str,
    *,
    recursive: bool,
    include: Sequence[str],
    exclude: Sequence[str],
    rebuild: bool,
    properties: dict[str, str] | None = None,
) -> DirectorySync:
    """Bring the directory table at ``table_path`` up to date with ``location`` in at most one commit."""
    from deltalake import DeltaTable

    from dbt_tablestream.embedded._delta import (
        CHANGE_OPERATION,
        DELETE,
        UPSERT,
        is_delta_table,
        keyed_changes_spec,
        merge_table,
        write_table,
    )

    root = Path(location).expanduser()
    if not root.is_dir():
        raise StreamError(
            f"Directory table: the location {location} is not a directory here. Point `location` at a "
            "folder (relative paths are resolved against the dbt project directory)."
        )
    root = root.resolve()
    listed = {
        file.relative_path: file for file in list_files(root, recursive=recursive, include=include, exclude=exclude)
    }
    exists = is_delta_table(table_path) and not rebuild
    previous: dict[str, dict[str, object]] = {}
    if exists:
        known = DeltaTable(table_path).to_pyarrow_table(columns=["relative_path", "size", "last_modified_time"])
        previous = {row["relative_path"]: row for row in known.to_pylist()}

    def stored(file: ListedFile) -> dict[str, object]:
        # Only new and changed files are stored, so each one's content is hashed here, once.
        return {
            "relative_path": file.relative_path,
            "url": file.path.as_uri(),
            "size": file.size,
            "last_modified_time": file.modified,
            "fingerprint": fingerprint(file.path),
        }

    if not exists:
        rows = [stored(file) for file in sorted(listed.values(), key=lambda f: f.relative_path)]
        configuration = {"delta.enableChangeDataFeed": "true", **(properties or {})}
        data = pa.Table.from_pylist(rows, schema=DIRECTORY_SCHEMA)
        version = write_table(table_path, data, "overwrite", properties=configuration)
        return DirectorySync(len(listed), len(rows), 0, 0, version)

    inserted = [stored(file) for name, file in listed.items() if name not in previous]
    updated = [
        stored(file)
        for name, file in listed.items()
        if name in previous
        and (previous[name]["size"] != file.size or previous[name]["last_modified_time"] != file.modified)
    ]
    deleted = [{"relative_path": name} for name in previous if name not in listed]
    if not (inserted or updated or deleted):
        return DirectorySync(len(listed), 0, 0, 0, None)
    changes = [{**row, CHANGE_OPERATION: UPSERT} for row in inserted + updated]
    changes += [{**row, CHANGE_OPERATION: DELETE} for row in deleted]
    source = pa.Table.from_pylist(changes, schema=DIRECTORY_SCHEMA.append(pa.field(CHANGE_OPERATION, pa.string())))
    merge_table(table_path, source, keyed_changes_spec(["relative_path"]))
    return DirectorySync(len(listed), len(inserted), len(updated), len(deleted), DeltaTable(table_path).version())

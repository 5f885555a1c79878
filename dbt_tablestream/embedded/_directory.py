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
OPERATION = "__tablestream_op"
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

    @property
    def changed(self) -> bool:
        return self.version is not None


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

    from dbt_tablestream.embedded._delta import MergeSpec, is_delta_table, merge_table, write_table

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
        stored = DeltaTable(table_path).to_pyarrow_table(
            columns=["relative_path", "size", "last_modified_time", "fingerprint"]
        )
        previous = {row["relative_path"]: row for row in stored.to_pylist()}

    def row(file: ListedFile, operation: str) -> dict[str, object]:
        known = previous.get(file.relative_path)
        unchanged = known is not None and known["size"] == file.size and known["last_modified_time"] == file.modified
        return {
            "relative_path": file.relative_path,
            "url": file.path.as_uri(),
            "size": file.size,
            "last_modified_time": file.modified,
            "fingerprint": known["fingerprint"] if unchanged and known else fingerprint(file.path),
            OPERATION: operation,
        }

    if not exists:
        rows = [row(file, "upsert") for file in sorted(listed.values(), key=lambda f: f.relative_path)]
        data = pa.Table.from_pylist(rows, schema=DIRECTORY_SCHEMA.append(pa.field(OPERATION, pa.string())))
        configuration = {"delta.enableChangeDataFeed": "true", **(properties or {})}
        version = write_table(table_path, data.drop_columns([OPERATION]), "overwrite", properties=configuration)
        return DirectorySync(len(listed), len(rows), 0, 0, version)

    inserted = [row(file, "upsert") for name, file in listed.items() if name not in previous]
    updated = [
        row(file, "upsert")
        for name, file in listed.items()
        if name in previous
        and (previous[name]["size"] != file.size or previous[name]["last_modified_time"] != file.modified)
    ]
    deleted = [
        {
            "relative_path": name,
            "url": None,
            "size": None,
            "last_modified_time": None,
            "fingerprint": None,
            OPERATION: "delete",
        }
        for name in previous
        if name not in listed
    ]
    changes = inserted + updated + deleted
    if not changes:
        return DirectorySync(len(listed), 0, 0, 0, None)
    source = pa.Table.from_pylist(changes, schema=DIRECTORY_SCHEMA.append(pa.field(OPERATION, pa.string())))
    operation = f"source.`{OPERATION}`"
    spec = MergeSpec(
        keys=["relative_path"],
        update_when=f"{operation} = 'upsert'",
        insert_when=f"{operation} = 'upsert'",
        delete_when=f"{operation} = 'delete'",
    )
    merge_table(table_path, source, spec)
    return DirectorySync(len(listed), len(inserted), len(updated), len(deleted), DeltaTable(table_path).version())

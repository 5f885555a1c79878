"""The warehouse directory is the catalog.

Layout: ``<warehouse>/<schema>.db/<table>/`` is a Delta table (it has ``_delta_log``) and
``<warehouse>/<schema>.db/<view>.view.sql`` is a view definition. Spark's own catalog is
in-memory and rebuilt from this layout, so every process (and every later dbt invocation)
sees the same relations and no metastore lock stops two processes sharing a warehouse.

Spark databases are created with their location under ``<warehouse>/.spark``: Spark deletes a
database's directory on ``DROP DATABASE ... CASCADE``, and that must never be a schema of ours.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dbt_tablestream.embedded._layout import SCHEMA_SUFFIX, VIEW_SUFFIX, schema_dir, table_dir
from dbt_tablestream.embedded._sources import data_source_class, delta_spark_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

SPARK_SCRATCH = ".spark"
DELTA_LOG = "_delta_log"

_SOURCE_NAME_UNSAFE = re.compile(r"[^0-9a-zA-Z_]")


@dataclass(frozen=True)
class RelationInfo:
    schema: str
    name: str
    kind: str  # "table" or "view"
    spark_schema: StructType | None = None


def quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def qualified(schema: str, name: str) -> str:
    return f"{quote(schema)}.{quote(name)}"


class WarehouseCatalog:
    """Keeps Spark's in-memory catalog in step with the Delta tables and views under a warehouse."""

    def __init__(self, spark: SparkSession, warehouse: Path) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self._lock = threading.RLock()
        # (schema, name) -> fingerprint of what is registered in Spark
        self._tables: dict[tuple[str, str], tuple[float, StructType]] = {}
        self._views: dict[tuple[str, str], str] = {}
        self._schemas: set[str] = set()
        self._source_serial = 0

    # ----- layout -------------------------------------------------------------------------
    def schema_dir(self, schema: str) -> Path:
        return schema_dir(self.warehouse, schema)

    def table_path(self, schema: str, name: str) -> Path:
        return table_dir(self.warehouse, schema, name)

    def view_file(self, schema: str, name: str) -> Path:
        return self.schema_dir(schema) / f"{name.lower()}{VIEW_SUFFIX}"

    def spark_location(self, schema: str) -> Path:
        return self.warehouse / SPARK_SCRATCH / f"{schema.lower()}{SCHEMA_SUFFIX}"

    def schemas_on_disk(self) -> list[str]:
        if not self.warehouse.is_dir():
            return []
        return sorted(
            entry.name[: -len(SCHEMA_SUFFIX)].lower()
            for entry in os.scandir(self.warehouse)
            if entry.is_dir() and entry.name.endswith(SCHEMA_SUFFIX) and not entry.name.startswith(".")
        )

    def tables_on_disk(self, schema: str) -> list[str]:
        directory = self.schema_dir(schema)
        if not directory.is_dir():
            return []
        return sorted(
            entry.name.lower()
            for entry in os.scandir(directory)
            if entry.is_dir() and (Path(entry.path) / DELTA_LOG).is_dir()
        )

    def views_on_disk(self, schema: str) -> list[str]:
        directory = self.schema_dir(schema)
        if not directory.is_dir():
            return []
        return sorted(
            entry.name[: -len(VIEW_SUFFIX)]
            for entry in os.scandir(directory)
            if entry.is_file() and entry.name.endswith(VIEW_SUFFIX)
        )

    def relation_kind(self, schema: str, name: str) -> str | None:
        if (self.table_path(schema, name) / DELTA_LOG).is_dir():
            return "table"
        if self.view_file(schema, name).is_file():
            return "view"
        return None

    # ----- synchronisation ---------------------------------------------------------------
    def sync(self, schemas: list[str] | None = None) -> None:
        """Register in Spark whatever is on disk and not yet registered; forget what vanished."""
        with self._lock:
            on_disk = self.schemas_on_disk()
            wanted = on_disk if schemas is None else [s.lower() for s in schemas if s.lower() in on_disk]
            for schema in wanted:
                self._ensure_spark_schema(schema)
                for name in self.tables_on_disk(schema):
                    self.register_table(schema, name)
            for schema in wanted:
                self._sync_views(schema)
            for schema, name in [key for key in self._tables if key[0] in wanted or schemas is None]:
                if self.relation_kind(schema, name) != "table":
                    self._unregister_table(schema, name)
            for schema, name in [key for key in self._views if key[0] in wanted or schemas is None]:
                if self.relation_kind(schema, name) != "view":
                    self._unregister_view(schema, name)
            if schemas is None:
                for schema in sorted(self._schemas - set(on_disk)):
                    self._drop_spark_schema(schema)

    def _sync_views(self, schema: str) -> None:
        pending = [
            (name, self.view_file(schema, name).read_text())
            for name in self.views_on_disk(schema)
            if self._views.get((schema, name)) != self._read_view(schema, name)
        ]
        # Views may be defined on views: create what resolves, retry the rest until no progress.
        while pending:
            failed = []
            for name, sql in pending:
                try:
                    self._create_spark_view(schema, name, sql)
                except Exception:
                    failed.append((name, sql))
            if len(failed) == len(pending):
                break
            pending = failed

    def _read_view(self, schema: str, name: str) -> str | None:
        try:
            return self.view_file(schema, name).read_text()
        except FileNotFoundError:
            return None

    def _ensure_spark_schema(self, schema: str) -> None:
        if schema in self._schemas:
            return
        location = self.spark_location(schema)
        self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(schema)} LOCATION '{location.as_posix()}'")
        self._schemas.add(schema)

    def _drop_spark_schema(self, schema: str) -> None:
        for key in [k for k in self._tables if k[0] == schema]:
            self._tables.pop(key)
        for key in [k for k in self._views if k[0] == schema]:
            self._views.pop(key)
        self.spark.sql(f"DROP DATABASE IF EXISTS {quote(schema)} CASCADE")
        self._schemas.discard(schema)

    def register_table(self, schema: str, name: str, *, force: bool = False) -> None:
        """Make the Delta table at ``<schema>.db/<name>`` readable as ``schema.name`` in Spark."""
        with self._lock:
            path = self.table_path(schema, name)
            log_mtime = (path / DELTA_LOG).stat().st_mtime
            key = (schema, name)
            known = self._tables.get(key)
            if known is not None and not force and known[0] == log_mtime:
                return
            spark_schema = delta_spark_schema(str(path))
            if known is not None and known[1] == spark_schema:
                self._tables[key] = (log_mtime, spark_schema)
                return
            self._ensure_spark_schema(schema)
            self._source_serial += 1
            source_name = _SOURCE_NAME_UNSAFE.sub("_", f"delta__{schema}__{name}__{self._source_serial}")
            self.spark.dataSource.register(data_source_class(source_name, str(path)))
            target = qualified(schema, name)
            self.spark.sql(f"DROP TABLE IF EXISTS {target}")
            self.spark.sql(f"DROP VIEW IF EXISTS {target}")
            self.spark.sql(f"CREATE TABLE {target} USING {source_name} LOCATION '{path.as_posix()}'")
            self._tables[key] = (log_mtime, spark_schema)

    def _unregister_table(self, schema: str, name: str) -> None:
        self._tables.pop((schema, name), None)
        self.spark.sql(f"DROP TABLE IF EXISTS {qualified(schema, name)}")

    def _unregister_view(self, schema: str, name: str) -> None:
        self._views.pop((schema, name), None)
        self.spark.sql(f"DROP VIEW IF EXISTS {qualified(schema, name)}")

    def _create_spark_view(self, schema: str, name: str, sql: str) -> None:
        self._ensure_spark_schema(schema)
        self.spark.sql(f"CREATE OR REPLACE VIEW {qualified(schema, name)} AS {sql}")
        self._views[(schema, name)] = sql

    # ----- changes made by this engine ---------------------------------------------------
    def create_schema(self, schema: str) -> None:
        with self._lock:
            self.schema_dir(schema).mkdir(parents=True, exist_ok=True)
            self._ensure_spark_schema(schema.lower())

    def drop_schema(self, schema: str) -> None:
        with self._lock:
            schema = schema.lower()
            shutil.rmtree(self.schema_dir(schema), ignore_errors=True)
            if schema in self._schemas:
                self._drop_spark_schema(schema)

    def create_view(self, schema: str, name: str, sql: str) -> None:
        with self._lock:
            schema, name = schema.lower(), name.lower()
            if self.relation_kind(schema, name) == "table":
                raise FileExistsError(f"{schema}.{name} is a table; drop it before creating a view of that name")
            self.create_schema(schema)
            self._create_spark_view(schema, name, sql)
            atomic_write(self.view_file(schema, name), sql)

    def drop_relation(self, schema: str, name: str) -> None:
        with self._lock:
            schema, name = schema.lower(), name.lower()
            kind = self.relation_kind(schema, name)
            if kind == "table":
                shutil.rmtree(self.table_path(schema, name), ignore_errors=True)
            elif kind == "view":
                self.view_file(schema, name).unlink(missing_ok=True)
            if (schema, name) in self._tables:
                self._unregister_table(schema, name)
            if (schema, name) in self._views:
                self._unregister_view(schema, name)

    def rename_relation(self, schema: str, name: str, new_schema: str, new_name: str) -> None:
        with self._lock:
            schema, name, new_schema, new_name = schema.lower(), name.lower(), new_schema.lower(), new_name.lower()
            kind = self.relation_kind(schema, name)
            if kind is None:
                raise FileNotFoundError(f"Cannot rename {schema}.{name}: it does not exist")
            self.drop_relation(new_schema, new_name)
            self.create_schema(new_schema)
            if kind == "table":
                os.replace(self.table_path(schema, name), self.table_path(new_schema, new_name))
                self._unregister_table(schema, name)
                self.register_table(new_schema, new_name)
            else:
                sql = self.view_file(schema, name).read_text()
                self.drop_relation(schema, name)
                self.create_view(new_schema, new_name, sql)

    def table_schema(self, schema: str, name: str) -> StructType | None:
        """The registered Spark schema of a Delta table, registering it first if it is new on disk."""
        with self._lock:
            schema, name = schema.lower(), name.lower()
            if self.relation_kind(schema, name) != "table":
                return None
            self.register_table(schema, name)
            return self._tables[(schema, name)][1]

    def forget(self) -> None:
        """Drop every Spark catalog entry made for this warehouse (Spark scratch only, never data)."""
        with self._lock:
            for schema in sorted(self._schemas):
                self._drop_spark_schema(schema)

    def relations(self, schema: str) -> list[RelationInfo]:
        with self._lock:
            self.sync([schema])
            schema = schema.lower()
            found = [
                RelationInfo(schema, name, "table", self._tables[(schema, name)][1])
                for name in self.tables_on_disk(schema)
                if (schema, name) in self._tables
            ]
            found += [RelationInfo(schema, name, "view") for name in self.views_on_disk(schema)]
            return found


@contextlib.contextmanager
def target_lock(warehouse: Path, schema: str, name: str) -> Iterator[None]:
    """An exclusive lock on one target, across threads and processes on this machine."""
    lock_dir = warehouse / SPARK_SCRATCH / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{schema.lower()}.{name.lower()}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)

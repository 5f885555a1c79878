"""Helpers for stream tests: a keyed Delta source, a dbt project streaming it, and what each run appended."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from tests.functional.dbt_project_helper import DbtProject
from tests.functional.engines import EmbeddedEngine, StreamEngine

CDF = {"delta.enableChangeDataFeed": "true"}
PEOPLE = pa.schema([("id", pa.int32()), ("name", pa.string()), ("age", pa.int32())])


def people(rows: list[tuple[int, str, int]]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int32()),
            "name": pa.array([r[1] for r in rows], pa.string()),
            "age": pa.array([r[2] for r in rows], pa.int32()),
        }
    )


def sources_yml(*tables: str) -> str:
    listed = "".join(f"      - name: {table}\n" for table in tables)
    return f"version: 2\nsources:\n  - name: app\n    tables:\n{listed}"


def stream_model(config: str = "", source: str = "t", columns: str = "*") -> str:
    return (
        f"{{{{ config(materialized='table_stream'{', ' + config if config else ''}) }}}}\n"
        f"select {columns} from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"
    )


class StreamBench:
    """A source table `app.<name>` under a fresh warehouse and a dbt project of stream models."""

    def __init__(
        self,
        tmp_path: Path,
        models: dict[str, str],
        *,
        sources: tuple[str, ...] = ("t",),
        engine: StreamEngine | None = None,
    ) -> None:
        self.warehouse = tmp_path / "warehouse"
        self.engine = engine or EmbeddedEngine()
        files = {f"{name}.sql": sql for name, sql in models.items()}
        self.project = DbtProject(
            tmp_path / "project",
            self.warehouse,
            models={"sources.yml": sources_yml(*sources), **files},
            profile=self.engine.profile(self.warehouse),
        )

    def invoke(self, *args: str) -> Any:
        """dbt in-process, after the engine has registered the warehouse's current tables."""
        self.engine.sync(self.warehouse)
        return self.project.invoke(*args)

    def run_ok(self, *args: str) -> Any:
        self.engine.sync(self.warehouse)
        return self.project.run_ok(*args)

    def crash(self, point: str) -> str:
        """A `dbt run` that dies at a fault point of the commit protocol; returns its output."""
        self.project.install_packages()
        self.engine.sync(self.warehouse)
        return self.engine.crash(self.project.root, point)

    def source_path(self, name: str = "t") -> str:
        return str(self.warehouse / "app.db" / name)

    def source(self, name: str = "t") -> DeltaTable:
        return DeltaTable(self.source_path(name))

    def create_source(self, rows: list[tuple[int, str, int]], *, change_feed: bool = True, name: str = "t") -> None:
        write_deltalake(
            self.source_path(name),
            people(rows) if rows else PEOPLE.empty_table(),
            configuration=CDF if change_feed else None,
        )

    def append(self, rows: list[tuple[int, str, int]], name: str = "t") -> None:
        write_deltalake(self.source_path(name), people(rows), mode="append")

    def target_path(self, model: str) -> Path:
        return self.warehouse / "analytics.db" / model

    def target_version(self, model: str) -> int | None:
        path = self.target_path(model)
        return DeltaTable(str(path)).version() if path.exists() else None

    def target_rows(self, model: str) -> Counter[tuple[Any, ...]]:
        path = self.target_path(model)
        if not path.exists():
            return Counter()
        return Counter(as_row(row) for row in DeltaTable(str(path)).to_pyarrow_table().to_pylist())

    def offsets(self) -> list[dict[str, Any]]:
        path = self.warehouse / "analytics.db" / "tablestream_offsets"
        if not path.exists():
            return []
        rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
        return sorted(
            rows,
            key=lambda row: (
                row["stream_name"],
                row["epoch"],
                -1 if row["to_version"] is None else row["to_version"],
                row["committed_at"],
            ),
        )

    def offsets_version(self) -> int | None:
        path = self.warehouse / "analytics.db" / "tablestream_offsets"
        return DeltaTable(str(path)).version() if path.exists() else None

    def refused(self, model: str, *fragments: str) -> str:
        """Run ``model`` expecting a refusal: the message has every fragment and nothing was written."""
        state = (self.target_version(model), self.target_rows(model), self.offsets_version(), self.offsets())
        result = self.invoke("run", "-s", model)
        assert not result.success
        message = str(result.exception) if result.exception else str(result.result.results[0].message)
        for fragment in fragments:
            assert fragment in message, message
        assert "Traceback" not in message
        assert (self.target_version(model), self.target_rows(model), self.offsets_version(), self.offsets()) == state
        return message

    def run(self, *args: str) -> None:
        self.run_ok("run", *args)

    def run_appended(self, model: str, *args: str) -> Counter[tuple[Any, ...]]:
        """Run the model; return the rows this run added to its target (a multiset)."""
        before = self.target_rows(model)
        self.run_ok("run", "-s", model, *args)
        after = self.target_rows(model)
        if "--full-refresh" in args:
            return after
        assert not (before - after), "a table_stream target must only grow"
        return after - before


def as_row(row: dict[str, Any]) -> tuple[Any, ...]:
    """The row without its commit metadata, which Delta numbers on its own."""
    return tuple(value for key, value in row.items() if key not in ("__commit_version", "__commit_timestamp"))

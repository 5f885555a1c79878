"""Helpers for stream tests: a keyed Delta source, a dbt project streaming it, and what each run appended."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from tests.functional.dbt_project_helper import DbtProject
from tests.functional.local import dbt_process, local_profile, register_tables, register_tables_hook, relocate_schemas

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
    """A source table `app.<name>` under a fresh warehouse folder and a dbt project of stream models.

    In-process (the default), dbt runs on the shared local session, whose `app` and `analytics`
    schemas are pointed at this test's folder. With ``processes=True`` every dbt step is a process
    of its own with its own warehouse and metastore (for SIGKILL tests); sources are registered by
    the project's on-run-start hooks there.
    """

    def __init__(
        self,
        tmp_path: Path,
        models: dict[str, str],
        *,
        sources: tuple[str, ...] = ("t",),
        processes: bool = False,
        profile: dict[str, Any] | None = None,
    ) -> None:
        self.warehouse = tmp_path / "warehouse"
        self.processes = processes
        files = {f"{name}.sql": sql for name, sql in models.items()}
        hooks = register_tables_hook(self.warehouse, sources) if processes else None
        self.project = DbtProject(
            tmp_path / "project",
            self.warehouse,
            models={"sources.yml": sources_yml(*sources), **files},
            # The profile names this test's folder, as a user's does; in-process the shared session
            # keeps its own warehouse, and the schemas are pointed here (relocate_schemas).
            profile=profile or local_profile(self.warehouse),
            on_run_start=hooks,
        )
        if not processes:
            relocate_schemas(self.warehouse)

    def invoke(self, *args: str, callbacks: list[Any] | None = None) -> Any:
        """dbt in-process, after the catalog has registered the warehouse's current tables."""
        if self.processes:
            return self.process(*args)
        register_tables(self.warehouse)
        return self.project.invoke(*args, callbacks=callbacks)

    def run_ok(self, *args: str) -> Any:
        if self.processes:
            result = self.process(*args)
            assert result.success, result.output
            return result
        register_tables(self.warehouse)
        return self.project.run_ok(*args)

    def process(self, *args: str, env: dict[str, str] | None = None) -> ProcessResult:
        self.project.install_packages()
        running = dbt_process(self.project.root, env or {}, *args)
        output, _ = running.communicate(timeout=900)
        return ProcessResult(running.returncode, output)

    def crash(self, point: str, *args: str) -> str:
        """A `dbt run` process killed (SIGKILL) at a fault point of the commit protocol; its output."""
        assert self.processes, "a crash needs the bench's dbt steps to run as processes"
        result = self.process(*(args or ("run",)), env={"DBT_TABLESTREAM_FAULT": point})
        assert result.returncode == -9, result.output
        return result.output

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
        message = str(result.exception) if result.exception else str(model_results(result)[0].message)
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


def model_results(result: Any) -> list[Any]:
    """A dbt run's results for its models, without this package's on-run-start hook."""
    return [item for item in result.result.results if item.node.resource_type == "model"]


class ProcessResult:
    """What a dbt process left: its exit code and output, shaped like dbtRunner's result where tests look."""

    def __init__(self, returncode: int, output: str) -> None:
        self.returncode = returncode
        self.output = output
        self.success = returncode == 0
        self.exception = None if self.success else output
        self.result = None


def as_row(row: dict[str, Any]) -> tuple[Any, ...]:
    """The row without its commit metadata, which Delta numbers on its own."""
    return tuple(value for key, value in row.items() if key not in ("__commit_version", "__commit_timestamp"))

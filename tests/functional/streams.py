"""Helpers for stream tests: a keyed Delta source, a dbt project streaming it, and what each run appended."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from dbt.cli.main import dbtRunner
from deltalake import DeltaTable, write_deltalake
from hypothesis import HealthCheck, Phase, settings

from tests.functional.dbt_project_helper import DbtProject
from tests.functional.local import (
    dbt_process,
    delta_tables,
    local_profile,
    register_tables,
    register_tables_hook,
    relocate_schemas,
    shared_spark,
    sql_path,
)
from tests.opt_in_slices import examples_in_run

TRACKING = {"table_changes": "delta.enableChangeDataFeed", "changelog": "delta.enableRowTracking"}
CDF = {TRACKING["table_changes"]: "true"}
ROW_TRACKING = {TRACKING["changelog"]: "true"}
# Both ways a stream reads its source (stream_read); a `changes` bench writes its source with
# Spark, because delta-rs cannot write a table with row tracking. The scenarios' `changes` variants
# are opt-in (`-m changes_full`): the suite's 30 minutes cannot hold them, and test_changes_read
# and the property test cover the changelog read in the default suite (CONTRIBUTING.md, "The tests").
STREAM_READS_FULL = ["table_changes", pytest.param("changelog", marks=pytest.mark.changes_full)]


def shown_streams(project: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    """Every stream's position and health, as the `show_streams` operation prints it in JSON."""
    capsys.readouterr()
    result = dbtRunner().invoke(
        [
            "run-operation",
            "dbt_tablestream.show_streams",
            "--args",
            "{format: json}",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
        ]
    )
    assert result.success, result.exception
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    return {entry["stream_name"]: entry for entry in json.loads(printed[-1])}


def property_settings(examples: int) -> settings:
    """Hypothesis settings of a property test over dbt runs: ``examples`` (fewer in CI's slice of
    the opt-in tiers, tests/opt_in_slices.py), or TABLESTREAM_PROPERTY_EXAMPLES; no deadline,
    since a run takes seconds. The examples are seeds of batches of histories
    (tests/functional/lanes.py), the first the run's own
    (tests/seeds.py): a smaller seed is no simpler batch, so a failure is not shrunk; its
    message names the lane, its seed and its history."""
    return settings(
        max_examples=int(os.environ.get("TABLESTREAM_PROPERTY_EXAMPLES", str(examples_in_run(examples)))),
        deadline=None,
        # A failure is replayed by its seed (TABLESTREAM_SEED), not from Hypothesis's database.
        database=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )


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

    dbt runs in-process on the shared local session, whose `app` and `analytics` schemas are
    pointed at this test's folder. With ``processes=True`` a crash (a SIGKILL at a fault point) is
    a `dbt run` process of its own, with the test's warehouse and a metastore of its own, in which
    the project's on-run-start hooks register every table the warehouse holds at that moment.
    """

    def __init__(
        self,
        tmp_path: Path,
        models: dict[str, str],
        *,
        sources: tuple[str, ...] = ("t",),
        processes: bool = False,
        profile: dict[str, Any] | None = None,
        stream_read: str = "table_changes",
        project_vars: dict[str, Any] | None = None,
    ) -> None:
        self.warehouse = tmp_path / "warehouse"
        self.processes = processes
        self.stream_read = stream_read
        files = {f"{name}.sql": sql for name, sql in models.items()}
        self.project = DbtProject(
            tmp_path / "project",
            self.warehouse,
            models={"sources.yml": sources_yml(*sources), **files},
            # The profile names this test's folder, as a user's does; in-process the shared session
            # keeps its own warehouse, and the schemas are pointed here (relocate_schemas).
            profile=profile or local_profile(self.warehouse),
            project_vars={
                **({"tablestream_stream_read": stream_read} if stream_read != "table_changes" else {}),
                **(project_vars or {}),
            }
            or None,
        )
        relocate_schemas(self.warehouse)

    def register(self) -> None:
        """The shared catalog says what the warehouse's files say (a crashed process may have
        written tables it does not know)."""
        register_tables(self.warehouse)
        if self.processes:
            register_tables(self.warehouse, "analytics")

    def invoke(self, *args: str, callbacks: list[Any] | None = None) -> Any:
        """dbt in-process, after the catalog has registered the warehouse's current tables."""
        self.register()
        return self.project.invoke(*args, callbacks=callbacks)

    def run_ok(self, *args: str) -> Any:
        self.register()
        return self.project.run_ok(*args)

    def process(self, *args: str, env: dict[str, str] | None = None) -> ProcessResult:
        """dbt in a process of its own; its metastore first registers every table in the warehouse."""
        hooks = [
            statement
            for schema in ("app", "analytics")
            for statement in register_tables_hook(self.warehouse, delta_tables(self.warehouse, schema), schema)
        ]
        self.project.set_on_run_start(hooks)
        try:
            self.project.install_packages()
            # dbt fills its relation cache before on-run-start runs: without the cache it asks the
            # catalog when a model looks, after the hooks have registered the tables.
            running = dbt_process(self.project.root, env or {}, *args, "--no-populate-cache")
            output, _ = running.communicate(timeout=900)
        finally:
            self.project.set_on_run_start([])
        return ProcessResult(running.returncode, output)

    def crash(self, point: str, *args: str) -> str:
        """A `dbt run` process killed (SIGKILL) at a fault point of the commit protocol; its output."""
        assert self.processes, "a crash needs a bench with processes=True"
        result = self.process(*(args or ("run",)), env={"DBT_TABLESTREAM_FAULT": point})
        assert result.returncode == -9, result.output
        return result.output

    def source_path(self, name: str = "t") -> str:
        return str(self.warehouse / "app.db" / name)

    def source(self, name: str = "t") -> DeltaTable | SparkSource:
        if self.stream_read == "changelog":
            return SparkSource(self.source_path(name))
        return DeltaTable(self.source_path(name))

    def create_source(self, rows: list[tuple[int, str, int]], *, change_feed: bool = True, name: str = "t") -> None:
        """The keyed source, tracked for this bench's stream_read unless ``change_feed`` is false."""
        if self.stream_read == "changelog":
            SparkSource.create(self.source_path(name), rows, ROW_TRACKING if change_feed else {})
            return
        write_deltalake(
            self.source_path(name),
            people(rows) if rows else PEOPLE.empty_table(),
            configuration=CDF if change_feed else None,
        )

    def append(self, rows: list[tuple[int, str, int]], name: str = "t") -> None:
        if self.stream_read == "changelog":
            SparkSource(self.source_path(name)).append(rows)
            return
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

    def refused(self, model: str, *fragments: str, args: tuple[str, ...] = ()) -> str:
        """Run ``model`` (with ``args``) expecting a refusal: the message has every fragment and
        nothing was written."""
        state = (self.target_version(model), self.target_rows(model), self.offsets_version(), self.offsets())
        result = self.invoke("run", "-s", model, *args)
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


def assert_no_refused_setting(warehouse: Path) -> list[str]:
    """The statements dbt sent to an emulated SQL warehouse (its statement log): there are some,
    and none sets or resets a setting a warehouse refuses. Returns them."""
    from dbt.adapters.tablestream.connections import STATEMENT_LOG, refused_setting

    statements = [sql for sql in (warehouse / STATEMENT_LOG).read_text().split("\n;\n") if sql.strip()]
    assert statements, "no statement reached the emulated warehouse"
    refused = [sql for sql in statements if refused_setting(sql) is not None]
    assert not refused, f"settings a SQL warehouse refuses: {refused}"
    return statements


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


def sql_values(rows: list[tuple[int, str, int]]) -> str:
    """Keyed rows as the rows of a SQL VALUES clause."""
    return ", ".join(f"({key}, '{name}', {age})" for key, name, age in rows)


class SparkSource:
    """The keyed source written by delta-spark (by path), with the part of delta-rs's DeltaTable API
    the scenarios use; for sources with row tracking, which delta-rs cannot write."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.table = f"delta.`{sql_path(Path(path))}`"
        self.alter = self

    @staticmethod
    def create(path: str, rows: list[tuple[int, str, int]], properties: dict[str, str]) -> None:
        """Version 0, with its rows (one commit, as delta-rs writes it)."""
        listed = ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())
        table = f"delta.`{sql_path(Path(path))}`"
        options = f" tblproperties ({listed})" if listed else ""
        if not rows:
            shared_spark().sql(f"create table {table} (id int, name string, age int) using delta{options}")
            return
        shared_spark().sql(
            f"create table {table} using delta{options} as select cast(col1 as int) as id,"
            f" cast(col2 as string) as name, cast(col3 as int) as age from values {sql_values(rows)}"
        )

    def append(self, rows: list[tuple[int, str, int]]) -> None:
        shared_spark().sql(f"insert into {self.table} values {sql_values(rows)}")

    def update(self, updates: dict[str, str], predicate: str) -> None:
        assignments = ", ".join(f"{column} = {value}" for column, value in updates.items())
        shared_spark().sql(f"update {self.table} set {assignments} where {predicate}")

    def delete(self, predicate: str | None = None) -> None:
        shared_spark().sql(f"delete from {self.table}" + (f" where {predicate}" if predicate else ""))

    def set_table_properties(self, properties: dict[str, str]) -> None:
        """Turns on row tracking where a `table_changes` scenario turns on the change feed."""
        properties = ROW_TRACKING if properties == CDF else properties
        listed = ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())
        shared_spark().sql(f"alter table {self.table} set tblproperties ({listed})")

    def version(self) -> int:
        return int(shared_spark().sql(f"describe history {self.table} limit 1").collect()[0]["version"])

    def history(self) -> list[dict[str, Any]]:
        rows = shared_spark().sql(f"describe history {self.table}").collect()
        return [{"version": int(row["version"]), "timestamp": int(row["timestamp"].timestamp() * 1000)} for row in rows]


def commit_adds_vectors(table: Path, version: int) -> bool:
    """Whether the table's commit `version` adds a file with a deletion vector."""
    log = table / "_delta_log" / f"{version:020d}.json"
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    return any(action.get("add", {}).get("deletionVector") for action in actions)

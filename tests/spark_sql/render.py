"""Render every engine-specific statement of the cluster engine for real model configs.

The project under ``project/`` is parsed by dbt with a ``type: spark`` (or ``databricks``)
profile; no connection is opened. For each model and run scenario, the package's own macros are
called in that model's dbt context, in the order the materialization calls them, and what they
return is collected. Values a live cluster would answer (latest version, table id, commit time)
are fixed here, so the output is stable and can be compared with reviewed golden files.
"""

from __future__ import annotations

import json
import re
import shutil
from argparse import Namespace
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from dbt.adapters.factory import get_adapter, register_adapter
from dbt.cli.main import dbtRunner
from dbt.clients.jinja import get_rendered
from dbt.config.runtime import RuntimeConfig
from dbt.context.providers import generate_runtime_macro_context, generate_runtime_model_context
from dbt.contracts.graph.manifest import Manifest
from dbt.mp_context import get_mp_context

from dbt import flags

PROJECT = Path(__file__).resolve().parent / "project"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

# What the source answers in every scenario: it is at version 9.
LATEST_VERSION = 9
SOURCE_TABLE_ID = "0f6c3a52-6b0e-4a4e-9d8f-2f4b1d7c9e11"
LATEST_TIMESTAMP = "2026-11-21 09:30:00"
EARLIEST_CHANGE_VERSION = 2
VERSION_AT_TIMESTAMP = 4
NEXT_RUN_AFTER = 5
# The window's key ranges a live run would read (inspect_stream_window), as strings.
KEY_RANGES = (("10", "20"), ("40", "40"))
# A stream_aggregate's answers: the window's ranges of its first group_by column
# (_stream_aggregate_key_ranges), and the groups whose extremes it removed, to be read again
# (stream_aggregate_recomputes_sql), one with a NULL key.
AGGREGATE_KEY_RANGES = (("ann", "bob"), ("eve", "eve"))
RECOMPUTED_GROUPS = (("ann", "paid"), ("bob", None))
STREAM_COLUMNS = ("__change_type", "__commit_version", "__commit_timestamp")

PROFILES = {
    "spark": {"type": "spark", "method": "session", "host": "NA", "schema": "analytics"},
    "databricks": {
        "type": "databricks",
        "host": "example.cloud.databricks.com",
        "http_path": "/sql/1.0/warehouses/0",
        "token": "unused",
        "catalog": "main",
        "schema": "analytics",
    },
}


@dataclass(frozen=True)
class Statement:
    scenario: str
    step: str
    sql: str


def write_profile(project_dir: Path, adapter_type: str, profile_name: str) -> None:
    profile = {profile_name: {"target": adapter_type, "outputs": {adapter_type: PROFILES[adapter_type]}}}
    (project_dir / "profiles.yml").write_text(yaml.safe_dump(profile))


def local_package(project_dir: Path) -> None:
    """Point the copied project's package at this repository."""
    (project_dir / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(PACKAGE_ROOT)}]}))


class SparkRenderer:
    """The render project parsed for ``type: spark``, with a dbt context per model."""

    def __init__(self, work_dir: Path, project_vars: dict[str, Any] | None = None) -> None:
        self.project_dir = work_dir / "project"
        shutil.copytree(PROJECT, self.project_dir)
        local_package(self.project_dir)
        if project_vars:
            project_file = self.project_dir / "dbt_project.yml"
            project = yaml.safe_load(project_file.read_text())
            project["vars"] = {**(project.get("vars") or {}), **project_vars}
            project_file.write_text(yaml.safe_dump(project))
        write_profile(self.project_dir, "spark", "tablestream_spark_sql")
        dirs = ["--project-dir", str(self.project_dir), "--profiles-dir", str(self.project_dir)]
        for command in (["deps"], ["parse"]):
            result = dbtRunner().invoke([*command, *dirs])
            assert result.success, result.exception
        manifest = result.result
        assert isinstance(manifest, Manifest)
        self.manifest = manifest
        self.args = Namespace(
            profiles_dir=str(self.project_dir),
            project_dir=str(self.project_dir),
            target=None,
            profile=None,
            threads=None,
        )
        flags.set_from_args(self.args, {})
        self.config = RuntimeConfig.from_args(self.args)
        self._activate()

    def _activate(self) -> None:
        """Register this project's adapter again if a dbt invocation since has reset dbt's globals.

        Every ``dbtRunner().invoke`` clears the registered adapters and the global flags when it
        ends, and other tests on the same pytest worker invoke dbt between this session-scoped
        renderer's uses.
        """
        flags.set_from_args(self.args, {})
        register_adapter(self.config, get_mp_context())
        adapter = get_adapter(self.config)
        adapter.set_macro_resolver(self.manifest)
        adapter.set_macro_context_generator(generate_runtime_macro_context)  # type: ignore[arg-type]

    def model_names(self) -> list[str]:
        return sorted(node.name for node in self.manifest.nodes.values() if node.resource_type == "model")

    def node(self, name: str) -> Any:
        return next(n for n in self.manifest.nodes.values() if n.resource_type == "model" and n.name == name)

    def model(self, name: str) -> ModelRender:
        node = self.node(name)
        self._activate()
        return ModelRender(node, generate_runtime_model_context(node, self.config, self.manifest), self.manifest)

    def render(self, name: str) -> list[Statement]:
        model = self.model(name)
        return [*model.operations(), *model.scenario("first_run"), *model.scenario("next_run")]


class ModelRender:
    """One model's statements, in the order its materialization issues them."""

    def __init__(self, node: Any, context: dict[str, Any], manifest: Manifest) -> None:
        self.node = node
        self.context = context
        self.package = context["dbt_tablestream"]
        self.invocation_id = str(context["invocation_id"])
        self.this = context["this"]
        source = next(
            manifest.sources[unique_id] for unique_id in node.depends_on.nodes if unique_id.startswith("source.")
        )
        relation_class = context["api"]["Relation"]
        self.source = relation_class.create(
            database=source.database, schema=source.schema, identifier=source.identifier
        )
        column_class = context["api"]["Column"]
        self.source_columns = [column_class(column.name, column.data_type) for column in source.columns.values()]
        self.output_columns = list(node.columns)
        self.config = node.config
        self.settings: dict[str, Any] = self.package["_stream_settings"]()

    def call(self, macro: str, *args: Any) -> Any:
        return self.package[macro](*args)

    def operations(self) -> Iterator[Statement]:
        """What `dbt run-operation dbt_tablestream.enable_change_tracking` sends for the source."""
        sql = self.call("set_table_properties_sql", self.source, {"delta.enableChangeDataFeed": "true"})
        yield Statement("operations", "enable_change_tracking", str(sql).strip())
        offsets = self.package["_offsets_relation"]()
        yield Statement("operations", "show_streams", str(self.call("latest_stream_offsets_sql", offsets)).strip())

    def scenario(self, scenario: str) -> Iterator[Statement]:
        def statement(step: str, sql: Any) -> Statement:
            text = str(sql).strip().replace(self.invocation_id, "<invocation_id>")
            return Statement(scenario, step, re.sub(r"[ \t]+\n", "\n", text))

        first = scenario == "first_run"
        stream = self.stream(first)
        start_at = self.settings["start_at"]
        if stream["read"] == "changelog":
            yield statement("changelog_session", "select version()")
            yield statement("changelog_session", "set spark.databricks.delta.changelogV2.enabled")
            yield statement("changelog_session", "set spark.databricks.delta.changelogV2.enabled = true")
        offsets = self.package["_offsets_relation"]()
        # The target's newest commits first (_stream_history_reads): the marker is in the newest.
        recent_target = self.call("_stream_history_reads")[0]
        if not first:
            yield statement("offsets_read", self.call("read_stream_offset_sql", offsets, stream["stream"]))
            yield statement("target_marker", self.call("describe_history_sql", self.this, recent_target))
        # resolve_stream: the source's state in two statements, its history LIMIT chosen by the position.
        whole_history = first and (start_at == "earliest" or (isinstance(start_at, dict) and "timestamp" in start_at))
        recent = 1 if first and start_at in ("snapshot", "latest") else self.call("_stream_recent_history")
        yield statement("source_state", self.call("describe_detail_sql", self.source))
        yield statement(
            "source_state", self.call("describe_history_sql", self.source, None if whole_history else recent)
        )
        if first and isinstance(start_at, dict) and "timestamp" in start_at:
            yield statement("source_state", self.call("timestamp_sql", start_at["timestamp"]))
        if stream["view"] is not None:
            if not stream["snapshot"]:
                # The window's commits are among the recent rows unless it spans more versions.
                if not whole_history and stream["through"] - stream["after"] + 1 > recent:
                    yield statement(
                        "window_check",
                        self.call("describe_history_sql", self.source, stream["through"] - stream["after"] + 1),
                    )
                yield statement("window_check", self.call("retained_from_sql", "interval 1 week"))
            stream["view"] = self.call("window_relation_sql", self.source, stream)
        compiled = self.compiled_code(stream)
        yield statement("model", compiled)

        keys = self.unique_key()
        materialized = self.config.materialized
        merged = materialized in ("stream_merge", "stream_aggregate")
        mode = "overwrite" if first else ("merge" if merged else "append")
        if materialized == "stream_merge":
            write = self.stream_merge_write(stream, compiled, keys, first, statement)
        elif materialized == "stream_aggregate":
            write = self.stream_aggregate_write(stream, compiled, first, statement)
        else:
            write = self.table_stream_write(stream, compiled, keys, first, statement)
        steps = list(write)
        # The statements before the commit's write, the write, and those after its commit.
        at = next(index for index, step in enumerate(steps) if step.step == "write")
        yield from steps[:at]
        if mode != "overwrite":
            yield statement("target_marker", self.call("describe_history_sql", self.this, recent_target))
        # A stream_merge's and a stream_aggregate's target files are bounded; a table_stream run here
        # is not a compaction run (_stream_compaction_due: the rendered stream has no logged runs).
        layout = {"max_rows_per_file": self.settings["max_rows_per_file"]} if merged else {}
        for sql in self.call("stream_commit_open_sql", self.call("_stream_group", [stream]), layout):
            yield statement("commit_open", sql)
        yield steps[at]
        for sql in self.call("stream_commit_close_sql", layout):
            yield statement("commit_close", sql)
        yield statement("target_marker", self.call("describe_history_sql", self.this, recent_target))
        yield from steps[at + 1 :]
        row = self.call("offsets_row_sql", stream, 42)
        if first:  # later runs find the log in dbt's relation cache
            yield statement("offsets_append", self.call("offsets_log_create_sql", offsets, row))
        unlogged_only = self.call("_protocol_step", "unlogged_only")({"inputs": [stream]})
        yield statement(
            "offsets_append",
            self.call("offsets_log_append_sql", offsets, row, self.call("_offsets_columns"), unlogged_only),
        )
        if not first:
            yield statement("pause_point", self.call("pause_sql", 1.5))

    def stream(self, first: bool) -> dict[str, Any]:
        """The stream as resolve_stream pins it, for the first run or a later one."""
        start_at = self.settings["start_at"]
        name = self.settings["stream_name"] or f"{self.node.name}__app_{self.source.identifier}"
        after = NEXT_RUN_AFTER
        snapshot = False
        if first:
            if start_at in ("snapshot", "latest"):
                after = LATEST_VERSION
                snapshot = start_at == "snapshot"
            elif start_at == "earliest":
                after = EARLIEST_CHANGE_VERSION - 1
            elif "version" in start_at:
                after = int(start_at["version"])
            else:
                after = VERSION_AT_TIMESTAMP
        max_versions = self.settings["max_versions_per_run"]
        through = LATEST_VERSION
        if max_versions is not None and not snapshot and after < through:
            through = min(through, after + int(max_versions))
        fields = {
            "stream": name,
            "epoch": 0,
            "source": f"{self.source.schema}.{self.source.identifier}",
            "source_table_id": SOURCE_TABLE_ID,
            "after": after,
            "through": through,
            "latest": LATEST_VERSION,
            "restart": first,
            "snapshot": snapshot,
            "timestamp": LATEST_TIMESTAMP,
        }
        stream: dict[str, Any] = self.call("_stream_input", self.settings, fields)
        if snapshot or after < through:
            stream["view"] = "window"
        return stream

    def compiled_code(self, stream: dict[str, Any]) -> str:
        """The model's SQL with its stream read rendered as source_stream() renders it (_stream_read_sql)."""
        package = dict(self.package)

        def stream_read(*_: Any) -> str:
            return str(
                self.package["_stream_read_sql"](stream, self.source, self.source_columns, self.config.materialized)
            )

        package["source_stream"] = stream_read
        context = {**self.context, "dbt_tablestream": package}
        return str(get_rendered(self.node.raw_code, context, self.node))

    def unique_key(self) -> list[str]:
        return list(self.settings["unique_key"])

    def table_stream_write(
        self, stream: dict[str, Any], compiled: str, keys: list[str], first: bool, statement: Callable[..., Statement]
    ) -> Iterator[Statement]:
        rows_sql = compiled
        if keys and self.settings["net_changes"] and stream["view"] is not None:
            yield statement("null_keys", self.call("stream_null_keys_sql", compiled, keys))
            rows_sql = self.call("net_changes_sql", compiled, keys, self.output_columns)
        if first:
            yield statement("write", self.call("stream_write_sql", self.this, rows_sql, "overwrite", stream))
            return
        # on_schema_change 'ignore' (the default) with no schema change: no view, the rows' own select.
        select_sql = f"select {', '.join(self.output_columns)} from ({rows_sql}) as __tablestream_rows"
        group = self.call("_stream_group", [stream])  # the materialization's stream: its inputs' group
        yield statement("write", self.call("stream_write_sql", self.this, select_sql, "append", group))

    def stream_merge_write(
        self, stream: dict[str, Any], compiled: str, keys: list[str], first: bool, statement: Callable[..., Statement]
    ) -> Iterator[Statement]:
        """The strategy's statements and write (stream_merge_strategy_sql), as the materialization
        runs them; a later run finds the tombstones table of its first run."""
        settings = self.settings
        excluded = [*STREAM_COLUMNS, *settings["target_exclude_columns"]]
        data_columns = [column for column in self.output_columns if column not in excluded]
        key_ranges: list[list[str]] = []
        cached = None
        if self.call("_stream_merge_caches_window", self.call("_stream_group", [stream]), settings["protocol"], first):
            cached = f"__tablestream_window_{self.this.identifier}"
            for sql in self.call("stream_window_cache_sql", cached, compiled, True):
                yield statement("cache_window", sql)
            compiled = f"select * from {self.context['adapter'].quote(cached)}"
        if stream["view"] is not None:
            spec = None
            if not first:
                types = {column.name: column.dtype for column in self.source_columns}
                column_class = self.context["api"]["Column"]
                schema = [column_class(column, types.get(column, "string")) for column in self.output_columns]
                spec = self.call("_stream_key_ranges_spec", schema, keys[0], settings["merge_key_ranges"])
            yield statement("null_keys", self.call("stream_null_keys_sql", compiled, keys, settings["sequence"], spec))
            if spec is not None:
                key_ranges = [
                    [self.call("_key_range_literal", value, spec["type"]) for value in pair] for pair in KEY_RANGES
                ]
        args = {
            "compiled_code": compiled,
            "keys": keys,
            "columns": self.output_columns,
            "data_columns": data_columns,
            "settings": settings,
            "stream": self.call("_stream_group", [stream]),
            "target": self.this,
            "existing": None if first else self.this,
            "rebuild": first,
            "key_ranges": key_ranges,
            "relation_exists": lambda relation: not first,
            "window_keys": {"count": None, "listed": None, "type": None, "files": None},
            # A window of keys not counted: merged (_stream_net_write_choice).
            "write_choice": self.call(
                "_stream_net_write_choice",
                {"count": None, "listed": None, "files": None},
                {"rows": None, "vectors": False, "feed": False},
                {"merge_write": "auto", "replace_where_keys": 0, "max_rows_per_file": settings["max_rows_per_file"]},
            ),
            "relation_columns": lambda relation: data_columns,
        }
        plan = self.call("stream_merge_strategy_sql", settings["strategy"], args)
        for step in plan["statements"]:
            yield statement("tombstones", step["sql"])
        if first:
            yield statement("write", self.call("stream_write_sql", self.this, plan["write_sql"], "overwrite", stream))
        else:
            yield statement("write", plan["write_sql"])
        if cached is not None:
            for sql in self.call("stream_window_uncache_sql", cached):
                yield statement("uncache_window", sql)

    def stream_aggregate_write(
        self, stream: dict[str, Any], compiled: str, first: bool, statement: Callable[..., Statement]
    ) -> Iterator[Statement]:
        """The materialization's statements (stream_aggregate): a first run builds the GROUP BY over
        the snapshot; a later one caches the window (if its protocol caches), lists the groups to
        read again, reads the window's key ranges, MERGEs, then frees the cache after the commit."""
        settings = self.settings
        group_by = list(settings["group_by"])
        # What DESCRIBE QUERY answers for the model's output (described_columns): the source's columns.
        types = {column.name.lower(): column.dtype.lower() for column in self.source_columns}
        columns = self.call("_aggregate_target_columns", settings["aggregates"], types)
        group = self.call("_stream_group", [stream])
        current_sql = compiled if stream["snapshot"] else self.call("_stream_current_rows", compiled)
        if first:
            build_sql = self.call("stream_aggregate_build_sql", current_sql, group_by, columns, True)
            yield statement("write", self.call("stream_write_sql", self.this, build_sql, "overwrite", group))
            return
        protocol = settings["protocol"]
        recompute_all = self.call("_protocol_step", "reapplies_windows", protocol)()
        cached = None
        if self.call("_protocol_step", "caches_windows", protocol)():
            cached = f"__tablestream_window_{self.this.identifier}"
            for sql in self.call("stream_window_cache_sql", cached, compiled):
                yield statement("cache_window", sql)
        rows_sql = compiled if cached is None else f"select * from {self.context['adapter'].quote(cached)}"
        listing_sql = self.call(
            "stream_aggregate_recomputes_sql",
            self.this,
            rows_sql,
            group_by,
            columns,
            recompute_all,
            self.call("_stream_aggregate_listed_groups"),
        )
        listed: list[list[str | None]] | None = None
        condition = None
        if listing_sql is not None:
            yield statement("recomputed_groups", listing_sql)
            listed = [list(group_values) for group_values in RECOMPUTED_GROUPS]
            condition = self.call("_aggregate_listed_groups_condition", group_by, types, listed)
        key = group_by[0]
        spec = self.call(
            "_stream_key_ranges_spec", [{"name": key, "dtype": types[key.lower()]}], key, settings["merge_key_ranges"]
        )
        key_ranges: list[list[str]] = []
        if spec is not None:
            rows = f"({rows_sql}) as __tablestream_rows"
            yield statement("key_ranges", self.call("stream_key_ranges_sql", rows, key, spec["type"], spec["cap"]))
            key_ranges = self.call("_key_range_literals", json.dumps(AGGREGATE_KEY_RANGES), spec["type"])
        merge_sql = self.call(
            "stream_aggregate_merge_sql",
            self.this,
            rows_sql,
            None if listed == [] else current_sql,
            group_by,
            columns,
            recompute_all,
            condition,
            key_ranges,
        )
        yield statement("write", merge_sql)
        if cached is not None:
            for sql in self.call("stream_window_uncache_sql", cached):
                yield statement("uncache_window", sql)


def golden_text(model: str, statements: list[Statement]) -> str:
    blocks = [f"-- {model}: {s.scenario} / {s.step}\n{s.sql};\n" for s in statements]
    return "\n".join(blocks)

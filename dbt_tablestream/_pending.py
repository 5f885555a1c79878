"""`tablestream pending` on the local profile: which stream models have work to do, from the Delta
logs with delta-rs, without a JVM.

Whether a stream is pending is the package macro `_stream_pending_reason`'s rule; this module reads
what it needs (the offsets logs, each source's latest version, table id and commits past the
offset) and asks the macro. The stream models, and so those that never ran, come from dbt's
`target/manifest.json` (a model's alias or custom schema); without one it cannot tell, and says so
(PendingUnknownError: the command exits 3) rather than report nothing pending. A logged stream whose
model is not in the manifest is named after its target table.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dbt_tablestream._documents import OffsetsRow, PendingEntry
from dbt_tablestream._macros import render
from dbt_tablestream._offsets import DROPPED, latest_rows, offsets_rows
from dbt_tablestream._warehouse import table_dir
from dbt_tablestream.exceptions import PendingUnknownError


def stream_models(project_dir: Path) -> dict[str, dict[str, str]] | None:
    """The project's stream models by target (`schema.identifier`, lower case), from the manifest
    dbt wrote at its last parse or run; None when there is none."""
    target_path = os.environ.get("DBT_TARGET_PATH", "target")
    manifest = project_dir / target_path / "manifest.json"
    if not manifest.exists():
        return None
    nodes = json.loads(manifest.read_text()).get("nodes", {})
    models: dict[str, dict[str, str]] = {}
    stream_materializations = render("_stream_materializations")
    for node in nodes.values():
        if (
            node.get("resource_type") == "model"
            and node.get("config", {}).get("materialized") in stream_materializations
        ):
            target = f"{node['schema']}.{node.get('alias') or node['name']}".lower()
            models[target] = {"name": node["name"], "schema": node["schema"]}
    return models


def source_state(warehouse: Path, position: OffsetsRow) -> dict[str, Any]:
    """What `_stream_pending_reason` reads of a source: exists, table_id, version, and the commits
    after the stream's offset with their operation."""
    from deltalake import DeltaTable

    source_schema, _, source_name = str(position["source"]).rpartition(".")
    path = table_dir(warehouse, source_schema.rpartition(".")[2], source_name)
    if not DeltaTable.is_deltatable(str(path)):
        return {"exists": False}
    table = DeltaTable(str(path))
    latest = table.version()
    offset = position["to_version"]
    commits = []
    if offset is not None and offset < latest:
        commits = [
            {"version": entry["version"], "operation": entry.get("operation", "")}
            for entry in table.history(latest - offset)
            if "version" in entry
        ]
    return {"exists": True, "table_id": table.metadata().id, "version": latest, "commits": commits}


def pending_streams(project_dir: Path, warehouse: Path, schema: str | None, default_schema: str) -> list[PendingEntry]:
    """Every pending stream model as `pending_streams` reports it (model, selector, stream, source,
    offset_version, source_version, reason), then the stream models that never ran."""
    models = stream_models(project_dir)
    if models is None:
        raise PendingUnknownError(
            f"cannot tell which stream models are pending: {project_dir / os.environ.get('DBT_TARGET_PATH', 'target')}"
            "/manifest.json is missing, so the models that never ran are unknown (dbt has not parsed this project "
            "here). Run `dbt parse` first; until then, treat every stream model as pending."
        )
    schemas = [schema] if schema else sorted({model["schema"] for model in models.values()} | {default_schema})
    pending: list[PendingEntry] = []
    seen: set[str] = set()
    for each_schema in schemas:
        for row in sorted(latest_rows(offsets_rows(warehouse, each_schema)).values(), key=lambda r: r["stream_name"]):
            if row["mode"] == DROPPED:
                continue
            seen.add(str(row["target"]).lower())
            reason = render("_stream_pending_reason", row, source_state(warehouse, row))
            if reason is not None:
                model = models.get(str(row["target"]).lower())
                name = model["name"] if model else str(row["target"]).rpartition(".")[2]
                pending.append(render("_pending_entry", row, name, reason))
    for target, model in sorted(models.items()):
        if target not in seen and (not schema or model["schema"] == schema):
            pending.append(render("_pending_entry", None, model["name"]))
    return pending


def selectors(pending: list[PendingEntry]) -> list[str]:
    """One dbt selector per pending model, in order, each once."""
    return list(dict.fromkeys(entry["selector"] for entry in pending))

"""Stream configs under `meta`, dbt's home for a package's own keys (dbt-databricks warns about
unknown top-level keys, dbt Fusion ignores them): read in a model's config(), a yml `config:`
block and dbt_project.yml (`+meta:`), and refused when set at the top level too, differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from deltalake import DeltaTable

from tests.functional.streams import StreamBench


def merge_model(config: str) -> str:
    return (
        f"{{{{ config(materialized='stream_merge', unique_key='id'{', ' + config if config else ''}) }}}}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )


def soft_deleted(bench: StreamBench, model: str) -> dict[int, bool]:
    rows = DeltaTable(str(bench.target_path(model))).to_pyarrow_table().to_pylist()
    return {row["id"]: row["_deleted"] for row in rows}


def test_delete_mode_under_meta_keeps_a_deleted_row_soft_deleted(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "in_config": merge_model("meta={'delete_mode': 'soft'}"),
            "in_yml": merge_model(""),
            "in_project": merge_model(""),
        },
    )
    models = bench.project.root / "models"
    (models / "in_yml.yml").write_text(
        yaml.safe_dump({"version": 2, "models": [{"name": "in_yml", "config": {"meta": {"delete_mode": "soft"}}}]})
    )
    project = {**bench.project.project, "models": {"probe": {"in_project": {"+meta": {"delete_mode": "soft"}}}}}
    (bench.project.root / "dbt_project.yml").write_text(yaml.safe_dump(project))
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.source().delete("id = 2")
    warnings: list[str] = []

    def collect(event: Any) -> None:
        if event.info.level == "warn":
            warnings.append(f"[{event.info.name}] {event.info.msg}")

    assert bench.invoke("run", callbacks=[collect]).success
    # dbt warns of a config.get of a key set only under meta (GetMetaKeyWarning): none is made.
    assert warnings == []
    for model in ("in_config", "in_yml", "in_project"):
        assert soft_deleted(bench, model) == {1: False, 2: True}, model


def test_a_config_set_under_meta_and_at_the_top_level_differently_is_refused(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "current": merge_model("delete_mode='hard'"),
            "agreeing": merge_model("delete_mode='soft', meta={'delete_mode': 'soft'}"),
        },
    )
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    # The conflict comes with a later change of the model, after its first run wrote the target.
    (bench.project.root / "models" / "current.sql").write_text(
        merge_model("delete_mode='hard', meta={'delete_mode': 'soft'}")
    )
    bench.source().delete("id = 2")
    bench.refused(
        "current",
        "Model current: delete_mode is set twice",
        '"hard" at the top level',
        '"soft" under meta',
        "Nothing was written",
    )
    bench.run_ok("run", "-s", "agreeing")  # the same value both ways is one setting
    assert soft_deleted(bench, "agreeing") == {1: False, 2: True}

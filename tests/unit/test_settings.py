"""The settings: one table of every config's default and accepted values, for every
materialization of the package (`_stream_config_spec`), one validation that fills them
(`_settings_from_configs`), rendered here through the package's own macros as the PySpark API
renders them, with no Spark.

docs/configuration.md is rendered from the table: `TABLESTREAM_UPDATE_GOLDEN=1 pytest tests/unit`
rewrites it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from dbt_tablestream._macros import render
from dbt_tablestream.exceptions import StreamError

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "configuration.md"
SPEC: dict[str, dict[str, Any]] = render("_stream_config_spec")
PROJECT_VARS: dict[str, dict[str, Any]] = render("_stream_project_var_spec")
# stream_aggregate first: a test that takes the last one a config applies to keeps its old one.
STREAM_MATERIALIZATIONS = ("stream_aggregate", "stream_view", "table_stream", "stream_merge")
# The materializations that write a source rather than read a stream.
SOURCE_MATERIALIZATIONS = ("snapshot_mirror", "directory_table")
MATERIALIZATIONS = STREAM_MATERIALIZATIONS + SOURCE_MATERIALIZATIONS
SOURCE_PAGES = {"snapshot_mirror": "snapshot-mirror.md", "directory_table": "volume-streams.md"}
AGGREGATE = {"group_by": "g", "aggregates": {"n": "count(*)", "total": "sum(x)"}}
# The least each materialization needs (the spec's `needed_by`).
NEEDED: dict[str, dict[str, Any]] = {
    "stream_aggregate": AGGREGATE,
    "table_stream": {},
    "stream_merge": {"unique_key": "id"},
    "stream_view": {"unique_key": "id"},
    "snapshot_mirror": {"unique_key": "id"},
    "directory_table": {"location": "landing"},
}


def settings_of(raw: dict[str, Any], materialized: str = "table_stream") -> dict[str, Any]:
    return render("_settings_from_configs", raw, "Model m", materialized)


def applies_to(entry: dict[str, Any]) -> list[str]:
    return [materialized for materialized in MATERIALIZATIONS if render("_setting_applies", entry, materialized)]


def needed(name: str, materialized: str) -> bool:
    return materialized in SPEC[name].get("needed_by", {})


def test_every_config_takes_its_default_from_the_spec() -> None:
    for materialized in MATERIALIZATIONS:
        raw = NEEDED[materialized]
        settings = settings_of(raw, materialized)
        for name, entry in SPEC.items():
            if materialized not in applies_to(entry):
                assert name not in settings, f"{name} does not apply to {materialized}"
                continue
            expected = entry["default"]
            if name == "unique_key":
                expected = ["id"] if materialized in ("stream_merge", "snapshot_mirror", "stream_view") else []
            if name == "location":
                expected = "landing"
            if name == "group_by":
                expected = ["g"]
            if name == "aggregates":
                expected = [
                    {"name": "n", "function": "count", "column": None},
                    {"name": "total", "function": "sum", "column": "x"},
                ]
            assert settings[name] == expected, (materialized, name)
        assert settings["configured"] == list(raw)
    pyspark = render("_settings_from_configs", {}, "Stream s", "pyspark")
    assert pyspark["start_at"] == SPEC["start_at"]["pyspark"]["default"] == "latest"
    assert pyspark["stream_mode"] == SPEC["stream_mode"]["default"]
    # A stream's other readers (the PySpark API, a model's changes(), a model of another
    # materialization reading ref_stream) take what every stream materialization takes.
    takes_all = [name for name, entry in SPEC.items() if set(STREAM_MATERIALIZATIONS) <= set(applies_to(entry))]
    for reader in ("pyspark", None, "table"):
        taken = render("_settings_from_configs", {}, "Stream s", reader)
        assert [name for name in SPEC if name in taken] == takes_all, reader
    assert settings_of({"unique_key": "id"}, "snapshot_mirror")["key_columns"] == ["id"]


@pytest.mark.parametrize("materialized", MATERIALIZATIONS)
def test_a_model_without_a_config_its_materialization_needs_is_refused_with_what_it_takes(materialized: str) -> None:
    """The spec's `needed_by`: one rule for every materialization, with the remedy and what is accepted."""
    names = [name for name in SPEC if needed(name, materialized)]
    assert sorted(names) == sorted(NEEDED[materialized])
    for name in names:
        with pytest.raises(StreamError) as refused:
            settings_of({key: value for key, value in NEEDED[materialized].items() if key != name}, materialized)
        message = str(refused.value)
        what = SPEC[name]["needed_by"][materialized]
        accepted = render("_stream_config_accepted", SPEC[name])
        assert message == (
            f"Model m is a {materialized} model and needs {name}, {what}. It takes {accepted}. Nothing was written."
        )


@pytest.mark.parametrize(
    "name", [name for name, entry in SPEC.items() if entry["kind"] in ("choice", "start_position")]
)
def test_a_value_outside_the_accepted_ones_is_refused_with_them_listed(name: str) -> None:
    entry = SPEC[name]
    materialized = applies_to(entry)[-1]
    raw: dict[str, Any] = {**NEEDED[materialized], name: "bogus"}
    if name == "hard_deletes":
        raw["scd_type"] = 2
    with pytest.raises(StreamError) as refused:
        settings_of(raw, materialized)
    message = str(refused.value)
    assert message.startswith("Model m: ")
    assert f"invalid {name} 'bogus'" in message
    listed = message.split("Accepted values: ", 1)[1]
    for value in entry["accepted"]:
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        assert shown in listed, (name, shown, message)
    # Every accepted value passes (the descriptive ones, like '{version: N}', are checked below).
    for value in entry["accepted"]:
        if isinstance(value, str) and not value.startswith("{") and " " not in value:
            settings_of({**raw, name: value}, materialized)


@pytest.mark.parametrize(
    "name", [name for name, entry in SPEC.items() if entry["kind"] not in ("choice", "start_position")]
)
def test_each_setting_is_checked_by_its_kind(name: str) -> None:
    """One check per kind: a value no kind takes (a mapping) is refused with what the kind takes."""
    entry = SPEC[name]
    materialized = applies_to(entry)[-1]
    with pytest.raises(StreamError) as refused:
        settings_of({**NEEDED[materialized], name: {"a": 1}}, materialized)
    accepted = render("_stream_config_accepted", entry)
    # A config the materialization needs is not said to be optional.
    unset = " (or leave it unset)" if entry["default"] is None and not needed(name, materialized) else ""
    expected = (
        f"{name} is not supported" if entry["kind"] == "unsupported" else f"{name} must be {accepted}{unset}, got "
    )
    assert str(refused.value).startswith(f"Model m: {expected}"), str(refused.value)


def test_values_of_the_wrong_kind_are_refused() -> None:
    refused = {
        "start_at": {"version": -1},
        "max_versions_per_run": 0,
        "spark_net_changes": "yes",
        "drop_carryovers": "no",
        "net_changes": 1.5,
        "stream_name": "a-b",
        "unique_key": [],
    }
    for name, value in refused.items():
        with pytest.raises(StreamError, match=rf"Model m: .*{name}"):
            settings_of({name: value})
    merge_refused = {
        "merge_key_ranges": -1,
        "max_rows_per_file": -5,
        "target_exclude_columns": "id",
        "sequence_by": 3,
        "tombstone_retention": "a week",
        "apply_as_truncates": True,
        "track_history_columns": ["a"],
    }
    for name, value in merge_refused.items():
        with pytest.raises(StreamError, match=rf"Model m: .*{name}"):
            settings_of({"unique_key": "id", "sequence_by": "seq", name: value}, "stream_merge")
    # A whole number is not a boolean (YAML's true is 1 to Jinja), a fraction or a quoted number.
    for value in (True, 2.5, "3"):
        with pytest.raises(StreamError, match=r"Model m: max_versions_per_run must be a whole number"):
            settings_of({"max_versions_per_run": value})
        with pytest.raises(StreamError, match=r"Model m: merge_key_ranges must be a whole number"):
            settings_of({"unique_key": "id", "merge_key_ranges": value}, "stream_merge")
    assert settings_of({"max_versions_per_run": 2})["max_versions_per_run"] == 2
    with pytest.raises(StreamError, match="is a stream_merge model and needs unique_key"):
        settings_of({}, "stream_merge")
    with pytest.raises(StreamError, match=r"invalid start_at 'snapshot'\. Accepted values: latest, earliest"):
        render("_settings_from_configs", {"start_at": "snapshot"}, "Stream s", "pyspark")


def test_a_source_materialization_s_configs_are_checked_by_the_spec() -> None:
    """snapshot_mirror and directory_table take the spec's entries that name them, checked by kind,
    and nothing else: the refusals their hand checks made, with what was given and what is accepted."""
    directory = NEEDED["directory_table"]
    refused = {
        "recursive": ("yes", "recursive must be true or false, got yes."),
        "exclude": (
            {"a": 1},
            "exclude must be a glob pattern, or a list of them, matched against each file's relative path",
        ),
        "include": ([1], "include must be a glob pattern, or a list of them"),
        "location": ("  ", "location must be a folder's path or URI"),
        "file_format": ("parquet", "invalid file_format 'parquet'. Accepted values: delta (every table the package"),
    }
    for name, (value, fragment) in refused.items():
        with pytest.raises(StreamError) as refusal:
            settings_of({**directory, name: value}, "directory_table")
        assert str(refusal.value).startswith("Model m: ") and fragment in str(refusal.value), str(refusal.value)
    settings = settings_of({"location": " landing ", "include": "*.json"}, "directory_table")
    assert (settings["location"], settings["include"], settings["exclude"], settings["recursive"]) == (
        "landing",
        ["*.json"],
        [],
        True,
    )
    assert "unique_key" not in settings and "stream_read" not in settings
    with pytest.raises(
        StreamError, match=r"^Model m: invalid delete_mode 'purge'\. Accepted values: hard, soft, ignore"
    ):
        settings_of({"unique_key": "id", "delete_mode": "purge"}, "snapshot_mirror")
    with pytest.raises(StreamError, match=r"^Model m: unique_key must be a column name or a non-empty list of column"):
        settings_of({"unique_key": ["id", 3]}, "snapshot_mirror")
    mirror = settings_of({"unique_key": ["a", "b"], "delete_mode": "soft"}, "snapshot_mirror")
    assert (mirror["key_columns"], mirror["delete_mode"]) == (["a", "b"], "soft")
    assert "stream_read" not in mirror and "location" not in mirror


def test_stream_merge_chooses_its_strategy_once() -> None:
    assert settings_of({"unique_key": "id"}, "stream_merge")["strategy"] == "net"
    events = settings_of({"unique_key": "id", "sequence_by": "seq"}, "stream_merge")
    assert events["strategy"] == "events"
    assert events["events"]["tombstone_retention"] == SPEC["tombstone_retention"]["default"]
    history = settings_of({"unique_key": "id", "scd_type": 2}, "stream_merge")
    assert history["strategy"] == "history"
    assert history["history"]["hard_deletes"] == SPEC["hard_deletes"]["default"]
    assert "strategy" not in settings_of({"unique_key": "id"})


def test_no_macro_or_python_reads_a_config_but_the_settings() -> None:
    """A default stated twice drifts, and a config read around the one reader would miss `meta`:
    only _model_config_value reads a model's configs (config.get or config.meta_get of a config
    of the spec, any materialization's), and only _raw_stream_configs asks it for the spec's."""
    reads = re.compile(r"config\.(get|meta_get)\(\s*(name\b|['\"](" + "|".join(SPEC) + r")['\"])")
    found = []
    for path in [
        *ROOT.glob("macros/**/*.sql"),
        *ROOT.glob("dbt_tablestream/**/*.py"),
        ROOT / "tests/spark_sql/render.py",
    ]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if reads.search(line) and path.name != "model_config.sql":
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
    assert "var('tablestream_stream_read'" not in "".join(p.read_text() for p in ROOT.glob("macros/**/*.sql"))


def macros_in(path: Path) -> list[tuple[str, str, str]]:
    """(name, arguments, body) of each macro the file defines."""
    found = re.findall(r"{%-?\s*macro\s+(\w+)\((.*?)\)\s*-?%}(.*?){%-?\s*endmacro", path.read_text(), re.S)
    return [(name, arguments, body) for name, arguments, body in found]


def test_no_materialization_validates_a_config_outside_the_spec() -> None:
    """Each config has one default and one check, the spec's: only _raw_stream_configs asks the one
    reader for a model's configs (by the spec's names), every materialization the package defines
    takes the spec's entries that name it through _settings_from_configs, and a refusal left beside
    a materialization's settings (validate_<materialization>.sql), or in a commit protocol's
    `check` step, depends on the query or the stream, never on a setting alone: those are
    _settings_from_configs's, the protocol's among them (its `settings_check` step)."""
    paths = list(ROOT.glob("macros/**/*.sql"))
    readers = [name for path in paths for name, _, body in macros_in(path) if "_model_config_value(" in body]
    assert readers == ["_raw_stream_configs"]
    text = "".join(path.read_text() for path in paths)
    defined = set(re.findall(r"{%-?\s*materialization\s+(\w+),", text))
    assert defined == set(MATERIALIZATIONS)
    for materialized in SOURCE_MATERIALIZATIONS:
        assert re.search(rf"_settings_from_configs\((?:[^()]|\([^()]*\))*'{materialized}'\)", text), materialized
    assert "_stream_settings()" in text
    for path in ROOT.glob("macros/materializations/validate_*.sql"):
        for name, arguments, body in macros_in(path):
            if "raise_compiler_error" in body:
                assert re.search(r"\b(columns|bad_keys_sql)\b", arguments), f"{path.name}: {name}({arguments})"
    # Each protocol is a file of macros/protocols/ beside commit_protocol.sql (_commit_protocols).
    protocols = [path for path in (ROOT / "macros" / "protocols").glob("*.sql") if path.name != "commit_protocol.sql"]
    assert len(protocols) >= 2
    for path in protocols:
        for name, _, body in macros_in(path):
            if name != f"_{path.stem}_check":
                continue
            conditions = re.findall(r"{%-?\s*if (.*?)-?%}\s*{{\s*exceptions\.raise_compiler_error", body, re.S)
            assert [each for each in conditions if not re.search(r"\bstream\.|output_columns", each)] == [], name


def test_every_project_var_is_read_through_its_spec_entry() -> None:
    """One default and one check per project var: only _stream_project_var and _model_config_value
    (model_config.sql) call var(), and every var they are asked for is in the spec."""
    macros = {path: path.read_text() for path in ROOT.glob("macros/**/*.sql")}
    direct = [str(path.relative_to(ROOT)) for path, text in macros.items() if re.search(r"\bvar\(", text)]
    assert direct == ["macros/materializations/model_config.sql"]
    asked = set(re.findall(r"_stream_project_var\('(\w+)'\)", "".join(macros.values())))
    assert asked == set(PROJECT_VARS)


@pytest.mark.parametrize(
    "name,value,fragment",
    [
        ("tablestream_commit_protocol", "sometimes", "invalid tablestream_commit_protocol 'sometimes' (a project var"),
        ("tablestream_compact_every", -1, "tablestream_compact_every (a project var; nothing was written) must be"),
        ("tablestream_test_hooks", "yes", "tablestream_test_hooks (a project var; nothing was written) must be"),
    ],
)
def test_a_project_var_outside_what_it_accepts_is_refused_with_what_it_accepts(
    name: str, value: Any, fragment: str
) -> None:
    with pytest.raises(StreamError) as refused:
        render("_config_checked", name, value, PROJECT_VARS[name], "dbt_tablestream")
    assert fragment in str(refused.value)
    assert render("_stream_config_accepted", PROJECT_VARS[name]) in str(refused.value)


HAND_WRITTEN = (
    "<!-- Above: rendered from _stream_config_spec (TABLESTREAM_UPDATE_GOLDEN=1 pytest tests/unit rewrites it). "
    "Below: written by hand, with a section per config in the spec's order. -->"
)


def config_reference() -> str:
    """docs/configuration.md's rendered part: the spec as one table, and the PySpark API's values."""

    def shown(value: Any) -> str:
        if value is None:
            return "unset"
        if isinstance(value, bool):
            return f"`{str(value).lower()}`"
        return f"`{value}`"

    lines = [
        "# Configuration",
        "",
        "Every config of the package's materializations (the stream models `table_stream`,",
        "`stream_merge` and `stream_aggregate`, and `snapshot_mirror` and `directory_table`, which write",
        "a source): the materializations that take it, its kind, its accepted values and its default.",
        "This table is rendered from `_stream_config_spec`",
        "(macros/materializations/settings_spec.sql), the one place the package states them; the",
        "validation (one check per kind, settings_kinds.sql), its messages and this table all read it. A",
        "value outside these is refused before any SQL runs, with the accepted values listed. Below the",
        "table: where configs go, the project vars, what each config does and its counterpart in",
        "Snowflake, Databricks, dbt or Spark. Besides these, a stream model takes dbt's `partition_by`,",
        "`tblproperties`, `persist_docs`, `contract`, `grants`, `pre_hook` and `post_hook`.",
        "",
        "## Every config",
        "",
        "| config | applies to | kind | accepted | default |",
        "|---|---|---|---|---|",
    ]
    for name, entry in SPEC.items():
        accepted = render("_stream_config_accepted", entry).replace("|", "\\|")
        readers = [f"`{each}`" for each in applies_to(entry)] + (
            ["a model's `changes()`"] if entry.get("change_query") else []
        )
        kind = entry["kind"].replace("_", " ")
        lines.append(
            f"| [`{name}`](#{name}) | {', '.join(readers)} | {kind} | {accepted} | {shown(entry['default'])} |"
        )
    pyspark = SPEC["start_at"]["pyspark"]
    lines += [
        "",
        "`open_stream(mode=..., start_at=...)`, the PySpark API, takes `stream_mode` as `mode` and",
        f"`start_at`: {render('_stream_config_accepted', pyspark)}; default {shown(pyspark['default'])}.",
        "",
    ]
    for materialized in SOURCE_MATERIALIZATIONS:
        lines += [
            f"## `{materialized}`",
            "",
            f"A `{materialized}` ([{SOURCE_PAGES[materialized]}]({SOURCE_PAGES[materialized]})) writes a source rather",
            "than reads a stream, so it takes only the configs that name it, checked as a stream model's are:",
            "",
            "| config | kind | accepted | default |",
            "|---|---|---|---|",
        ]
        for name, entry in SPEC.items():
            if materialized in applies_to(entry):
                accepted = render("_stream_config_accepted", entry).replace("|", "\\|")
                default = "required" if needed(name, materialized) else shown(entry["default"])
                lines.append(f"| [`{name}`](#{name}) | {entry['kind'].replace('_', ' ')} | {accepted} | {default} |")
        lines.append("")
    lines += [
        "## Every project var",
        "",
        "Rendered from `_stream_project_var_spec` (settings_spec.sql), read only through",
        "`_stream_project_var` and checked as a config is; `tablestream_stream_read` is `stream_read`'s",
        "project-wide default, in the table above.",
        "",
        "| project var | kind | accepted | default |",
        "|---|---|---|---|",
    ]
    for name, entry in PROJECT_VARS.items():
        accepted = render("_stream_config_accepted", entry).replace("|", "\\|")
        lines.append(f"| `{name}` | {entry['kind'].replace('_', ' ')} | {accepted} | {shown(entry['default'])} |")
    lines += [
        "",
        HAND_WRITTEN,
        "",
        "",
    ]
    return "\n".join(lines)


def test_a_renamed_value_is_refused_with_its_new_name() -> None:
    renamed = {name: entry["renamed"] for name, entry in SPEC.items() if "renamed" in entry}
    assert renamed == {"stream_read": {"changes": "changelog"}}
    for materialized in STREAM_MATERIALIZATIONS:
        with pytest.raises(StreamError) as refused:
            settings_of({"unique_key": "id", "stream_read": "changes"}, materialized)
        assert str(refused.value).startswith("Model m: stream_read 'changes' was renamed to 'changelog' in 0.2.0")
    assert settings_of({"stream_read": "changelog"})["stream_read"] == "changelog"


@pytest.mark.parametrize("materialized", MATERIALIZATIONS)
def test_each_materialization_documents_every_config_it_takes(materialized: str) -> None:
    described = (ROOT / "macros" / "materializations" / f"{materialized}.yml").read_text()
    takes = [name for name, entry in SPEC.items() if materialized in applies_to(entry)]
    assert [name for name in takes if f"`{name}`" not in described] == []


def test_the_config_reference_is_rendered_from_the_spec() -> None:
    rendered = config_reference()
    page = REFERENCE.read_text()
    assert HAND_WRITTEN in page, f"docs/configuration.md lost its line {HAND_WRITTEN!r}"
    hand = page.split(HAND_WRITTEN, 1)[1]
    if os.environ.get("TABLESTREAM_UPDATE_GOLDEN"):
        REFERENCE.write_text(rendered + hand.lstrip("\n"))
        page = REFERENCE.read_text()
    assert page.startswith(rendered), (
        "run TABLESTREAM_UPDATE_GOLDEN=1 pytest tests/unit to rewrite docs/configuration.md's table"
    )
    # Every config has its section below the table, in the spec's order, and no section names a
    # config the spec lacks.
    assert re.findall(r"^### `(\w+)`$", hand, re.M) == list(SPEC)
    for section in re.split(r"^### ", hand, flags=re.M)[1:]:
        assert "Counterpart:" in section, section.splitlines()[0]


def test_an_aggregate_of_a_quoted_column_names_the_column_as_spark_reads_it() -> None:
    """A doubled backtick inside a quoted column is one backtick (docs/architecture.md, "Quoting")."""
    aggregates = {"total": "sum(`a``b é`)", "n": "count( `x` )", "m": "max(y)"}
    settings = settings_of({"group_by": "g", "aggregates": aggregates}, "stream_aggregate")
    assert settings["aggregates"] == [
        {"name": "total", "function": "sum", "column": "a`b é"},
        {"name": "n", "function": "count", "column": "x"},
        {"name": "m", "function": "max", "column": "y"},
    ]
    with pytest.raises(StreamError, match="is not an aggregate"):
        settings_of({"group_by": "g", "aggregates": {"bad": "sum(`a`b`)"}}, "stream_aggregate")

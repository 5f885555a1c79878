"""The documentation does not rot: the site builds with every link and anchor resolved, its home
page lists every page, the README stays a short guide, and every file it links exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert (tmp_path / "site" / "configuration" / "index.html").exists()


def test_every_docs_page_is_in_the_site_navigation() -> None:
    navigation = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    assert [page for page in pages if page not in navigation] == []


def test_the_docs_home_page_links_every_page() -> None:
    linked = set(re.findall(r"\]\(([\w.-]+\.md)(?:#[^)]*)?\)", (ROOT / "docs" / "index.md").read_text()))
    pages = {path.name for path in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert sorted(pages - linked) == [], "docs/index.md's table of pages lacks these"


def test_the_readme_is_short_and_its_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 400
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if "://" not in target]
    assert local, "the README links no file"
    assert [target for target in local if not (ROOT / target).exists()] == []


ARCHITECTURE = ROOT / "docs" / "architecture.md"
# Names docs/architecture.md gives in backquotes that are not the package's: dbt's, dbt-spark's,
# Delta's and Spark's names, columns and values, and the example project's models.
OTHER_NAMES = {
    *("__change_type", "__commit_timestamp", "__commit_version", "__tablestream_after_delete"),
    *("_change_data", "_commit_timestamp", "_commit_version", "_metadata", "update_postimage", "update_preimage"),
    *("dbt_is_deleted", "dbt_scd_id", "dbt_updated_at", "dbt_valid_from", "dbt_valid_to", "new_record"),
    *("apply_grants", "comment_clause", "dbt_spark_get_incremental_sql", "get_assert_columns_equivalent"),
    *("persist_docs", "server_side_parameters", "http_path", "emulate_sql_warehouse", "metastore_db"),
    *("from_json", "table_changes", "append_only", "delta_log", "skip_to_latest", "orders_current"),
    *("spark__", "default__", "databricks__stream_write_sql", "read_version", "stream_name"),
}


def _repository_names() -> set[str]:
    """What a backquoted name in the doc may be: a macro, a protocol step, a config, a project
    var, a key of the stream value or a keyword argument of a macro, a Python function or module,
    or a test."""
    sql = "".join(path.read_text() for path in (ROOT / "macros").rglob("*.sql"))
    python = "".join(
        path.read_text() for path in [*(ROOT / "dbt_tablestream").rglob("*.py"), *(ROOT / "dbt").rglob("*.py")]
    )
    names = set(re.findall(r"{%-?\s*(?:macro|materialization|test)\s+(\w+)", sql))
    names |= {step for name in names for step in re.findall(r"^_(?:marked|reapply)_(\w+)$", name)}
    names |= set(re.findall(r"var\('(\w+)'", sql))
    names |= set(re.findall(r"'(\w+)':", sql)) | set(re.findall(r"\b(\w+)=", sql))
    names |= set(re.findall(r"^\s*(?:def|class)\s+(\w+)", python, re.M))
    names |= {path.stem for path in (ROOT / "dbt_tablestream").rglob("*.py")}
    tests = "".join(path.read_text() for path in (ROOT / "tests").rglob("test_*.py"))
    names |= set(re.findall(r"^def (test_\w+)", tests, re.M))
    return names


def test_every_file_and_macro_the_architecture_doc_names_exists() -> None:
    """docs/architecture.md names files and macros in backquotes; each must exist, so a renamed or
    removed one fails here. Code comments cite the doc's sections by name; each must exist."""
    text = ARCHITECTURE.read_text()
    tokens = set(re.findall(r"`([^`\n]+)`", text))
    files = {
        token
        for token in tokens
        if re.fullmatch(
            r"[\w./-]+\.(?:sql|py|yml|md|toml)|(?:macros|dbt_tablestream|dbt|tests|bench|docs)/[\w./-]*", token
        )
    }
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    folders = {str(Path(path).parent) + "/" for path in tracked} | {
        str(parent) + "/" for path in tracked for parent in Path(path).parents
    }
    missing = [
        token
        for token in files
        if not (
            token in tracked or token in folders if "/" in token else token in {Path(path).name for path in tracked}
        )
    ]
    assert sorted(missing) == []
    names = {token for token in tokens if re.fullmatch(r"_?_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+_?_?|[a-z]+__", token)}
    assert sorted(names - _repository_names() - OTHER_NAMES) == []
    sections = set(re.findall(r"(?m)^## (.+)$", text))
    cited = [
        f"{path.relative_to(ROOT)}: {section}"
        for path in [
            *(ROOT / "macros").rglob("*.sql"),
            *(ROOT / "dbt_tablestream").rglob("*.py"),
            *(ROOT / "dbt").rglob("*.py"),
        ]
        for section in re.findall(r'architecture\.md, "([^"]+)"', re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text()))
        if section not in sections
    ]
    assert cited == []


def test_every_materialization_has_its_flow_diagram() -> None:
    """docs/flows.md draws one run of each materialization the package defines, under its name."""
    materializations = set()
    for path in (ROOT / "macros").rglob("*.sql"):
        materializations |= set(re.findall(r"{%-?\s*materialization\s+(\w+),", path.read_text()))
    page = (ROOT / "docs" / "flows.md").read_text()
    drawn = set(re.findall(r"^## (\w+)\n\n```mermaid\nflowchart", page, re.M))
    assert materializations and sorted(materializations - drawn) == []

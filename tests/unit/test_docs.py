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

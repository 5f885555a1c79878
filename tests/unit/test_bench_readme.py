"""bench/README.md's tables of measured figures are rendered from bench/results/*.json by
bench/render_readme.py: a rerun changes its JSON, and `python bench/render_readme.py` the tables."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def renderer() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import render_readme
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return render_readme


def test_the_readme_is_its_rendering(renderer: ModuleType) -> None:
    readme = (ROOT / "bench" / "README.md").read_text()
    assert renderer.render(readme) == readme, "run `.venv/bin/python bench/render_readme.py` to render bench/README.md"


def test_each_renderer_has_one_region(renderer: ModuleType) -> None:
    regions = renderer.regions((ROOT / "bench" / "README.md").read_text())
    assert sorted(regions) == sorted(renderer.RENDERERS), "a region without a renderer, or a renderer without a region"
    for files in regions:
        for name in files:
            assert (ROOT / "bench" / "results" / name).is_file(), name


def test_a_changed_result_changes_its_table(renderer: ModuleType, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    year = json.loads((ROOT / "bench" / "results" / "year.json").read_text())
    year["year"]["noop_s"] = 6.38
    (results / "year.json").write_text(json.dumps(year))
    readme = (
        "before\n<!-- rendered from bench/results/year.json by bench/render_readme.py -->\nstale\n<!-- end -->\nafter\n"
    )
    rendered = renderer.render(readme, results)
    assert "stale" not in rendered
    assert "| no-op run | 3.19 s | 6.38 s | 2.00 |" in rendered
    assert rendered.startswith("before\n") and rendered.endswith("<!-- end -->\nafter\n")


def test_a_region_without_a_renderer_is_refused(renderer: ModuleType) -> None:
    readme = "<!-- rendered from bench/results/nothing.json by bench/render_readme.py -->\n<!-- end -->\n"
    with pytest.raises(KeyError, match=r"no renderer for nothing\.json"):
        renderer.render(readme)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_the_docs_cite_sections_the_bench_readme_has() -> None:
    """README.md and docs/ cite a measured figure by its bench/README.md section, not by the
    figure: each cited section (a link's anchor, or a section named in quotes) exists."""
    headings = re.findall(r"^#+ (.+)$", (ROOT / "bench" / "README.md").read_text(), re.M)
    anchors = {github_anchor(heading) for heading in headings}
    titles = [heading.replace("`", "") for heading in headings]
    readme = (ROOT / "README.md").read_text()
    linked = re.findall(r"\]\(bench/README\.md#([^)]+)\)", readme)
    assert linked, "README.md links no bench/README.md section"
    assert sorted(set(linked) - anchors) == []
    pages = [readme, *(path.read_text() for path in (ROOT / "docs").glob("*.md"))]
    cited = {
        " ".join(name.split())
        for page in pages
        for name in re.findall(r"bench/README\.md`?,?\s*\(?\[?\"([^\"]+)\"", page)
    }
    assert cited
    assert sorted(name for name in cited if not any(title.startswith(name) for title in titles)) == []

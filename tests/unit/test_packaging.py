"""The distribution as the package index shows it: the README as long description with every link
pointing at a file of the repository at the version's tag, and a wheel that builds without
setuptools warnings and carries every file of the Python packages and the dbt package's macros."""

from __future__ import annotations

import email
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from dbt_tablestream import __version__

ROOT = Path(__file__).resolve().parents[2]
# What a build reads: the distribution's files and the trees its packages come from.
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md")
PACKAGE_TREES = ("dbt_tablestream", "dbt", "macros")
# Link destinations as CommonMark writes them: inline links and images, reference definitions, HTML.
DESTINATION = re.compile(
    r"\]\(\s*(?:<([^>\n]+)>|([^)\s]+))"
    r"|^ {0,3}\[[^\]\n]+\]:[ \t]*(?:<([^>\n]+)>|(\S+))"
    r"|\b(?:href|src)=[\"']([^\"']+)",
    re.M,
)


def load_setup() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tablestream_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def destinations(markdown: str) -> list[str]:
    return [next(group for group in match.groups() if group) for match in DESTINATION.finditer(markdown)]


def prose(markdown: str) -> str:
    """`markdown` without its fenced code blocks."""
    return re.sub(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[`~]*[ \t]*$", "", markdown, flags=re.M | re.S)


def anchors(markdown: str) -> set[str]:
    """The ids GitHub gives a Markdown file's headings."""
    headings = re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", prose(markdown), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_the_long_description_links_only_to_files_of_the_repository_at_the_tag() -> None:
    setup = load_setup()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    described = setup.long_description(__version__)
    links = destinations(prose(described))
    assert [link for link in links if "://" not in link] == [], "relative links left"

    release = re.compile(rf"{re.escape(setup.REPOSITORY)}/(?:blob|raw)/v{re.escape(__version__)}/([^#]+)(?:#(.*))?")
    into_repository = [link for link in links if link.startswith(setup.REPOSITORY)]
    relative_in_readme = [link for link in destinations(prose(readme)) if "://" not in link]
    assert relative_in_readme, "the README links no file of the repository"
    assert len(into_repository) == len(relative_in_readme)
    for link in into_repository:
        matched = release.fullmatch(link)
        assert matched, f"{link} is not a file at tag v{__version__}"
        path, anchor = ROOT / matched[1], matched[2]
        assert path.exists(), f"{link}: {matched[1]} is not in the repository"
        if anchor:
            assert anchor in anchors(path.read_text(encoding="utf-8")), f"{link}: no heading {anchor!r}"


def test_absolute_links_rewrites_every_kind_of_link_and_leaves_code_alone() -> None:
    setup = load_setup()
    tag = f"{setup.REPOSITORY}/blob/v1.2.3"
    markdown = (
        'See [the\ndocs](docs/index.md#start) and [`x`](<docs/a b.md> "title"), ![chart](bench/c.png),\n'
        "[top](#install), [site](https://example.com/a.md), [mail](mailto:a@example.com), [r][ref].\n"
        '<a href="CONTRIBUTING.md">c</a> <img src="/bench/d.png">\n'
        "\n"
        "[ref]: LICENSE\n"
        "```markdown\n"
        "[kept](docs/index.md)\n"
        "```\n"
        "[after](CHANGELOG.md)\n"
    )
    assert setup.absolute_links(markdown, "1.2.3") == (
        f'See [the\ndocs]({tag}/docs/index.md#start) and [`x`](<{tag}/docs/a b.md> "title"), '
        f"![chart]({setup.REPOSITORY}/raw/v1.2.3/bench/c.png),\n"
        f"[top]({tag}/README.md#install), [site](https://example.com/a.md), [mail](mailto:a@example.com), [r][ref].\n"
        f'<a href="{tag}/CONTRIBUTING.md">c</a> <img src="{setup.REPOSITORY}/raw/v1.2.3/bench/d.png">\n'
        "\n"
        f"[ref]: {tag}/LICENSE\n"
        "```markdown\n"
        "[kept](docs/index.md)\n"
        "```\n"
        f"[after]({tag}/CHANGELOG.md)\n"
    )


def copy_of_the_sources(destination: Path) -> Path:
    """The files a build reads, without this checkout's build/, egg-info or caches."""
    for name in BUILD_INPUTS:
        shutil.copy(ROOT / name, destination / name)
    for tree in PACKAGE_TREES:
        shutil.copytree(ROOT / tree, destination / tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def source_files(tree: str, pattern: str = "**/*") -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / tree).glob(pattern)
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    sources = copy_of_the_sources(tmp_path_factory.mktemp("sources"))
    out = tmp_path_factory.mktemp("wheel")
    # Without bytecode, distutils says so ("byte-compiling is disabled"): not the package's warning.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--verbose",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(out),
            str(sources),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    output = built.stdout + built.stderr
    assert built.returncode == 0, output[-5000:]
    (wheel,) = out.glob("*.whl")
    return wheel, output


def test_the_wheel_builds_without_warnings(built_wheel: tuple[Path, str]) -> None:
    _, output = built_wheel
    assert [line for line in output.splitlines() if re.search("warn|would be ignored", line, re.I)] == []


def test_the_wheel_has_every_file_of_the_packages_and_the_macros(built_wheel: tuple[Path, str]) -> None:
    wheel, _ = built_wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = (
        source_files("dbt_tablestream")
        | source_files("dbt")
        | {f"dbt_tablestream/_dbt_macros/{path.removeprefix('macros/')}" for path in source_files("macros", "*/*.sql")}
    )
    assert sorted(expected - names) == []
    assert {name.split("/")[0] for name in names} == {
        "dbt",
        "dbt_tablestream",
        f"dbt_tablestream-{__version__}.dist-info",
    }


def test_the_wheel_metadata_is_the_package_index_page(built_wheel: tuple[Path, str]) -> None:
    wheel, _ = built_wheel
    setup = load_setup()
    with zipfile.ZipFile(wheel) as archive:
        metadata = email.message_from_bytes(archive.read(f"dbt_tablestream-{__version__}.dist-info/METADATA"))
        entry_points = archive.read(f"dbt_tablestream-{__version__}.dist-info/entry_points.txt").decode()
    assert metadata["Version"] == __version__
    assert metadata["License-Expression"] == "Apache-2.0"
    assert not [c for c in metadata.get_all("Classifier", []) if c.startswith("License ::")]
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert str(metadata.get_payload()).strip() == setup.long_description(__version__).strip()
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL", []))
    assert urls == setup.project_urls(__version__)
    assert "tablestream = dbt_tablestream.cli:console_main" in entry_points
    # The light install brings no local engine; the `local` extra does.
    required = [line.partition(";") for line in metadata.get_all("Requires-Dist", [])]
    names = [
        (re.split(r"[\[<>=! ]", requirement, maxsplit=1)[0], marker.strip()) for requirement, _, marker in required
    ]
    light = {name for name, marker in names if not marker}
    local = {name for name, marker in names if marker == 'extra == "local"'}
    assert {"pyspark", "delta-spark", "dbt-spark"} <= local
    assert light & local == set()
    assert "dbt-core" in light

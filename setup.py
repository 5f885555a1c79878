"""What pyproject.toml cannot say: the long description and the project URLs are made at build time
from one repository URL. The package index shows the README without the repository beside it, so
its relative links (docs/*.md, CONTRIBUTING.md, ...) become links into the repository at the
version's tag; the version is the one setuptools reads as pyproject.toml says."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from setuptools import setup
from setuptools.dist import Distribution

REPOSITORY = "https://github.com/<owner>/dbt-tablestream"
README = Path(__file__).resolve().with_name("README.md")

# A link's or an image's destination: `[text](dest "title")`, `![alt](dest)` (the text may hold
# one level of brackets and run over lines), a reference definition `[label]: dest`, or an HTML
# `href="dest"` / `src="dest"`.
_INLINE = re.compile(r"(?P<bang>!?)(?P<text>\[(?:[^\[\]]|\[[^\[\]]*\])*\])\((?P<space>\s*)(?P<dest><[^>\n]*>|[^)\s]+)")
_DEFINITION = re.compile(r"^(?P<label> {0,3}\[[^\]\n]+\]:[ \t]*)(?P<dest><[^>\n]*>|\S+)", re.M)
_HTML = re.compile(r"""(?P<attr>\b(?P<name>href|src)=["'])(?P<dest>[^"']+)""")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _absolute(destination: str, version: str, *, image: bool) -> str:
    bracketed = destination.startswith("<") and destination.endswith(">")
    target = destination[1:-1] if bracketed else destination
    if not target or _SCHEME.match(target) or target.startswith("//"):
        return destination
    if target.startswith("#"):
        target = README.name + target
    # blob/ is the page GitHub renders; an image needs the file itself
    url = f"{REPOSITORY}/{'raw' if image else 'blob'}/v{version}/{target.lstrip('/')}"
    return f"<{url}>" if bracketed else url


def absolute_links(markdown: str, version: str) -> str:
    """`markdown` with every relative link and image pointing into the repository at tag `v{version}`;
    fenced code blocks are left as they are."""

    def inline(match: re.Match[str]) -> str:
        image = match["bang"] == "!"
        dest = _absolute(match["dest"], version, image=image)
        return f"{match['bang']}{match['text']}({match['space']}{dest}"

    def definition(match: re.Match[str]) -> str:
        return match["label"] + _absolute(match["dest"], version, image=False)

    def html(match: re.Match[str]) -> str:
        return match["attr"] + _absolute(match["dest"], version, image=match["name"] == "src")

    def prose(text: str) -> str:
        return _HTML.sub(html, _DEFINITION.sub(definition, _INLINE.sub(inline, text)))

    out: list[str] = []
    chunk: list[str] = []
    fence = ""
    for line in markdown.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if not fence and opened:
            out.append(prose("".join(chunk)))
            chunk = []
            fence = opened[1]
            out.append(line)
        elif fence:
            out.append(line)
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = ""
        else:
            chunk.append(line)
    out.append(prose("".join(chunk)))
    return "".join(out)


def long_description(version: str) -> str:
    return absolute_links(README.read_text(encoding="utf-8"), version)


def project_urls(version: str) -> dict[str, str]:
    release = f"{REPOSITORY}/blob/v{version}"
    return {
        "Homepage": REPOSITORY,
        "Repository": REPOSITORY,
        "Documentation": f"{release}/docs/index.md",
        "Changelog": f"{release}/CHANGELOG.md",
        "Issues": f"{REPOSITORY}/issues",
    }


class _Distribution(Distribution):
    """Fills the version-bound fields once setuptools has read pyproject.toml and with it the version.
    setuptools wants a dynamic readme set before it reads pyproject.toml, hence the plain README given
    to setup() and replaced here."""

    def parse_config_files(
        self, filenames: Iterable[str | os.PathLike[str]] | None = None, ignore_option_errors: bool = False
    ) -> None:
        super().parse_config_files(filenames, ignore_option_errors)
        version = self.metadata.get_version()
        self.metadata.long_description = long_description(version)
        self.metadata.project_urls = project_urls(version)


# setuptools runs this file as __main__; tests/unit/test_packaging.py imports it for its functions.
if __name__ == "__main__":
    setup(
        distclass=_Distribution,
        long_description=README.read_text(encoding="utf-8"),
        long_description_content_type="text/markdown",
    )

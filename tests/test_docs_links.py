"""The README is the front door and `docs/` the guide: every relative link and `#anchor` in them
(and in bench/README.md) leads somewhere, as GitHub renders them, and the README stays short."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def documents() -> list[Path]:
    """The pages whose links must resolve: the README, the guide, the benchmarks' README."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "README.md"]


def prose_lines(path: Path, code_spans: bool = False) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks, their code spans removed
    unless ``code_spans``: a link quoted in code (a page kwdocs wrote, shown as an example) is no
    link of this page, but a heading's code is part of its anchor."""
    lines, fence = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append((number, line if code_spans else CODE_SPAN.sub("", line)))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lowercased, punctuation but `-` and `_` dropped,
    spaces as `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)     # a link in a heading: its words
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in ``path``, a repeated one as GitHub numbers it (`x`, `x-1` ...)."""
    found: set[str] = set()
    for _, line in prose_lines(path, code_spans=True):
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            name, count = base, 0
            while name in found:
                count += 1
                name = f"{base}-{count}"
            found.add(name)
    return found


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """One line per relative link or anchor of ``path`` that leads nowhere (named from ``root``)."""
    broken = []
    for number, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):     # https:, mailto: ...
                continue
            file, _, anchor = target.partition("#")
            where = (path.parent / file).resolve() if file else path
            place = f"{path.relative_to(root)}:{number}: {target}"
            if not where.exists():
                broken.append(f"{place}: no such file")
            elif anchor and (where.suffix != ".md" or anchor not in anchors(where)):
                broken.append(f"{place}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("path", documents(), ids=lambda path: str(path.relative_to(REPO)))
def test_every_link_resolves(path):
    assert broken_links(path) == []


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines, more than {README_MAX_LINES}"


def test_every_guide_page_is_linked_from_the_readme_and_the_guide_index():
    """A page of the guide nobody links is a page nobody finds."""
    linked = {(REPO / target.partition("#")[0]).resolve()
              for _, line in prose_lines(REPO / "README.md") for target in LINK.findall(line)}
    listed = {(REPO / "docs" / target.partition("#")[0]).resolve()
              for _, line in prose_lines(REPO / "docs" / "README.md") for target in LINK.findall(line)}
    for page in sorted((REPO / "docs").glob("*.md")):
        assert page.resolve() in linked, f"README.md does not link {page.relative_to(REPO)}"
        if page.name != "README.md":
            assert page.resolve() in listed, f"docs/README.md does not link {page.relative_to(REPO)}"


def test_the_checker_sees_a_broken_anchor(tmp_path):
    """The checker itself: a missing file, a missing heading and a link in code."""
    page = tmp_path / "page.md"
    page.write_text("# Kwdocs' pages: `a_b` & more\n\n[ok](#kwdocs-pages-a_b--more) [gone](#nope)\n"
                    "[file](missing.md) `[code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n")
    assert anchors(page) == {"kwdocs-pages-a_b--more"}
    assert [line.split(": ", 1)[1] for line in broken_links(page, tmp_path)] == [
        "#nope: no heading with that anchor", "missing.md: no such file"]


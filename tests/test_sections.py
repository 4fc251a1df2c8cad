"""The docs page's sections: each one model function and one template block, and the keyword
page's map of which section shows which name, read from the same model."""
from __future__ import annotations

import re
from pathlib import Path

from kwdocs.pages import model
from tests.conftest import run_kwdocs

LICENCE_BLOCK = """{% extends "shipped/file_docs.md.j2" %}
{% block licence %}
Licensed under {{ licence | code }}.

{% endblock %}
"""


def _headings(page: str) -> list[str]:
    return re.findall(r"^## (.+)$", page.split("```", 1)[0] + page.rsplit("```", 1)[-1], re.MULTILINE)


def _map_line(kw_page: str, name: str) -> str:
    """The sections the keyword page's map names for ``name`` ("" if it is not listed)."""
    section_map = kw_page.split("## Keyword → Section Map\n", 1)[1]
    found = re.search(rf"^- \*\*`{re.escape(name)}`\*\*: (.*)$", section_map, re.MULTILINE)
    return found.group(1) if found else ""


def test_a_section_added_through_the_seam_is_on_the_page_in_its_place(tmp_path: Path):
    """A new section is a model function registered after File Purpose plus its block in an
    override templates folder: the page shows it there, and the keyword map knows its names."""
    src, out, templates = tmp_path / "src", tmp_path / "out", tmp_path / "templates"
    src.mkdir()
    templates.mkdir()
    (src / "tool.py").write_text('"""A tool."""\n# SPDX-License-Identifier: MIT\n\n\ndef MIT():\n    return 1\n')
    (src / "plain.py").write_text("X = 1\n")
    (templates / "file_docs.md.j2").write_text(LICENCE_BLOCK)
    (src / "pyproject.toml").write_text(f'[tool.kwdocs]\ntemplates = "{templates.as_posix()}"\n')

    def licence(given: model.DocsInput) -> model.Section | None:
        text = Path(src / given.path).read_text()
        found = re.search(r"SPDX-License-Identifier: (\S+)", text)
        return model.Section({"licence": found.group(1)}, given.shows(found.group(1))) if found else None

    saved = list(model.SECTIONS)
    try:
        model.section("licence", "Licence", after="purpose")(licence)
        assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    finally:
        model.SECTIONS[:] = saved
    page = (out / "tool.py_docs.md").read_text()
    headings = _headings(page)
    assert headings[headings.index("File Purpose") + 1] == "Licence", headings
    assert "## Licence\n\nLicensed under `MIT`.\n\n## Original Source\n" in page
    assert "Licence" in _map_line((out / "tool.py_kw.md").read_text(), "MIT")
    # a file without one leaves it out, and the shipped sections stay as they were
    plain = (out / "plain.py_docs.md").read_text()
    assert "Licence" not in _headings(plain)
    assert _headings(plain)[:3] == ["File Metadata", "File Purpose", "Original Source"]


def test_the_section_map_names_sections_by_the_names_they_show(tmp_path: Path):
    """Escaped prose (``\\_inner\\_step``) shows ``_inner_step``, not ``_inner`` and ``_step``; a
    heading's label (``**Size**``) is not the keyword ``Size``."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "m.py").write_text('"""Runs _inner_step on every batch."""\n\n\ndef _inner_step():\n    return 1\n\n\n'
                              'def _step():\n    return 2\n\n\ndef _inner():\n    return 3\n\n\n'
                              'class Size:\n    pass\n')
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    docs = (out / "m.py_docs.md").read_text()
    purpose = docs.split("## File Purpose\n", 1)[1].split("\n## ", 1)[0]
    assert "\\_inner\\_step" in purpose and "**Size**" in docs      # what the old search was misled by
    kw = (out / "m.py_kw.md").read_text()
    assert "File Purpose" in _map_line(kw, "_inner_step")
    assert "File Purpose" not in _map_line(kw, "_step") and "File Purpose" not in _map_line(kw, "_inner")
    assert _map_line(kw, "Size") and "File Metadata" not in _map_line(kw, "Size")


def test_testing_and_usage_shows_only_the_parts_with_something_to_list(tmp_path: Path):
    """A file imported by another but by no test: Used By, and no Testing part saying so."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "core.py").write_text("def f():\n    return 1\n")
    (src / "app.py").write_text("from core import f\n\nprint(f())\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    usage = (out / "core.py_docs.md").read_text().split("## Testing & Usage\n", 1)[1].split("\n## ", 1)[0]
    assert "### Used By" in usage and "app.py" in usage
    assert "### Testing" not in usage and "No test file" not in usage, usage


def test_a_section_with_a_markdown_block_only_is_on_the_html_page_too(tmp_path: Path):
    """The site's docs page takes a new section from its Markdown block when no HTML block is
    written for it: one model function and one template block are enough for both formats."""
    src, out, templates = tmp_path / "src", tmp_path / "out", tmp_path / "templates"
    src.mkdir()
    templates.mkdir()
    (src / "tool.py").write_text('"""A tool."""\n# SPDX-License-Identifier: MIT\n\n\ndef MIT():\n    return 1\n')
    (templates / "file_docs.md.j2").write_text(LICENCE_BLOCK)
    (src / "pyproject.toml").write_text(f'[tool.kwdocs]\ntemplates = "{templates.as_posix()}"\n')

    def licence(given: model.DocsInput) -> model.Section | None:
        found = re.search(r"SPDX-License-Identifier: (\S+)", Path(src / given.path).read_text())
        return model.Section({"licence": found.group(1)}, given.shows(found.group(1))) if found else None

    saved = list(model.SECTIONS)
    try:
        model.section("licence", "Licence", after="purpose")(licence)
        assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q", "--html") == 0
    finally:
        model.SECTIONS[:] = saved
    page = (out / "site" / "tool.py_docs.html").read_text()
    ids = re.findall(r'<h2 id="([^"]+)"', page)
    assert ids[ids.index("file-purpose") + 1] == "licence", ids
    assert "<p>Licensed under <code>MIT</code>.</p>" in page.split('<h2 id="licence"', 1)[1].split("<h2 ", 1)[0]

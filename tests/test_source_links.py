"""Every definition on a docs page links to its lines in the source (``path#L10-L20``), or to ``source_url``."""
from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

from tests.conftest import run_kwdocs

# a Code Structure entry: its name, then the link of "line N"
DEFINITION = re.compile(r'^\s*- <a id="[^"]+"></a>.*?\*\*`([^`]+)`\*\*.*? \(\[line (\d+)\]\(([^)]+)\)\)', re.M)
LINES = re.compile(r"#L(\d+)(?:-L(\d+))?$")


def definitions(page: Path) -> list[tuple[str, int, str]]:
    return [(name, int(line), link) for name, line, link in DEFINITION.findall(page.read_text())]


def test_every_definition_links_to_its_lines_in_the_source(golden_tree, capsys):
    assert run_kwdocs("build", "--src", str(golden_tree), "-q") == 0
    out = golden_tree / "kwdocs-out"
    followed = ranges = 0
    for page in sorted(out.rglob("*_docs.md")):
        source = page.relative_to(out).as_posix().removesuffix("_docs.md")
        for name, line, link in definitions(page):
            target, _, _ = link.partition("#")
            found = LINES.search(link)
            assert found, f"{page.name}: {name} links {link}, not to its lines"
            start, end = int(found.group(1)), int(found.group(2) or found.group(1))
            resolved = Path(posixpath.normpath(posixpath.join(page.parent.as_posix(), unquote(target))))
            assert resolved == golden_tree / source, f"{page.name}: {link} is not the file's source"
            lines = resolved.read_text().splitlines()
            assert start == line and start <= end <= len(lines), f"{page.name}: {name} {link}"
            # the first line names the definition (a decorator may come first in the source, not here)
            assert name.split(".")[-1] in lines[start - 1], f"{page.name}: line {start} is not {name}'s"
            followed += 1
            ranges += end > start
    assert followed > 20 and ranges > 5, (followed, ranges)
    circle = (out / "geometry" / "shapes" / "circle.py_docs.md").read_text()
    assert "([line " in circle and "](circle.py#L" not in circle   # relative to the page, into the tree


def test_a_function_links_its_first_to_its_last_line(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text('X = 1\n\n\ndef f(a):\n    """F."""\n    return a\n\n\nclass C:\n    pass\n')
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    page = (tree / "kwdocs-out" / "m.py_docs.md").read_text()
    assert "**`f`** `(a)` ([line 4](../m.py#L4-L6))" in page
    assert "**`C`** ([line 9](../m.py#L9-L10))" in page
    assert "**`X`** `= 1` ([line 1](../m.py#L1))" in page


def test_source_url_makes_links_for_pages_published_elsewhere(tmp_path):
    tree = tmp_path / "tree"
    (tree / "pkg dir").mkdir(parents=True)
    (tree / "pkg dir" / "m.py").write_text('def f(a):\n    return a\n')
    (tree / "pyproject.toml").write_text(
        '[tool.kwdocs]\nsource_url = "https://git.example.org/p/-/blob/{ref}/{path}#L{start}-{end}"\n'
        'source_ref = "v1.2"\n')
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    page = (tree / "kwdocs-out" / "pkg dir" / "m.py_docs.md").read_text()
    assert "([line 1](https://git.example.org/p/-/blob/v1.2/pkg%20dir/m.py#L1-2))" in page


def test_a_source_url_without_path_is_one_line_and_exit_2(tmp_path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text("def f():\n    pass\n")
    (tree / "pyproject.toml").write_text('[tool.kwdocs]\nsource_url = "https://example.org/{ref}#L{start"\n')
    capsys.readouterr()
    assert run_kwdocs("build", "--src", str(tree), "-q") == 2
    said = capsys.readouterr().err
    assert "'source_url' must be a URL holding {path}" in said and len(said.splitlines()) == 1
    assert not (tree / "kwdocs-out").exists()


def test_the_site_made_from_a_markdown_page_links_the_line_in_its_own_source_view(tmp_path):
    from kwdocs.site.html import markdown_to_html

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text('def f(a):\n    """F."""\n    return a\n')
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    html = markdown_to_html((tree / "kwdocs-out" / "m.py_docs.md").read_text(), "m.py_docs.md")
    assert '(<a href="#L1">line 1</a>)' in html and "m.py#L1-L3" not in html

"""Folder pages' Mermaid diagrams: imports between a folder's files and to other folders, the
inheritance of its classes across files, bounded, deterministic, kept current by incremental
builds, and drawn by the site's own copy of Mermaid in Chromium."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kwdocs import layout
from kwdocs.pages import diagrams
from kwdocs.pages.render import mermaid_label
from tests.browser import chromium, watch
from tests.conftest import run_kwdocs

TREE = {
    "pkg/__init__.py": '"""The package."""\nfrom pkg.base import Base\n',
    "pkg/base.py": '"""Bases."""\nimport abc\n\n\nclass Base(abc.ABC):\n    """A base."""\n\n\n'
                   'class Mixin:\n    """A mixin."""\n',
    "pkg/shapes.py": '"""Shapes."""\nfrom pkg.base import Base, Mixin\nfrom other import helpers\n'
                     'import other.things as things\n\n\nclass Shape(Base):\n    """A shape."""\n\n\n'
                     'class Circle(Shape, Mixin):\n    """A circle."""\n\n\n'
                     'class Thing(things.Widget):\n    """A thing."""\n',
    "other/__init__.py": "",
    "other/helpers.py": '"""Helpers."""\n',
    "other/things.py": '"""Things."""\n\n\nclass Widget:\n    """A widget."""\n',
}

BLOCK = re.compile(r"^```mermaid\n(.*?)^```$", re.S | re.M)
NODE = re.compile(r"^    (\w+)(?:\[\"|\(\[\"|\(\")(.*?)(?:\"\]|\"\]\)|\"\))$")
EDGE = re.compile(r"^    (\w+) --> (\w+)$")


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def build(tree: Path, *extra: str) -> Path:
    assert run_kwdocs("build", "--src", str(tree), "-q", *extra) == 0
    return tree / "kwdocs-out"


def graphs(page: Path) -> dict[str, tuple[list[str], set[tuple[str, str]]]]:
    """Each diagram of a Markdown page under its heading: its node labels and its edges by label."""
    text = page.read_text(encoding="utf-8")
    found = {}
    for match in BLOCK.finditer(text):
        heading = text[:match.start()].rpartition("\n### ")[2].partition("\n")[0]
        labels, edges = {}, set()
        for line in match.group(1).splitlines()[1:]:
            if node := NODE.match(line):
                labels[node.group(1)] = node.group(2)
            else:
                edge = EDGE.match(line)
                assert edge, f"not a node or an edge: {line!r}"
                edges.add((labels[edge.group(1)], labels[edge.group(2)]))
        found[heading] = (list(labels.values()), edges)
    return found


@pytest.fixture
def tree(tmp_path) -> Path:
    return write_tree(tmp_path / "tree", TREE)


def test_a_folder_page_shows_its_imports_and_its_classes_inheritance_across_files(tree):
    out = build(tree)
    shown = graphs(out / "pkg" / "doc.md")
    assert shown["Imports"][1] == {("__init__.py", "base.py"), ("shapes.py", "base.py"), ("shapes.py", "other/")}
    assert shown["Inheritance"][1] == {
        ("Base", "abc.ABC"),                      # no file of the tree defines it: as written
        ("Shape", "Base"), ("Circle", "Shape"), ("Circle", "Mixin"),   # across the folder's files
        ("Thing", "Widget (other/things.py)"),    # a dotted base, resolved through the import to its file
    }
    # a file's page draws its own classes' bases, those in other files named with their file
    assert graphs(out / "pkg" / "shapes.py_docs.md")["Class Hierarchy"][1] == {
        ("Shape", "Base (pkg/base.py)"), ("Circle", "Shape"), ("Circle", "Mixin (pkg/base.py)"),
        ("Thing", "Widget (other/things.py)")}
    assert "mermaid" not in (out / "other" / "things.py_docs.md").read_text(encoding="utf-8")
    # other/ has no import between its files and no class with a base: nothing true to draw
    assert "## Diagrams" not in (out / "other" / "doc.md").read_text(encoding="utf-8")
    assert "mermaid" not in (out / "doc.md").read_text(encoding="utf-8")


def test_a_diagram_keeps_the_30_most_connected_nodes_and_counts_the_rest(tmp_path):
    files = {"wide/hub.py": "HUB = 1\n"} | {f"wide/m{index:02}.py": "from wide import hub\n" for index in range(40)}
    out = build(write_tree(tmp_path / "tree", files))
    labels, edges = graphs(out / "wide" / "doc.md")["Imports"]
    assert len(labels) == 30 and "hub.py" in labels
    assert edges == {(f"m{index:02}.py", "hub.py") for index in range(29)}   # ties kept in name order
    text = (out / "wide" / "doc.md").read_text(encoding="utf-8")
    assert "*11 more files or folders and 11 more imports are not shown: the diagram keeps the 30 with the most.*" \
        in text


def test_a_large_folders_import_graph_works_out_each_included_file_once(monkeypatch):
    """7,000 headers that include the same few files (ATen/ops): each file outside the folder is
    placed in its folder once, not once per header including it (a header edit there drew the
    folder's diagrams in 92 ms of CPU, 38 now), and the 30 most connected nodes are kept."""
    importance = {f"op{index:04}.h": {"deps": ["c10/macros/Macros.h", "c10/core/Scalar.h", "ATen/ops/op0000.h",
                                               f"ATen/native/op{index % 7}.h"]} for index in range(2000)}
    placed: list[str] = []
    dirname = diagrams.posixpath.dirname
    monkeypatch.setattr(diagrams.posixpath, "dirname", lambda path: (placed.append(path), dirname(path))[1])
    graph = diagrams.import_graph("ATen/ops", importance)
    monkeypatch.undo()
    assert sorted(placed) == sorted(["c10/macros/Macros.h", "c10/core/Scalar.h",
                                     *(f"ATen/native/op{index}.h" for index in range(7))])
    assert graph is not None and len(graph["nodes"]) == 30 and graph["hidden_nodes"] == 2000 + 3 - 30
    labels = {node["label"] for node in graph["nodes"]}
    assert {"c10/macros/", "c10/core/", "ATen/native/", "op0000.h"} <= labels


def test_diagrams_are_the_same_for_the_same_tree_whatever_the_order_met(tree, tmp_path):
    first = build(tree) / "pkg" / "doc.md"
    again = write_tree(tmp_path / "again", dict(reversed(TREE.items())))
    assert (build(again) / "pkg" / "doc.md").read_bytes() == first.read_bytes()
    importance = {"b.py": {"deps": ["p/a.py", "q/x.py"]}, "a.py": {"deps": ["p/b.py"]},
                  "c.py": {"classes": [["C", [["B", "p/b.py"], ["Z", None]]]]},
                  "b.py2": {"classes": [["B", [["A", "p/a.py"]]]]}}
    reordered = dict(reversed(importance.items()))
    assert diagrams.folder_diagrams("p", importance) == diagrams.folder_diagrams("p", reordered)


def test_an_incremental_build_redraws_a_folders_diagrams_when_an_import_or_a_base_changes(tree):
    out = build(tree)
    (tree / "pkg" / "__init__.py").write_text('"""The package, importing nothing now."""\n', encoding="utf-8")
    (tree / "pkg" / "shapes.py").write_text(TREE["pkg/shapes.py"].replace("class Circle(Shape, Mixin)",
                                                                         "class Circle(Mixin)"), encoding="utf-8")
    build(tree)
    shown = graphs(out / "pkg" / "doc.md")
    assert ("__init__.py", "base.py") not in shown["Imports"][1]
    assert ("Circle", "Shape") not in shown["Inheritance"][1] and ("Circle", "Mixin") in shown["Inheritance"][1]
    assert run_kwdocs("check", "--src", str(tree)) == 0     # what a cold build would write


def test_a_base_moving_between_the_files_a_package_re_exports_is_followed_on_the_next_build(tmp_path):
    files = {"pkg/__init__.py": "from pkg.core import *\nfrom pkg.extra import *\n",
             "pkg/core.py": "class Thing:\n    pass\n", "pkg/extra.py": "def other():\n    pass\n",
             "app/x.py": "import pkg\n\n\nclass X(pkg.Thing):\n    pass\n"}
    tree = write_tree(tmp_path / "tree", files)
    out = build(tree)
    assert graphs(out / "app" / "doc.md")["Inheritance"][1] == {("X", "Thing (pkg/core.py)")}
    # no import changes: the link step only looks again for the names whose definitions moved
    write_tree(tree, {"pkg/core.py": "def other():\n    pass\n",
                      "pkg/extra.py": "class Thing:\n    pass\n\n\ndef other():\n    pass\n"})
    build(tree)
    assert graphs(out / "app" / "doc.md")["Inheritance"][1] == {("X", "Thing (pkg/extra.py)")}


def test_labels_that_mermaid_would_read_are_written_as_its_codes():
    assert mermaid_label('a"b`c#d<e>\nf&g') == "a#quot;b#96;c#35;d#lt;e#gt; f#38;g"


# ---------------------------------------------------------------- drawn in Chromium

def drawn(browser, page_path: Path) -> list[dict]:
    """Each diagram of a site page as Mermaid drew it: its SVG's node count, or the error it showed."""
    page = browser.new_page()
    watched = watch(page)
    try:
        page.goto(page_path.as_uri())
        blocks = page.locator("pre.mermaid")
        count = blocks.count()
        assert count, f"no diagram on {page_path}"
        page.wait_for_function(f"document.querySelectorAll('pre.mermaid[data-processed] svg').length === {count}",
                               timeout=30_000)
        found = page.evaluate("""() => [...document.querySelectorAll('pre.mermaid')].map(block => ({
            nodes: block.querySelectorAll('svg g.node').length,
            error: block.querySelector('svg[aria-roledescription="error"]') !== null,
        }))""")
    finally:
        page.close()
    assert watched.clean(), watched
    return found


def expected_nodes(md_page: Path) -> list[int]:
    return [len(labels) for labels, _ in graphs(md_page).values()]


HOSTILE_HEADER = "b<img src=x onerror=alert(1)>&amp;#35;`.h"    # a name C's quoted includes can give


def test_the_site_draws_the_diagrams_with_its_own_mermaid(tree):
    write_tree(tree, {"native/a.c": f'#include "{HOSTILE_HEADER}"\n', f"native/{HOSTILE_HEADER}": "int b;\n"})
    out = build(tree, "--html")
    with chromium() as browser:
        found = drawn(browser, out / "site" / "pkg" / "doc.html")
        assert found == [{"nodes": count, "error": False} for count in expected_nodes(out / "pkg" / "doc.md")]
        found = drawn(browser, out / "site" / "pkg" / "shapes.py_docs.html")
        assert found == [{"nodes": count, "error": False}
                         for count in expected_nodes(out / "pkg" / "shapes.py_docs.md")]
        # a file's name is a label, shown as written: no element, no script
        assert drawn(browser, out / "site" / "native" / "doc.html") == [{"nodes": 2, "error": False}]
        page = browser.new_page()
        page.goto((out / "site" / "native" / "doc.html").as_uri())
        page.wait_for_selector("pre.mermaid svg")
        assert HOSTILE_HEADER in page.locator("pre.mermaid svg").text_content()
        assert page.locator("pre.mermaid img").count() == 0
        page.close()
    assert graphs(out / "native" / "doc.md")["Imports"][1] == {("a.c", mermaid_label(HOSTILE_HEADER))}
    page = (out / "site" / "pkg" / "doc.html").read_text(encoding="utf-8")
    assert "_kwdocs/mermaid.min.js" in page and "http" not in page.partition("<body")[0].replace("http-equiv", "")
    assert "mermaid.min.js" not in (out / "site" / "other" / "doc.html").read_text(encoding="utf-8")
    assert (out / "site" / "_kwdocs" / "mermaid.LICENSE").is_file()


def test_the_torch_nn_folders_diagrams_all_parse(corpus_slice, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(corpus_slice / "torch" / "nn", tree / "torch" / "nn")
    out = build(tree, "--html")
    pages = sorted(path for path in (out / "torch" / "nn").rglob("doc.md") if "```mermaid" in path.read_text())
    assert len(pages) >= 5
    pages.append(out / "torch" / "nn" / "modules" / "conv.py_docs.md")     # a file page's classes too
    with chromium() as browser:
        for md_page in pages:
            site_page = out / "site" / md_page.relative_to(out).with_suffix(".html")
            assert drawn(browser, site_page) == [{"nodes": count, "error": False} for count in expected_nodes(md_page)]


def test_a_large_folders_kept_diagrams_are_used_while_what_they_were_made_from_holds(tree, monkeypatch):
    """A folder of many files keeps its diagrams in the state: an edit that changes no import
    or base draws them from there, one that does (or damaged state) draws them again, and the
    page is always what a build from scratch writes."""
    from kwdocs.engine.steps import assemble
    monkeypatch.setattr(assemble, "DIAGRAMS_KEPT_FILES", 2)     # pkg's three files make it "large"
    drawn: list[str] = []
    draw = diagrams.folder_diagrams
    monkeypatch.setattr(diagrams, "folder_diagrams", lambda folder, importance: drawn.append(folder) or draw(
        folder, importance))
    out = build(tree)
    assert "pkg" in drawn
    before = graphs(out / "pkg" / "doc.md")
    drawn.clear()
    with open(tree / "pkg" / "base.py", "a", encoding="utf-8") as handle:     # no import, no base changed
        handle.write('\n\nclass Extra:\n    """More."""\n')
    build(tree)
    assert "pkg" not in drawn and graphs(out / "pkg" / "doc.md") == before
    assert run_kwdocs("check", "--src", str(tree)) == 0
    (tree / "pkg" / "__init__.py").write_text('"""The package, importing nothing now."""\n', encoding="utf-8")
    build(tree)
    assert "pkg" in drawn
    assert ("__init__.py", "base.py") not in graphs(out / "pkg" / "doc.md")["Imports"][1]
    assert run_kwdocs("check", "--src", str(tree)) == 0
    kept = out / ".kwdocs" / "folder-diagrams" / layout.state_name("pkg")
    kept.write_text("damaged")
    drawn.clear()
    with open(tree / "pkg" / "base.py", "a", encoding="utf-8") as handle:
        handle.write('\n\nclass Another:\n    """And more."""\n')
    build(tree)
    assert "pkg" in drawn and run_kwdocs("check", "--src", str(tree)) == 0
    shutil.rmtree(tree / "pkg")     # the folder gone: so are its kept diagrams, not another's
    build(tree)
    assert not kept.exists() and (kept.parent / layout.state_name("other")).is_file()

"""Where each definition is used, and where each name of a file's source is defined: made by the
link step from the resolved imports, shown in the docs pages, kept up to date by edits."""
from __future__ import annotations

import random
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.engine.steps import link_all
from kwdocs.extract import links
from kwdocs.pages import model
from kwdocs.store.state import FACTS, LINKS, load_shard
from tests.conftest import run_kwdocs
from tests.output_checks import broken_links, pages

BASE = '"""Base classes."""\n\n\nclass Module:\n    """A module."""\n\n\ndef helper():\n    return 1\n'
FILES = {
    "pkg/__init__.py": "from .base import Module\n",
    "pkg/base.py": BASE,
    "pkg/linear.py": "import os\n\nfrom .base import Module, helper as assist\n\n\nclass Linear(Module):\n"
                     "    def run(self):\n        return assist()\n",
    "app.py": "from pkg import Module\n\n\nclass App(Module):\n    pass\n",
    "lib/thing.h": "#pragma once\nint thing(void);\n",
    "main.c": '#include "lib/thing.h"\nint main(void) { return thing(); }\n',
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _build(src: Path, out: Path) -> None:
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0


def _entry_line(page: str, name: str) -> str:
    return next(line for line in page.splitlines() if f"**`{name}`**" in line)


def _docs_model(src: Path, out: Path, rel: str) -> dict:
    """A file's docs page model, from what the build stored (facts and links of its unit)."""
    config = load_config(src, overrides={"output": str(out)})
    folder = rel.rpartition("/")[0]
    facts = load_shard(config, FACTS, folder)["files"][rel]
    links = load_shard(config, LINKS, folder)["files"][rel]
    return model.file_docs_model(facts, project="p", related={"files": [], "more": 0}, links=links,
                                 view=model.SourceView(None), src_link="")


def test_docs_page_lists_where_a_definition_is_used(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src", FILES), tmp_path / "out"
    _build(src, out)
    base = (out / "pkg/base.py_docs.md").read_text()
    module = _entry_line(base, "Module")
    # imported directly, through an alias, and through the package that re-exports it
    assert "used in [`app.py`](../app.py_docs.md) line 1" in module
    assert "[`pkg/__init__.py`](./__init__.py_docs.md) line 1" in module
    assert "[`pkg/linear.py`](./linear.py_docs.md) line 3" in module
    assert "used in [`pkg/linear.py`](./linear.py_docs.md) line 3" in _entry_line(base, "helper")
    assert "used in" not in _entry_line((out / "pkg/linear.py_docs.md").read_text(), "Linear")
    assert broken_links(out) == []


def test_model_maps_source_names_to_definitions(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src", FILES), tmp_path / "out"
    _build(src, out)
    names = _docs_model(src, out, "pkg/linear.py")["source_names"]
    assert names["Module"] == ["pkg/base.py_docs.md", 4]
    assert names["assist"] == ["pkg/base.py_docs.md", 8]      # bound under another name
    assert names["Linear"] == ["pkg/linear.py_docs.md", 6]    # its own definition
    assert "os" not in names                                   # the standard library has no page
    assert _docs_model(src, out, "app.py")["source_names"]["Module"] == ["pkg/base.py_docs.md", 4]
    assert _docs_model(src, out, "main.c")["source_names"]["lib/thing.h"] == ["lib/thing.h_docs.md", None]
    entry = next(e for e in _docs_model(src, out, "pkg/base.py")["structure"] if e["name"] == "Module")
    assert entry["uses"] == [["app.py", 1], ["pkg/__init__.py", 1], ["pkg/linear.py", 3]]
    assert entry["more_uses"] == 0


def test_edits_rewrite_the_pages_whose_uses_or_links_changed(tmp_path: Path, monkeypatch) -> None:
    src, out = _tree(tmp_path / "src", FILES), tmp_path / "out"
    _build(src, out)
    base_page, linear_page = out / "pkg/base.py_docs.md", out / "pkg/linear.py_docs.md"
    # a new user of Module: base.py's page lists it
    (src / "user.py").write_text("\n\nfrom pkg.base import Module\n")
    _build(src, out)
    assert "[`user.py`](../user.py_docs.md) line 3" in _entry_line(base_page.read_text(), "Module")
    # Module moves down two lines: the names that lead to it follow, without linking the whole tree again
    (src / "pkg/base.py").write_text("# one\n# two\n" + BASE)
    before = linear_page.stat().st_mtime_ns
    with monkeypatch.context() as patch:
        patch.setattr(link_all, "definition_links", None)     # the whole tree is linked there
        _build(src, out)
    assert _docs_model(src, out, "pkg/linear.py")["source_names"]["Module"] == ["pkg/base.py_docs.md", 6]
    assert _docs_model(src, out, "app.py")["source_names"]["Module"] == ["pkg/base.py_docs.md", 6]
    cold = tmp_path / "cold"
    _build(src, cold)
    config, cold_config = (load_config(src, overrides={"output": str(folder)}) for folder in (out, cold))
    for unit in ("", "pkg", "lib"):
        assert load_shard(config, LINKS, unit) == load_shard(cold_config, LINKS, unit)
    assert pages(out) == pages(cold)
    # the user goes: base.py's page no longer lists it
    (src / "user.py").unlink()
    _build(src, out)
    assert "user.py" not in _entry_line(base_page.read_text(), "Module")
    assert linear_page.stat().st_mtime_ns == before   # its page shows no line numbers of base.py
    assert broken_links(out) == []


def test_a_much_used_definition_lists_its_first_places_and_counts_the_rest() -> None:
    """However many files import a name, in whatever order the link step meets them, its uses
    are the first ``USES_LIMIT`` places by file and line and a count of the others; a file that
    imports it again (on one line or another) is one place, its first."""
    importers = [f"app/m{index:03d}.py" for index in range(97)]
    resolved = {path: {"deps": [{"target": "pkg/base.py", "module": "pkg.base", "names": ["Module"],
                                 "line": 3 + index % 4},
                                {"target": "pkg/base.py", "module": "pkg.base", "names": ["Module", "Module"],
                                 "line": 30 - index % 3}],
                       "used_by": []}
                for index, path in enumerate(importers)}
    shuffled = list(resolved.items())
    random.Random(7).shuffle(shuffled)
    places = sorted((path, info["deps"][0]["line"]) for path, info in resolved.items())
    for order in (resolved, dict(shuffled)):
        _, uses, _ = links.definition_links(order, {"pkg/base.py": {"Module": 4}}, {})
        assert uses["pkg/base.py"]["Module"] == {
            "at": [list(place) for place in places[:links.USES_LIMIT]], "more": len(places) - links.USES_LIMIT}

"""Names in docstrings and annotations that the tree defines link to the definition's anchor
on its file's page, through re-exports too, and follow it when an edit moves it."""
from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_kwdocs
from tests.output_checks import broken_links, pages

FILES = {
    "pkg/__init__.py": '"""A package."""\nfrom .core import Engine, start\n',
    "pkg/core.py": '"""The core."""\n\n\nclass Engine:\n    """Runs things."""\n\n\n'
                   'def start(engine):\n    """Start an engine."""\n',
    "app.py": '"""The app."""\nfrom pkg import Engine\nfrom pkg.core import start\nimport pkg.core as core\n\n\n'
              'def main(engine: Engine) -> None:\n'
              '    """Make an :class:`Engine`, call :func:`start`, then :func:`core.start`."""\n'
              '    core.start(engine)\n',
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _anchor(out: Path, page: str, kind: str, name: str) -> str:
    found = re.search(rf'<a id="(l\d+-{kind}-{name.lower()})"></a>', (out / page).read_text())
    assert found, f"{page} has no anchor for {name}"
    return found.group(1)


def _targets(page: str, name: str) -> set[str]:
    """Where the page's links shown as ``name`` go."""
    return set(re.findall(rf"\[`{re.escape(name)}`\]\(([^)]*)\)", page))


def test_imported_names_link_to_their_definitions_anchor(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, FILES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    engine = _anchor(out, "pkg/core.py_docs.md", "class", "Engine")
    start = _anchor(out, "pkg/core.py_docs.md", "function", "start")
    app = (out / "app.py_docs.md").read_text()
    # Engine is imported through the package, which re-exports it; start from its module
    assert _targets(app, "Engine") == {f"./pkg/core.py_docs.md#{engine}"}, app
    assert _targets(app, "start") == {f"./pkg/core.py_docs.md#{start}"}, app
    assert _targets(app, "core.start") == {f"./pkg/core.py_docs.md#{start}"}, app
    assert broken_links(out) == []


def test_an_edit_that_moves_a_definition_moves_the_links_to_it(tmp_path: Path):
    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    _write(src, FILES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    before = _anchor(out, "pkg/core.py_docs.md", "class", "Engine")
    (src / "pkg/core.py").write_text(FILES["pkg/core.py"].replace('"""The core."""\n', '"""The core."""\n\nLIMIT = 3\n\n'))
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    after = _anchor(out, "pkg/core.py_docs.md", "class", "Engine")
    assert after != before
    assert _targets((out / "app.py_docs.md").read_text(), "Engine") == {f"./pkg/core.py_docs.md#{after}"}
    assert broken_links(out) == []
    # the same pages as a build from scratch
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_a_damaged_record_of_where_definitions_were_looked_for_costs_a_relink_not_a_stale_link(tmp_path: Path):
    from kwdocs.store.state import LINK_META
    from kwdocs.store.writer import read_json, write_json

    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    _write(src, FILES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    meta_path = out / ".kwdocs" / LINK_META
    meta = read_json(meta_path)
    assert meta and meta.get("anchored"), "linking no longer records where it looked for definitions"
    write_json(out, meta_path, dict(meta, anchored={rel: [None] for rel in meta["anchored"]}))
    (src / "pkg/core.py").write_text(FILES["pkg/core.py"].replace('"""The core."""\n', '"""The core."""\n\nLIMIT = 3\n\n'))
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_every_name_imported_through_one_package_links_to_its_definition(tmp_path: Path):
    """Two names the package re-exports from one module: the second is found as the first is."""
    src, out = tmp_path / "src", tmp_path / "out"
    files = dict(FILES, **{"app.py": '"""The app."""\nfrom pkg import Engine, start\n\n\n'
                                     'def main(engine: Engine) -> None:\n'
                                     '    """Make an :class:`Engine`, then call :func:`start`."""\n'})
    _write(src, files)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    engine = _anchor(out, "pkg/core.py_docs.md", "class", "Engine")
    start = _anchor(out, "pkg/core.py_docs.md", "function", "start")
    app = (out / "app.py_docs.md").read_text()
    assert _targets(app, "Engine") == {f"./pkg/core.py_docs.md#{engine}"}, app
    assert _targets(app, "start") == {f"./pkg/core.py_docs.md#{start}"}, app

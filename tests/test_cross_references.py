"""Names in docstrings and annotations that the tree defines link to the definition's anchor
on its file's page, through re-exports too, and follow it when an edit moves it."""
from __future__ import annotations

import json
import re
from pathlib import Path

from kwdocs import layout
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


# --- names link to their definition or not at all (issue 32) ---------------------------------

NAMES = {
    "pkg/__init__.py": '"""The package."""\nfrom .modules import *\nfrom . import functional, _reduction\n',
    "pkg/modules/__init__.py": '"""Layers."""\nfrom .linear import Linear\nfrom .activation import Threshold\n',
    "pkg/modules/activation.py": '"""Activations."""\n\n\nclass Threshold:\n    """Thresholds."""\n',
    "pkg/modules/linear.py": '"""Linear layers."""\nimport pkg\nfrom pkg import functional as F\n\n\n'
                             'class Linear:\n    """A layer: :class:`pkg.Linear`, made with :func:`F.linear`."""\n',
    "pkg/_reduction.py": '"""Reductions."""\n\n\ndef legacy():\n    """Old."""\n',
    "pkg/functional.py": '"""Functions."""\nfrom pkg import _reduction as _Reduction\n\n\n'
                         'def max_unpool3d(x):\n'
                         '    """See :class:`~pkg.Threshold` and :func:`~pkg.functional.max_unpool3d`."""\n\n\n'
                         'def linear(x):\n    """Not in the tree: :func:`pkg.missing_thing`."""\n',
    "app.py": '"""The app."""\nimport pkg\n\n\ndef main():\n    """Build a :class:`pkg.Linear`."""\n',
}


def test_a_tilde_role_links_to_the_defining_files_anchor_never_a_file_imported_beside_it(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, NAMES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    threshold = _anchor(out, "pkg/modules/activation.py_docs.md", "class", "Threshold")
    functional = (out / "pkg/functional.py_docs.md").read_text()
    # ``from pkg import _reduction`` is no way to ``pkg.Threshold``: the package re-exports it
    assert _targets(functional, "Threshold") == {f"./modules/activation.py_docs.md#{threshold}"}, functional


def test_a_name_defined_in_the_file_itself_links_to_its_own_anchor(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, NAMES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    unpool = _anchor(out, "pkg/functional.py_docs.md", "function", "max_unpool3d")
    functional = (out / "pkg/functional.py_docs.md").read_text()
    assert _targets(functional, "max_unpool3d") == {f"#{unpool}"}, functional
    # a class's own page: ``pkg.Linear`` is the class itself, never the functional module it imports
    linear = _anchor(out, "pkg/modules/linear.py_docs.md", "class", "Linear")
    page = (out / "pkg/modules/linear.py_docs.md").read_text()
    assert {target.rpartition("#")[2] for target in _targets(page, "pkg.Linear")} == {linear}, page
    assert all(target in ("", "./linear.py_docs.md") for target in
               {target.partition("#")[0] for target in _targets(page, "pkg.Linear")}), page


def test_a_re_exported_name_links_through_the_package_to_the_defining_file(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, NAMES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    linear = _anchor(out, "pkg/modules/linear.py_docs.md", "class", "Linear")
    app = (out / "app.py_docs.md").read_text()
    assert _targets(app, "pkg.Linear") == {f"./pkg/modules/linear.py_docs.md#{linear}"}, app


def test_a_name_that_cannot_be_resolved_is_shown_as_code_unlinked(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, NAMES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    functional = (out / "pkg/functional.py_docs.md").read_text()
    assert "`pkg.missing_thing`" in functional, functional
    assert _targets(functional, "pkg.missing_thing") == set(), functional
    assert broken_links(out) == []


def test_an_import_of_a_deleted_file_is_shown_unresolved_after_an_incremental_build(tmp_path: Path):
    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    files = {"lib/__init__.py": '"""A library."""\n', "lib/_api.py": '"""Its API."""\n\n\ndef get():\n    """Get."""\n',
             "main.py": '"""Main."""\nimport lib._api\n'}
    _write(src, files)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert _targets((out / "main.py_docs.md").read_text(), "lib._api") == {"./lib/_api.py_docs.md"}
    (src / "lib/_api.py").unlink()
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    page = (out / "main.py_docs.md").read_text()
    # the package does not stand for its deleted module: the import is listed, unlinked
    assert _targets(page, "lib._api") == set(), page
    assert "- `lib._api` (line 2)" in page, page
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_a_name_a_docstring_edit_mentions_links_as_a_build_from_scratch_does(tmp_path: Path):
    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    _write(src, NAMES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    (src / "app.py").write_text(NAMES["app.py"].replace(":class:`pkg.Linear`", ":class:`pkg.Threshold`"))
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    threshold = _anchor(out, "pkg/modules/activation.py_docs.md", "class", "Threshold")
    assert _targets((out / "app.py_docs.md").read_text(), "pkg.Threshold") == {
        f"./pkg/modules/activation.py_docs.md#{threshold}"}
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_an_import_line_added_relinks_only_its_unit_and_pages_match_a_build_from_scratch(tmp_path: Path):
    """An import of a module outside the tree added above the others moves every line of the
    file: the pages that show those lines (the file's own, the defining file's "used in ...
    line N") follow, as a build from scratch makes them, without the whole tree being linked
    again (a unit the edit cannot concern keeps its link inputs unread: their shard, removed,
    is not made again)."""
    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    _write(src, FILES | {"other/__init__.py": '"""Unrelated."""\n',
                         "other/util.py": "import os\n\n\ndef helper():\n    pass\n"})
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    core = (out / "pkg/core.py_docs.md").read_text()
    assert "[`app.py`](../app.py_docs.md) line 3" in core, core
    unrelated = out / ".kwdocs" / "link-inputs" / layout.state_name("other")
    unrelated.unlink()
    (src / "app.py").write_text(FILES["app.py"].replace('"""The app."""\n', '"""The app."""\nimport json\n'))
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert "[`app.py`](../app.py_docs.md) line 4" in (out / "pkg/core.py_docs.md").read_text()
    assert not unrelated.exists(), "the whole tree was linked again"
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_a_line_added_above_definitions_moves_the_anchors_other_pages_link_to(tmp_path: Path):
    """Definitions that only moved (the same names, new lines): the pages linking to them link
    to their new anchors, as a build from scratch makes them."""
    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    _write(src, FILES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    before = _anchor(out, "pkg/core.py_docs.md", "class", "Engine")
    (src / "pkg/core.py").write_text("# moved down a line\n" + FILES["pkg/core.py"])
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    after = _anchor(out, "pkg/core.py_docs.md", "class", "Engine")
    assert after != before
    assert _targets((out / "app.py_docs.md").read_text(), "Engine") == {f"./pkg/core.py_docs.md#{after}"}
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def _page_keys(out: Path) -> dict[str, str]:
    """The key each file's pages were last rendered from, as the root's render state keeps it."""
    from kwdocs.store import writer as output
    from kwdocs.store.state import PAGES
    return json.loads(output.unsealed((out / ".kwdocs" / PAGES / layout.state_name("")).read_bytes()))["files"]


def test_definitions_moved_re_render_only_the_pages_that_show_where_they_are(tmp_path: Path):
    """Lines added above a file's definitions move their anchors: a page whose documentation
    links one is rendered again, a page that only imports and calls it (its Markdown shows no
    anchor or line of it) is not, and the pages are those of a build from scratch."""
    src, out, cold = tmp_path / "src", tmp_path / "out", tmp_path / "cold"
    _write(src, FILES | {
        "caller.py": '"""Calls start."""\nfrom pkg.core import start\n\n\ndef go():\n    start(None)\n',
        "linker.py": '"""Links it."""\nfrom pkg.core import start\n\n\n'
                     'def go():\n    """Calls :func:`start`."""\n    start(None)\n'})
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    before = _page_keys(out)
    (src / "pkg/core.py").write_text("# moved down\n# two lines\n" + FILES["pkg/core.py"])
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    after = _page_keys(out)
    start = _anchor(out, "pkg/core.py_docs.md", "function", "start")
    assert _targets((out / "linker.py_docs.md").read_text(), "start") == {f"./pkg/core.py_docs.md#{start}"}
    assert after["linker.py"] != before["linker.py"]
    assert after["caller.py"] == before["caller.py"], "a page that shows nothing of core.py's lines was rendered"
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_a_cold_build_works_out_each_files_page_key_once(tmp_path: Path, monkeypatch):
    """A file without pages is rendered whatever its key: its key is made once, from the names its
    pages looked up, and the next build finds every page up to date by it."""
    from kwdocs.engine.steps import render
    made: list[str] = []
    real = render.page_key

    def counted(facts, *args, **kwargs):
        made.append(facts["path"])
        return real(facts, *args, **kwargs)

    monkeypatch.setattr(render, "page_key", counted)
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, FILES)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert sorted(made) == sorted(FILES)
    keys, written = _page_keys(out), pages(out)
    assert keys and all(keys.values())     # the root unit's files: each a key of its own
    (src / "app.py").write_text(FILES["app.py"] + "\n# one more line\n")     # its unit's pages checked again
    made.clear()
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert made.count("app.py") == 2    # its key from before, then the one its new pages were made from
    after = _page_keys(out)
    assert after["app.py"] != keys["app.py"] and pages(out).keys() == written.keys()


MEMBERS = '''"""Two classes define ``forward``; a third inherits one of them."""


class Other:
    """Its own ``forward``."""

    def forward(self, x):
        """Doubles."""
        return 2 * x


class Identity:
    """Returns its input."""

    def forward(self, x):
        """Identity."""
        return x


class Lazy(Identity):
    """Calls ``forward`` of its base lazily."""


def run(module):
    """Calls ``forward`` on whatever module it is given, or ``Other.forward``."""
'''


def test_a_method_name_said_alone_links_to_the_class_it_is_said_in_or_nowhere(tmp_path: Path):
    """A member's own name is linked through the class whose doc says it (its own members, then
    what it inherits in the file), never to the first class of the file that happens to define it;
    said outside any class while several classes define it, it is shown unlinked."""
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, {"mod.py": MEMBERS})
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    page = (out / "mod.py_docs.md").read_text()
    identity_forward = re.search(r'<a id="(l15-method-forward)"></a>', page)
    other_forward = re.search(r'<a id="(l7-method-forward)"></a>', page)
    assert identity_forward and other_forward, page
    lazy_doc = page.split("**`Lazy`**", 1)[1].split("\n- ", 1)[0]
    assert _targets(lazy_doc, "forward") == {f"#{identity_forward.group(1)}"}, lazy_doc
    run_doc = page.split("**`run`**", 1)[1].split("\n- ", 1)[0]
    assert _targets(run_doc, "forward") == set() and "`forward`" in run_doc, run_doc
    assert _targets(run_doc, "Other.forward") == {f"#{other_forward.group(1)}"}, run_doc


HOOKS = '''"""Hooks."""
from typing import TypedDict


class HookOpts(TypedDict):
    """Options of a hook."""

    #: Whether the hook is :ref:`first result only <firstresult>`.
    firstresult: bool


def call(firstresult: bool = False) -> None:
    """Call the hook.

    :param firstresult: stop at the first result, see :ref:`firstresult` and :doc:`HookOpts`;
        the options are a :class:`HookOpts`.
    """
'''


def test_a_sphinx_label_or_document_is_never_linked_to_a_definition_of_that_name(tmp_path: Path):
    """``:ref:`first result only <firstresult>``` names a section of the project's docs (pluggy's),
    not the field ``firstresult``; ``:doc:`` a document: shown as code, unlinked, while a code
    role beside them still links."""
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, {"hooks.py": HOOKS})
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    page = (out / "hooks.py_docs.md").read_text()
    described = page.split("## Detailed Analysis")[1]
    assert "Whether the hook is `first result only`." in described, described
    assert "see `firstresult` and `HookOpts`;" in described, described
    options = _anchor(out, "hooks.py_docs.md", "class", "HookOpts")
    assert _targets(described, "HookOpts") == {f"#{options}"}, described    # the :class: role, linked
    assert _targets(described, "firstresult") == _targets(described, "first result only") == set()


RESULT = '''"""Results."""


class Result:
    """A result."""

    @property
    def exception(self) -> BaseException | None:
        """The exception, if any."""

    @property
    def excinfo(self) -> tuple | None:
        """The exception's info."""

    def force_exception(self, exception: BaseException, note: str = ", ".join(["a", "b"])) -> None:
        """Force the result to fail with ``exception``; see ``excinfo`` after."""
'''


def test_a_parameter_named_in_its_functions_doc_is_the_parameter_not_a_definition_of_that_name(tmp_path: Path):
    """pluggy's ``Result.force_exception(self, exception)`` says ``exception``: its parameter, as
    pdoc shows it, not the class's property of that name; a member that is no parameter still
    links, and names in annotations, defaults or the return type are no parameters."""
    from kwdocs.pages.model import _parameter_names
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, {"result.py": RESULT})
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    page = (out / "result.py_docs.md").read_text()
    force = page[page.index("**`force_exception`**"):]
    assert "Force the result to fail with `exception`; see [`excinfo`](#" in force, force
    assert _parameter_names("(self, x: Dict[str, T] = f(a, b), *args, **kw) -> Tuple[c, d]") == {
        "self", "x", "args", "kw"}

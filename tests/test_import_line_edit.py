"""An import line added to a file whose classes other folders' files derive from and name: every
definition of it moves a line, so their anchors move; the pages after the edit (Markdown and
HTML) are what a clean build writes, with no more work than the moved lines need."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kwdocs.config import Config
from kwdocs.engine.steps import link, render
from tests.conftest import run_kwdocs
from tests.output_checks import pages

BASE_PY = '"""Bases."""\n\n\nclass Base:\n    """A base."""\n\n\ndef make_base():\n    return Base()\n'
USER_PY = ('"""Users."""\nfrom pkg.base import Base, make_base\n\n\nclass Child(Base):\n    """Uses `Base`."""\n\n\n'
           'def child():\n    return make_base()\n')
DOTTED_PY = '"""Dotted."""\nimport pkg.base\n\n\nclass Other(pkg.base.Base):\n    pass\n'
CALLER_PY = '"""Calls through the module."""\nimport pkg.base\n\n\ndef g():\n    return pkg.base.make_base()\n'


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    for rel, text in {"pkg/__init__.py": "", "pkg/base.py": BASE_PY, "users/__init__.py": "",
                      "users/user.py": USER_PY, "dotted/__init__.py": "", "dotted/other.py": DOTTED_PY,
                      "caller/__init__.py": "", "caller/call.py": CALLER_PY}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    return src


def build(src: Path, out: Path) -> None:
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q", "--html") == 0


def test_an_import_line_moves_anchors_without_finding_bases_again(tree: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The import line moves ``Base`` and ``make_base`` a line: the pages naming them change as a
    clean build writes them, a unit whose page shows neither has its plan made without its
    facts read whole, and the bases of the other folders' classes, still defined in the
    same file, are not looked for again; after a class is added, they are."""
    out = tmp_path / "out"
    build(tree, out)
    refreshed: list[str] = []
    real_refresh = link._refresh_classes
    monkeypatch.setattr(link, "_refresh_classes",
                        lambda config, units, fresh: refreshed.extend(units) or real_refresh(config, units, fresh))
    planned: dict[str, list[str]] = {}
    real_plan, real_facts, facts_read = render.render_plan, render.unit_facts, []

    def noted_plan(config: Config, unit: str, *args: Any) -> render.RenderPlan:
        plan = real_plan(config, unit, *args)
        planned[unit] = plan.todo
        return plan
    monkeypatch.setattr(render, "render_plan", noted_plan)
    monkeypatch.setattr(render, "unit_facts", lambda config, unit, rels: facts_read.append(unit) or
                        real_facts(config, unit, rels))
    before = pages(out)
    (tree / "pkg" / "base.py").write_text('"""Bases."""\nimport keyword\n' + BASE_PY.removeprefix('"""Bases."""\n'))
    build(tree, out)
    monkeypatch.setattr(render, "render_plan", real_plan)
    # the caller's links changed (its anchor to make_base), not its page: its facts were not read whole
    assert planned["caller"] == [] and "caller" not in facts_read
    build(tree, tmp_path / "clean-import")
    assert pages(out) == pages(tmp_path / "clean-import")
    assert pages(out)["users/user.py_docs.md"] != before["users/user.py_docs.md"]    # its anchor to Base moved
    assert not {"users", "dotted"} & set(refreshed), refreshed

    # a file that names what base.py does not define yet: its anchors are worked out again once it does
    (tree / "users" / "user.py").write_text(USER_PY.replace('"""Uses `Base`."""',
                                                            '"""Uses `Base`, not `pkg.base.Root`."""'))
    build(tree, out)
    user = pages(out)["users/user.py_docs.md"].decode()
    assert "`pkg.base.Root`" in user and "[`pkg.base.Root`](" not in user     # shown, not linked yet
    refreshed.clear()
    (tree / "pkg" / "base.py").write_text(BASE_PY.replace("class Base:", "class Base:\n    pass\n\n\nclass Root:"))
    build(tree, out)
    # a name added: the walks of the files naming it are made again, the others' anchors only move
    assert "users" in refreshed and "dotted" not in refreshed, refreshed
    root = re.search(r'<a id="(l\d+-class-root)"></a>', pages(out)["pkg/base.py_docs.md"].decode())
    linked = f"[`pkg.base.Root`](../pkg/base.py_docs.md#{root.group(1)})" if root else "no anchor of Root"
    assert linked in pages(out)["users/user.py_docs.md"].decode()
    build(tree, tmp_path / "clean-added")
    assert pages(out) == pages(tmp_path / "clean-added")


def test_a_facts_shards_identities_are_the_same_whichever_decoder_reads_them(tree: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit whose links changed reads only its files' identities from its facts shard: by
    msgspec for a large shard, decoded whole by orjson for a small one; both give the same, and
    neither takes a shard of other files or another extraction key."""
    from kwdocs.config import load_config
    from kwdocs.engine.steps.common import extraction_key
    from kwdocs.store import writer as output
    from kwdocs.store.state import FACTS, shard_path
    out = tmp_path / "out"
    build(tree, out)
    config = load_config(tree, None, {"output": str(out), "html": True})
    for unit, rels in (("pkg", ["pkg/__init__.py", "pkg/base.py"]), ("users", ["users/__init__.py", "users/user.py"])):
        monkeypatch.setattr(render, "WHOLE_SHARD_BYTES", 0)
        by_msgspec = render._identities(config, unit, rels)
        monkeypatch.setattr(render, "WHOLE_SHARD_BYTES", 1 << 30)
        whole = render._identities(config, unit, rels)
        assert whole == by_msgspec and whole is not None and set(whole) == set(rels)
        assert all(facts["sha256"] and facts["path"] == rel for rel, facts in whole.items())
        assert render._identities(config, unit, rels[:1]) is None      # not the shard of these files
    path = shard_path(config, FACTS, "pkg")
    body = output.read_sealed(path)
    assert body is not None and extraction_key(config).encode() in body
    output.write_sealed(config.out, path, body.replace(extraction_key(config).encode(), b"0" * 64))
    assert render._identities(config, "pkg", ["pkg/__init__.py", "pkg/base.py"]) is None   # another key

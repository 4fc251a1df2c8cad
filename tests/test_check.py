"""``kwdocs check`` (writes nothing, judges by content) and ``kwdocs check --fix`` (the hook)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwdocs.config import load_config
from kwdocs.engine import tasks
from kwdocs.store.lock import locked
from tests.conftest import run_kwdocs

CIRCLE = "geometry/shapes/circle.py"


def everything(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``folder``, state included, with content and modification time."""
    return {path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def check(tree: Path, capsys, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = run_kwdocs("check", "--src", str(tree), *extra)
    return code, capsys.readouterr().out


def listed(text: str, label: str) -> set[str]:
    return {line.split(": ", 1)[1] for line in text.splitlines() if line.startswith(label + ": ")}


@pytest.fixture
def built(golden_tree: Path) -> tuple[Path, Path]:
    assert run_kwdocs("build", "--src", str(golden_tree), "-q") == 0
    return golden_tree, golden_tree / "kwdocs-out"


def test_fresh_tree_passes_and_nothing_at_all_is_written(built, capsys):
    tree, out = built
    before = everything(tree)
    code, text = check(tree, capsys)
    assert code == 0, text
    assert "all 39 pages are up to date" in text
    assert everything(tree) == before


def test_every_stale_missing_and_orphaned_page_is_listed(built, capsys):
    tree, out = built
    with open(tree / CIRCLE, "a") as handle:
        handle.write("\n\ndef unit_circle():\n    return Circle()\n")
    (out / "README.md_docs.md").write_text("edited by hand\n")
    (out / "docs/guide.rst_kw.md").unlink()
    # the page of a file deleted long ago, as kwdocs wrote it (a file of the user's is no orphan)
    (out / "docs/gone.py_docs.md").write_bytes((out / "docs/guide.rst_docs.md").read_bytes())
    before = everything(tree)
    code, text = check(tree, capsys)
    assert code == 1
    assert listed(text, "stale") == {f"{CIRCLE}_docs.md", f"{CIRCLE}_kw.md", "geometry/shapes/index.md",
                                     "geometry/shapes/doc.md", "keywords.md", "README.md_docs.md"}
    assert listed(text, "missing") == {"docs/guide.rst_kw.md"}
    assert listed(text, "orphaned") == {"docs/gone.py_docs.md"}
    assert everything(tree) == before


def test_timestamps_do_not_matter_content_does(built, capsys):
    """pre-commit's stash and git checkouts rewrite files with new times and the same content."""
    tree, out = built
    later = time.time() + 100
    for path in list(tree.rglob("*")):
        if path.is_file():
            os.utime(path, (later, later))
    code, text = check(tree, capsys)
    assert code == 0, text
    old = time.time() - 10_000
    page = out / f"{CIRCLE}_docs.md"
    page.write_bytes(page.read_bytes().replace(b"Circle", b"Circel", 1))
    os.utime(page, (old, old))
    code, text = check(tree, capsys)
    assert code == 1 and listed(text, "stale") == {f"{CIRCLE}_docs.md"}


def test_without_any_state_as_in_a_fresh_clone(built, capsys):
    tree, out = built
    shutil.rmtree(out / ".kwdocs")
    code, text = check(tree, capsys)
    assert code == 0, text
    (tree / "tools/make_shapes.py").unlink()
    code, text = check(tree, capsys)
    assert code == 1
    assert listed(text, "orphaned") == {"tools/make_shapes.py_docs.md", "tools/make_shapes.py_kw.md",
                                        "tools/index.md", "tools/doc.md"}
    assert not (out / ".kwdocs").exists()


def test_fix_brings_every_page_back_and_fails_only_when_it_changed_one(built, capsys):
    tree, out = built
    (tree / "geometry/shapes/hexagon.py").write_text("class Hexagon:\n    pass\n")
    (out / "README.md_docs.md").write_text("edited by hand\n")
    (out / "docs/guide.rst_kw.md").unlink()
    (out / "docs/gone.py_docs.md").write_bytes((out / "docs/guide.rst_docs.md").read_bytes())   # left over
    code, text = check(tree, capsys, "--fix")
    assert code == 1, text
    assert "removed orphan: docs/gone.py_docs.md" in text
    assert {"restored: README.md_docs.md", "restored: docs/guide.rst_kw.md"} <= set(text.splitlines())
    assert (out / "geometry/shapes/hexagon.py_docs.md").is_file()
    assert check(tree, capsys)[0] == 0
    code, text = check(tree, capsys, "--fix")
    assert code == 0, text


def test_check_waits_for_a_build_holding_the_output(built, tmp_path):
    tree, out = built
    config = load_config(tree)
    errors = tmp_path / "stderr"
    with locked(config.state), open(errors, "w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "kwdocs", "check", "--src", str(tree)],
                                   stdout=subprocess.PIPE, stderr=stderr, text=True)
        deadline = time.monotonic() + 60
        while "waiting for another kwdocs process" not in errors.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        assert process.poll() is None, "check did not wait for the build holding the lock"
    stdout, _ = process.communicate(timeout=60)
    assert process.returncode == 0, stdout + errors.read_text()
    assert "waiting for another kwdocs process" in errors.read_text()


def test_pages_the_ledger_does_not_know_are_judged_by_rendering_them(built, capsys):
    """State from before the ledger existed (or a lost one): nothing is out of date for that."""
    tree, out = built
    shutil.rmtree(out / ".kwdocs" / "ledger")
    code, text = check(tree, capsys)
    assert code == 0, text
    code, text = check(tree, capsys, "--fix")
    assert code == 0 and "restored" not in text, text


def test_the_ledger_forgets_the_pages_kwdocs_removes(built):
    """A page kwdocs removes leaves the ledger with it, as the journal notes the removal: the
    ledger is folded at the end of a cold build without looking at which of 25,000 pages exist."""
    from kwdocs.store import journal as ledger
    tree, out = built
    config = load_config(str(tree), None, {})
    pages = {f"{CIRCLE}_{kind}.md" for kind in ("docs", "kw")}
    assert pages <= set(ledger.load(config))
    source = (tree / CIRCLE).read_text()
    (tree / CIRCLE).unlink()
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    assert not (out / f"{CIRCLE}_docs.md").exists()
    assert not pages & set(ledger.load(config)), "a removed page is still vouched for"
    ledger.compact(config, force=True)
    assert not pages & set(ledger.load(config))
    (tree / CIRCLE).write_text(source)
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    assert pages <= set(ledger.load(config)), "a page written again is vouched for again"


def test_a_deleted_folder_leaves_orphans_that_fix_removes(built, capsys):
    """The pages of a folder whose unit went away are pruned once pages are rendered; check
    runs the same steps."""
    tree, out = built
    shutil.rmtree(tree / "docs")
    code, text = check(tree, capsys)
    assert code == 1
    assert listed(text, "orphaned") == {"docs/doc.md", "docs/index.md"} | {
        f"docs/{name}_{kind}.md" for name in ("guide.rst", "logo.png", "notes.txt") for kind in ("docs", "kw")}
    assert listed(text, "stale") == {"doc.md", "index.md"}
    assert check(tree, capsys, "--fix")[0] == 1
    assert not (out / "docs").exists()
    assert check(tree, capsys)[0] == 0


def test_check_and_a_build_write_no_file_outside_the_output_folder(tmp_path, monkeypatch, capsys):
    """Neither check's dry run (doit's records are read into memory) nor a build that has
    Universal Ctags read a Tcl file (texts are sent on its standard input) makes a temporary
    file or folder: nothing outside the output folder is written."""
    import shutil
    import tempfile

    from tests.conftest import run_kwdocs

    def refused(*args, **kwargs):
        raise AssertionError("a temporary file or folder was made")

    for name in ("mkdtemp", "mkstemp", "NamedTemporaryFile", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, refused)
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "app.py").write_text('"""An app."""\n\n\ndef run():\n    return 1\n')
    (src / "suite.tcl").write_text("proc check_app {} {\n  return 1\n}\n")
    where = ("--src", str(src), "--out", str(out), "-j", "1")
    assert run_kwdocs("build", *where) == 0
    if shutil.which("ctags"):
        assert "**`check_app`**" in (out / "suite.tcl_docs.md").read_text()
    (src / "app.py").write_text('"""An app."""\n\n\ndef run():\n    return 2\n')
    capsys.readouterr()
    assert run_kwdocs("check", *where[:4]) == 1       # stale: judged by a dry run with doit's records
    assert "app.py_docs.md" in capsys.readouterr().out
    shutil.rmtree(out / ".kwdocs")
    assert run_kwdocs("check", *where[:4]) == 1       # and without state


def test_a_build_brings_back_a_page_deleted_by_hand(built, capsys):
    """The sources did not change, but a page's folder did: the build writes the page again (as
    ``check --fix`` would), and only once."""
    tree, out = built
    page = out / f"{CIRCLE}_docs.md"
    before = page.read_bytes()
    page.unlink()
    capsys.readouterr()
    assert run_kwdocs("build", "--src", str(tree)) == 0
    assert "1 pages written" in capsys.readouterr().out
    assert page.read_bytes() == before
    assert run_kwdocs("build", "--src", str(tree)) == 0
    assert "0 pages written" in capsys.readouterr().out
    assert check(tree, capsys)[0] == 0


def test_a_page_deleted_by_hand_comes_back_when_a_source_changed_too(built, capsys):
    """The same when a source was edited as well: the build rewrites that source's pages for the
    edit, and the deleted page of another file because it is not what kwdocs wrote."""
    tree, out = built
    page = out / f"{CIRCLE}_docs.md"
    before = page.read_bytes()
    page.unlink()
    with open(tree / "geometry/shapes/square.py", "a") as source:
        source.write("\n\ndef added():\n    return 1\n")
    capsys.readouterr()
    assert run_kwdocs("build", "--src", str(tree)) == 0
    assert "1 pages written again" in capsys.readouterr().out
    assert page.read_bytes() == before
    assert check(tree, capsys)[0] == 0


# ---------------------------------------------------------------- the site, whatever the settings say

def site_files(out: Path) -> dict[str, bytes]:
    """Every file of the site (``out/site``), with its bytes."""
    return {path.relative_to(out).as_posix(): path.read_bytes()
            for path in sorted((out / "site").rglob("*")) if path.is_file()}


def test_after_build_html_check_judges_the_site_and_fix_restores_it(golden_tree, tmp_path, capsys):
    """After ``kwdocs build --html`` (no ``html = true`` in the settings), a site page, a search
    script and the folder tree edited by hand are stale for ``check``, with or without the state
    folder, and ``check --fix`` gives back the site of a clean build, byte for byte."""
    tree, out = golden_tree, golden_tree / "kwdocs-out"
    assert run_kwdocs("build", "--src", str(tree), "--html", "-q") == 0
    clean = site_files(out)
    code, text = check(tree, capsys)
    assert code == 0, text
    edited = {"site/geometry/shapes/circle.py_docs.html", "site/index.html", "site/_kwdocs/tree.js",
              "site/_kwdocs/keywords/buckets.js"}
    edited.add(next(page for page in sorted(clean) if page.startswith("site/_kwdocs/fulltext/")
                    and not page.endswith("buckets.js")))
    edited.add(next(page for page in sorted(clean) if page.startswith("site/_kwdocs/keywords/")
                    and not page.endswith("buckets.js")))
    for page in edited:
        with open(out / page, "ab") as handle:
            handle.write(b"\n// edited by hand\n")
    (out / "site/geometry/shapes/square.py_kw.html").unlink()
    before = everything(tree)
    code, text = check(tree, capsys)
    assert code == 1, text
    assert listed(text, "stale") == edited
    assert listed(text, "missing") == {"site/geometry/shapes/square.py_kw.html"}
    assert everything(tree) == before
    (out / ".kwdocs").rename(tmp_path / "state")     # the pages' links name the output folder: same place
    code, without_state = check(tree, capsys)
    (tmp_path / "state").rename(out / ".kwdocs")
    assert code == 1
    assert [listed(without_state, label) for label in ("stale", "missing", "orphaned")] == \
        [edited, {"site/geometry/shapes/square.py_kw.html"}, set()]
    code, text = check(tree, capsys, "--fix")
    assert code == 1, text
    assert listed(text, "restored") == edited | {"site/geometry/shapes/square.py_kw.html"}
    assert site_files(out) == clean
    code, text = check(tree, capsys)
    assert code == 0, text


def test_the_site_of_a_deleted_source_is_an_orphan_for_check(golden_tree, capsys):
    """A site page kwdocs wrote but would not write now, left behind: check names it, --fix removes it."""
    tree, out = golden_tree, golden_tree / "kwdocs-out"
    assert run_kwdocs("build", "--src", str(tree), "--html", "-q") == 0
    left = out / "site/geometry/shapes/gone.py_docs.html"
    left.write_bytes((out / "site/geometry/shapes/circle.py_docs.html").read_bytes())
    code, text = check(tree, capsys)
    assert code == 1, text
    assert listed(text, "orphaned") == {"site/geometry/shapes/gone.py_docs.html"}
    code, text = check(tree, capsys, "--fix")
    assert code == 1 and not left.exists(), text
    assert check(tree, capsys)[0] == 0


def test_the_site_names_check_knows_are_the_sites_own():
    """The site's format (``kwdocs.site.format``) names the site's files without importing the
    site's renderer (heavy): the same names."""
    from kwdocs.site import format as owned, html, search
    from kwdocs.store import state

    assert set(owned.SITE_OWN_FILES) == {*html.STATIC_FILES, html.PYGMENTS_CSS, search.TREE_FILE}
    assert owned.SITE_ASSETS == f"{html.SITE_FOLDER}/{html.STATIC_FOLDER}/"
    assert set(owned.SITE_INDEXES) == {(index.state, index.scripts) for index in
                                       (search.KEYWORD_INDEX, search.FULLTEXT_INDEX)}
    assert (owned.SITE_INDEX_META, owned.SITE_INDEX_LIST) == (search.META_FILE, search.BUCKETS_FILE)
    assert {state.SEARCH, state.FULLTEXT} == {folder for folder, _ in owned.SITE_INDEXES}


def test_a_large_trees_check_without_state_writes_nothing_either(built, capsys, monkeypatch):
    """A large tree's build runs its link and keyword steps in a fresh interpreter
    (``tasks.FRESH_STEP_UNITS``); check's dry run runs them in place, where writes are records."""
    tree, out = built
    shutil.rmtree(out / ".kwdocs")
    monkeypatch.setattr(tasks, "FRESH_STEP_UNITS", 1)
    before = everything(tree)
    code, text = check(tree, capsys)
    assert code == 0, text
    assert everything(tree) == before

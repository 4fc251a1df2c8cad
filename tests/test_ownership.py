"""The output folder is kwdocs' only where kwdocs wrote it, and another output folder is never an input.

A user may point ``--out`` at a folder of their own (an MkDocs ``docs/``):
kwdocs then refuses to replace any file it did not write (one line naming
it, exit 2, nothing written), ``check`` never calls such a file an orphan,
and ``clean`` leaves it.  Without state (a fresh clone of committed pages)
kwdocs knows its own pages by their footer line, and HTML pages by their
``kwdocs-page`` marker.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.output_checks import kwdocs_command, pages, tree_state

USER_FILES = {
    "index.md": "# My site\n\nWelcome.\n",
    "api/index.md": "# API\n",
    "pkg/notes_docs.md": "notes that happen to be named like a page\n",
    "keywords-extra.md": "my own keyword list\n",
    "site/about.html": "<p>mine</p>\n",
    "site/pkg/mine.html": "<p>mine too</p>\n",
    "site/index.html": "<p>an MkDocs site's front page</p>\n",
}
BESIDE_PAGES = [rel for rel in USER_FILES if rel not in ("index.md", "site/index.html")]   # in no page's place


def kwdocs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(kwdocs_command(*args), capture_output=True, text=True, timeout=300)


def make_tree(src: Path) -> None:
    (src / "pkg").mkdir(parents=True)
    (src / "pkg/a.py").write_text("def one():\n    return 1\n")
    (src / "pkg/b.py").write_text("from pkg.a import one\n\n\ndef two():\n    return one() + 1\n")


def put_user_files(out: Path, names=USER_FILES) -> None:
    for rel in names:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(USER_FILES[rel])


def user_files(out: Path, names) -> dict[str, str]:
    """The user's files ``names`` as they are now (all there and unchanged: ``USER_FILES``'s)."""
    return {rel: (out / rel).read_text() for rel in names if (out / rel).is_file()}


def one_line_refusal(result: subprocess.CompletedProcess, out: Path, rels: list[str]) -> None:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"kwdocs: {out / rel}: not written by kwdocs; refusing to overwrite it (move it away or choose another --out)"
        for rel in sorted(rels)]


def test_a_build_replaces_no_file_it_did_not_write_and_writes_nothing_first(tmp_path):
    src, out = tmp_path / "src", tmp_path / "docs"
    make_tree(src)
    put_user_files(out, ["index.md", "api/index.md"])
    (out / "pkg").mkdir()
    (out / "pkg/doc.md").write_text("my own pkg page\n")
    before = tree_state(tmp_path)
    result = kwdocs("build", "--src", str(src), "--out", str(out))
    one_line_refusal(result, out, ["index.md", "pkg/doc.md"])
    assert tree_state(tmp_path) == before            # not even the state folder or its lock
    one_line_refusal(kwdocs("check", "--src", str(src), "--out", str(out), "--fix"), out, ["index.md", "pkg/doc.md"])
    one_line_refusal(kwdocs("check", "--src", str(src), "--out", str(out)), out, ["index.md", "pkg/doc.md"])
    assert tree_state(tmp_path) == before


def test_a_file_added_later_may_not_replace_a_users_file_either(tmp_path):
    """The incremental path (a few changed files) checks the pages it adds."""
    src, out = tmp_path / "src", tmp_path / "docs"
    make_tree(src)
    assert kwdocs("build", "--src", str(src), "--out", str(out)).returncode == 0
    (src / "pkg/c.py").write_text("def three():\n    return 3\n")
    (src / "new").mkdir()
    (src / "new/d.py").write_text("def four():\n    return 4\n")
    (out / "pkg/c.py_kw.md").write_text("mine\n")
    (out / "new").mkdir()
    (out / "new/index.md").write_text("mine as well\n")
    before = pages(out)
    one_line_refusal(kwdocs("build", "--src", str(src), "--out", str(out)), out, ["new/index.md", "pkg/c.py_kw.md"])
    assert pages(out) == before
    (out / "pkg/c.py_kw.md").unlink()
    shutil.rmtree(out / "new")
    assert kwdocs("build", "--src", str(src), "--out", str(out)).returncode == 0
    assert (out / "new/d.py_docs.md").is_file()


def test_check_and_fix_never_call_a_users_file_an_orphan_with_or_without_state(tmp_path):
    src, out = tmp_path / "src", tmp_path / "docs"
    make_tree(src)
    put_user_files(out, BESIDE_PAGES)
    assert kwdocs("build", "--src", str(src), "--out", str(out), "--html").returncode == 0
    for state in ("kept", "lost"):
        if state == "lost":         # a fresh clone: committed pages, no .kwdocs
            shutil.rmtree(out / ".kwdocs")
        result = kwdocs("check", "--src", str(src), "--out", str(out))
        assert (result.returncode, "orphaned" in result.stdout) == (0, False), (state, result.stdout)
        result = kwdocs("check", "--src", str(src), "--out", str(out), "--fix")
        assert result.returncode == 0, (state, result.stdout, result.stderr)
        assert user_files(out, BESIDE_PAGES) == {rel: USER_FILES[rel] for rel in BESIDE_PAGES}


def test_without_state_kwdocs_still_knows_its_own_pages_by_their_footer(tmp_path):
    """Committed pages and no state: the build goes ahead over them, check finds the orphans of a
    deleted file and --fix removes those, and nothing of the user's."""
    src, out = tmp_path / "src", tmp_path / "docs"
    make_tree(src)
    put_user_files(out, ["api/index.md", "pkg/notes_docs.md"])
    assert kwdocs("build", "--src", str(src), "--out", str(out)).returncode == 0
    shutil.rmtree(out / ".kwdocs")
    (src / "pkg/b.py").unlink()
    result = kwdocs("check", "--src", str(src), "--out", str(out))
    assert result.returncode == 1
    assert {line for line in result.stdout.splitlines() if line.startswith("orphaned")} == {
        "orphaned: pkg/b.py_docs.md", "orphaned: pkg/b.py_kw.md"}
    result = kwdocs("check", "--src", str(src), "--out", str(out), "--fix")
    assert result.returncode == 1, result.stderr
    mine = ("api/index.md", "pkg/notes_docs.md")
    assert not (out / "pkg/b.py_docs.md").exists() and user_files(out, mine) == {rel: USER_FILES[rel] for rel in mine}
    assert kwdocs("check", "--src", str(src), "--out", str(out)).returncode == 0


@pytest.mark.parametrize("html", [True, False], ids=["with the site", "without"])
def test_clean_removes_only_what_kwdocs_wrote_then_the_folders_it_emptied(tmp_path, html):
    """Without the site, a ``site/index.html`` of the user's (an MkDocs build) is no page of kwdocs'."""
    src, out = tmp_path / "src", tmp_path / "docs"
    make_tree(src)
    mine = BESIDE_PAGES + ([] if html else ["site/index.html"])
    put_user_files(out, mine)
    (out / "empty-of-mine").mkdir()
    assert kwdocs("build", "--src", str(src), "--out", str(out), *(["--html"] if html else [])).returncode == 0
    assert len(pages(out)) > (20 if html else 10)
    result = kwdocs("clean", "--src", str(src), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert set(pages(out)) == set(mine) and user_files(out, mine) == {rel: USER_FILES[rel] for rel in mine}
    folders = {path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_dir()}
    assert folders == {"api", "pkg", "site", "site/pkg", "empty-of-mine"}


def test_clean_after_the_state_was_lost_removes_kwdocs_pages_by_their_looks(tmp_path):
    src, out = tmp_path / "src", tmp_path / "docs"
    make_tree(src)
    put_user_files(out, ["api/index.md", "site/pkg/mine.html"])
    assert kwdocs("build", "--src", str(src), "--out", str(out), "--html").returncode == 0
    shutil.rmtree(out / ".kwdocs")
    assert kwdocs("clean", "--src", str(src), "--out", str(out)).returncode == 0
    assert set(pages(out)) == {"api/index.md", "site/pkg/mine.html"}


def test_another_kwdocs_output_folder_in_the_tree_is_never_an_input(tmp_path):
    """``build --src t`` writes ``t/kwdocs-out``; a build of ``t`` elsewhere must not document it,
    with its state folder or, in a clone where it was committed, without."""
    src = tmp_path / "t"
    make_tree(src)
    assert kwdocs("build", "--src", str(src)).returncode == 0
    assert (src / "kwdocs-out/pkg/a.py_docs.md").is_file()
    shutil.copytree(src / "kwdocs-out", src / "vendor/docs")     # a committed copy, state and all
    shutil.copytree(src / "kwdocs-out", src / "old-docs", ignore=shutil.ignore_patterns(".kwdocs"))
    for number in (1, 2):
        other = tmp_path / f"o{number}"
        result = kwdocs("build", "--src", str(src), "--out", str(other))
        assert result.returncode == 0, result.stderr
        assert sorted(page for page in pages(other) if page.endswith("_docs.md")) == [
            "pkg/a.py_docs.md", "pkg/b.py_docs.md"]
        assert kwdocs("check", "--src", str(src), "--out", str(other)).returncode == 0
        shutil.rmtree(src / "kwdocs-out/.kwdocs", ignore_errors=True)

"""A build with nothing to do (issue 30): it stops at the snapshot, importing only what that
check needs, and still notices every kind of change a full build would."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwdocs import scan
from kwdocs.cli import main
from kwdocs.config import load_config
from kwdocs.store import snapshot

# what a build with something to do imports, and one with nothing to do must not
BUILD_ONLY = ("doit", "jinja2", "kwdocs.engine.runner", "kwdocs.engine.restore", "kwdocs.engine.rescan",
              "kwdocs.engine.tasks", "kwdocs.pages.model")


def _tree(root: Path) -> tuple[Path, Path]:
    src, out = root / "src", root / "out"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text('def area(r):\n    """The area."""\n    return 3 * r * r\n')
    (src / "pkg" / "other.py").write_text("def other():\n    return 2\n")
    return src, out


def _imported(src: Path, out: Path) -> tuple[str, list[str]]:
    """A build in a fresh process: its exit code and which of ``BUILD_ONLY`` it imported."""
    code = ("import sys; from kwdocs.cli import main; "
            f"code = main(['build', '--src', {str(src)!r}, '--out', {str(out)!r}, '-q']); "
            f"print(code, *[name for name in {BUILD_ONLY!r} if name in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = done.stdout.splitlines()    # the summary line, then what the code printed
    assert lines, done.stderr
    words = lines[-1].split()
    return words[0], words[1:]


def test_a_build_with_nothing_to_do_imports_none_of_the_build(tmp_path):
    """The no-op stops at the snapshot: doit, the templates, the runner, the repair of pages
    changed by hand and the rescan are imported only by a build that has work to do."""
    src, out = _tree(tmp_path)
    code, imported = _imported(src, out)     # the first build
    assert code == "0" and {"doit", "jinja2", "kwdocs.engine.runner"} <= set(imported)
    assert _imported(src, out) == ("0", [])
    (src / "pkg" / "mod.py").write_text("def area(r):\n    return 4 * r * r\n")
    code, imported = _imported(src, out)     # an edit: the build's code again
    assert code == "0" and "kwdocs.engine.rescan" in imported and "doit" in imported


def _build(src: Path, out: Path, *extra: str) -> None:
    assert main(["build", "--src", str(src), "--out", str(out), "-q", *extra]) == 0


def _page(out: Path, rel: str) -> str:
    return (out / f"{rel}_docs.md").read_text()


def test_a_build_after_a_no_op_still_sees_every_kind_of_change(tmp_path):
    """Each change a full build would act on, made after a no-op build, is in the next pages."""
    src, out = _tree(tmp_path)
    _build(src, out)
    _build(src, out)                                                        # nothing to do
    (src / "pkg" / "mod.py").write_text("def volume(r):\n    return r ** 3\n")      # edited
    _build(src, out)
    assert "volume" in _page(out, "pkg/mod.py") and "area" not in _page(out, "pkg/mod.py")
    (src / "pkg" / "new.py").write_text("def added():\n    return 1\n")             # added
    _build(src, out)
    assert "added" in _page(out, "pkg/new.py")
    (src / "pkg" / "new.py").rename(src / "pkg" / "moved.py")                       # renamed
    _build(src, out)
    assert not (out / "pkg/new.py_docs.md").exists() and "added" in _page(out, "pkg/moved.py")
    (src / "pkg" / "other.py").unlink()                                              # removed
    _build(src, out)
    assert not (out / "pkg/other.py_docs.md").exists()
    (out / "pkg/mod.py_docs.md").unlink()                                            # a page deleted by hand
    _build(src, out)
    assert "volume" in _page(out, "pkg/mod.py")
    (src / "pyproject.toml").write_text('[tool.kwdocs]\nproject_name = "Renamed project"\n')   # settings
    _build(src, out)
    assert "Renamed project" in (out / "index.md").read_text()
    (out / ".kwdocs" / "snapshot.json").unlink()                                     # state lost
    _build(src, out)
    assert "volume" in _page(out, "pkg/mod.py")


@pytest.mark.parametrize("secret_files", [["*.secret", "*.[ch]"], ["*", "x"], ["id_*", "?ecret", "a[!b]c*"]],
                         ids=["a glob ending in a set", "a bare star", "heads and wildcards"])
def test_the_scans_screen_of_names_answers_as_its_regex(tmp_path, secret_files):
    """Names go through a screen of the globs' literal ends before the regex: for any globs,
    it says of a name what the regex alone says."""
    rules = scan._Rules(load_config(tmp_path, None, {"output": str(tmp_path / "out"), "secret_files": secret_files}))
    plain = scan._plain_names(rules)
    assert plain is not None
    names = ["ok.py", "x.c", "x.h", "x.cc", "x", "xx", "id_rsa", "id", "secret", "ssecret", "abc", "abcd", "aXcd",
             "a~", ".x.swp", "4913", "x.tmp", "tab\tname", "\udcff.py", "café.py", "", "config", ".env.local"]
    for name in names:
        assert plain.is_plain(name) == (plain.regex.match(name) is not None), name


# ---------------------------------------------------------------- the last scan taken again

WINDOW_NS = 50_000_000      # the racy window in these tests: the trees are made 0.1 s before the scan


def _scan_tree(root: Path) -> tuple[Path, Path]:
    """A tree with what a scan's file list depends on besides the files: a .gitignore, the root
    exclude file, a link to an ignored file, a link to nowhere, another output folder."""
    src, out = root / "src", root / "out"
    for folder in ("pkg/sub", "links", "build", "other/.kwdocs", ".git/info"):
        (src / folder).mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("def area(r):\n    return r\n")
    (src / "pkg" / "other.py").write_text("def other():\n    return 2\n")
    (src / "pkg" / "sub" / "deep.py").write_text("X = 1\n")
    (src / ".gitignore").write_text("build/\n*.log\n")
    (src / "build" / "made.py").write_text("def made():\n    return 3\n")
    (src / "links" / "made.py").symlink_to("../build/made.py")
    (src / "links" / "gone.py").symlink_to("../pkg/nothing.py")
    (src / "other" / ".kwdocs" / "lock").write_text("")
    (src / "other" / "page.py").write_text("def page():\n    return 4\n")
    return src, out


def _write_in_place(path: Path, text: str) -> None:
    """Rewrite a file's contents without making a new file (its folder's times stay)."""
    with open(path, "r+") as handle:
        handle.write(text)
        handle.truncate()


CHANGES = {
    "a file edited": lambda src: _write_in_place(src / "pkg" / "mod.py", "def volume(r):\n    return r ** 3\n"),
    "a file touched": lambda src: os.utime(src / "pkg" / "other.py", ns=(1, 1)),
    "an ignored file behind a link edited": lambda src: _write_in_place(src / "build" / "made.py", "Y = 22\n"),
    "an ignored file behind a link removed": lambda src: (src / "build" / "made.py").unlink(),
    "a link's missing target made": lambda src: (src / "pkg" / "nothing.py").write_text("Z = 1\n"),
    "a file added deep down": lambda src: (src / "pkg" / "sub" / "new.py").write_text("N = 1\n"),
    "a file removed": lambda src: (src / "pkg" / "sub" / "deep.py").unlink(),
    "a file renamed": lambda src: (src / "pkg" / "other.py").rename(src / "pkg" / "renamed.py"),
    "a folder added": lambda src: (src / "pkg" / "fresh").mkdir(),
    ".gitignore edited in place": lambda src: _write_in_place(src / ".gitignore", "build/\n*.log\nother.py\n"),
    ".git/info/exclude made": lambda src: (src / ".git" / "info" / "exclude").write_text("deep.py\n"),
    "another output folder's mark removed": lambda src: (src / "other" / ".kwdocs" / "lock").unlink(),
}
# the changes a file's own stat shows: the list is taken again and no folder listed
STAT_ONLY = {"a file edited", "a file touched", "an ignored file behind a link edited"}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_scan_taken_again_answers_as_a_walk_of_the_tree(tmp_path, monkeypatch, change):
    """The last scan's file list, taken again when none of its folders, ignore files, links or
    other output folders changed, is what a walk of the tree finds after any change; after a
    change only files' stats show, no folder is listed."""
    monkeypatch.setattr(scan, "FOLDER_RACY_NS", WINDOW_NS)
    src, out = _scan_tree(tmp_path)
    config = load_config(src, None, {"output": str(out)})
    time.sleep(0.1)
    _build(src, out)
    last = snapshot.last_scan(config)
    assert last is not None and last["stamps"]["links"] == ["links/gone.py", "links/made.py"]
    CHANGES[change](src)
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real_scandir(path))
    again = scan.scan(config, last)
    monkeypatch.setattr(os, "scandir", real_scandir)
    walked = scan.scan(config)
    assert (again.files, again.problems) == (walked.files, walked.problems)
    assert snapshot.tree_snapshot(config, again) == snapshot.tree_snapshot(config, walked)
    assert (listed == []) == (change in STAT_ONLY)


def test_a_no_op_build_lists_no_folder_and_the_next_build_sees_a_new_file(tmp_path, monkeypatch):
    """What a user sees: a build with nothing to do reads no folder listing, and a file added
    after it is documented by the next build.  The first build, of a tree made just now, saves
    no stamps; the no-op after it, whose walk can, saves them."""
    src, out = _tree(tmp_path)
    monkeypatch.setattr(scan, "FOLDER_RACY_NS", 600 * 10 ** 9)     # the build ends well within it
    _build(src, out)
    config = load_config(src, None, {"output": str(out)})
    assert snapshot.last_scan(config)["stamps"] is None
    monkeypatch.setattr(scan, "FOLDER_RACY_NS", WINDOW_NS)
    time.sleep(0.1)
    _build(src, out)
    assert snapshot.last_scan(config)["stamps"] is not None
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real_scandir(path))
    _build(src, out)
    assert [path for path in listed if os.fspath(path).startswith(os.fspath(src))] == []
    (src / "pkg" / "new.py").write_text("def added():\n    return 1\n")
    _build(src, out)
    assert listed and "added" in _page(out, "pkg/new.py")


def _saved(scanned: scan.ScanResult) -> dict:
    """A scan as ``snapshot.save_scan`` keeps it and ``snapshot.last_scan`` gives it back."""
    return {"files": [list(source) for source in scanned.files], "problems": [list(p) for p in scanned.problems],
            "stamps": scanned.stamps, "digest": None}


def test_folders_changed_just_before_the_scan_are_vouched_for_once_the_window_has_passed(tmp_path, monkeypatch):
    """A folder changed within the racy window of its listing could change again under the same
    time stamp: its stamps are not taken again until the window has passed with the folder as
    it was listed (a build's end), and a folder changed since is never vouched for."""
    window = 300_000_000
    monkeypatch.setattr(scan, "FOLDER_RACY_NS", window)
    src, _ = _tree(tmp_path)
    config = load_config(src, None, {"output": str(tmp_path / "out")})
    made_now = scan.scan(config)
    assert made_now.stamps["unsettled"] and scan.Stamps.reuse(config, _saved(made_now)) is None
    scan.settle(made_now)
    assert made_now.stamps is None      # too soon
    listed = scan.scan(config)
    time.sleep(window / 1e9 + 0.05)
    scan.settle(listed)
    assert listed.stamps is not None and listed.stamps["unsettled"] == {}
    again = scan.Stamps.reuse(config, _saved(listed))
    assert again is not None and again.files == scan.scan(config).files
    (src / "fresh").mkdir()
    (src / "fresh" / "one.py").write_text("O = 1\n")
    changed = scan.scan(config)
    assert sorted(changed.stamps["unsettled"]) == ["", "fresh"]     # the root got a folder
    (src / "fresh" / "two.py").write_text("T = 2\n")     # after the listing
    time.sleep(window / 1e9 + 0.05)
    scan.settle(changed)
    assert changed.stamps is None


def test_a_tree_built_right_after_it_was_made_is_not_walked_by_the_next_build(tmp_path, monkeypatch):
    """A clone built at once: its folders changed just before the scan, and the build's end,
    past the racy window, vouches for them, so the no-op after it lists no folder."""
    monkeypatch.setattr(scan, "FOLDER_RACY_NS", 20_000_000)
    src, out = _tree(tmp_path)
    _build(src, out)
    config = load_config(src, None, {"output": str(out)})
    assert snapshot.last_scan(config)["stamps"]["unsettled"] == {}
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real_scandir(path))
    _build(src, out)
    assert [path for path in listed if os.fspath(path).startswith(os.fspath(src))] == []


def test_a_named_pipe_for_an_ignore_file_does_not_stop_the_scan(tmp_path):
    """A named pipe where ``.git/info/exclude`` goes is no ignore file: the walk, the stamps and
    the next build's check of them read no pipe (one would wait for a writer for ever)."""
    src, out = _tree(tmp_path)
    (src / ".git" / "info").mkdir(parents=True)
    os.mkfifo(src / ".git" / "info" / "exclude")
    code = ("from kwdocs.cli import main; "
            f"assert main(['build', '--src', {str(src)!r}, '--out', {str(out)!r}, '-q']) == 0; "
            f"assert main(['build', '--src', {str(src)!r}, '--out', {str(out)!r}, '-q']) == 0")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "area" in _page(out, "pkg/mod.py")


def test_files_made_in_the_working_folder_or_the_tree_do_not_change_the_settings(tmp_path, monkeypatch):
    """``python -m`` and doit put the working folder (the tree, in a dodo.py's case) on the
    import path, and doit writes its records there: the settings a build is vouched for by stay
    the same (installing a package, elsewhere on the path, still changes them); a working folder
    removed since is no error."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n")
    site = tmp_path / "site-packages"
    site.mkdir()
    config = load_config(tree, None, {"output": str(tmp_path / "out")})
    monkeypatch.chdir(tree)
    monkeypatch.setattr(sys, "path", [sys.path[0], str(tree), "", str(site), *sys.path[1:]])
    before = snapshot.settings_digest(config)
    time.sleep(0.01)
    (tree / ".doit.db").write_text("records")
    assert snapshot.settings_digest(config) == before
    (site / "newpackage").mkdir()
    os.utime(site, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert snapshot.settings_digest(config) != before
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setattr(sys, "path", [*sys.path, "relative/folder"])
    assert len(snapshot.settings_digest(config)) == 64

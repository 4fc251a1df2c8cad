"""A build with nothing to do (issue 30): it stops at the snapshot, importing only what that
check needs, and still notices every kind of change a full build would."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kwdocs import scan
from kwdocs.cli import main
from kwdocs.config import load_config

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

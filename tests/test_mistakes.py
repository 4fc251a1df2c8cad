"""The user's mistakes get one line and exit 2, never a traceback.

A read-only or full disk (a real small tmpfs, mounted when the tests run as
root and may mount; skipped otherwise), an output path that is a file, a
source path that is a file, an unreadable source folder.  After the disk
filled, the next build with space (edits in between) equals a clean build.
"""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kwdocs.cli import main
from tests.output_checks import kwdocs_command, pages


def kwdocs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(kwdocs_command(*args), capture_output=True, text=True, timeout=300)


def one_line(result: subprocess.CompletedProcess, *words: str) -> str:
    """The exit code is 2 and stderr one line holding ``words``; that line."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


def make_tree(src: Path, files: int) -> None:
    for number in range(files):
        path = src / f"pkg{number % 7}" / f"module_{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def function_{number}_{k}(a, b=1):\n    return a + b * {k}\n\n" for k in range(20))
        path.write_text(f'"""Module {number}."""\n\n{body}')


@pytest.fixture
def small_disk(tmp_path):
    """A 512 kB tmpfs, unmounted after the test; the test is skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root and a system that allows it")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def remount(mount: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(mount)], check=True)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_disk_is_one_line_and_the_next_build_with_space_equals_a_clean_build(small_disk, tmp_path, jobs):
    src, out = tmp_path / "src", small_disk / "out"
    make_tree(src, 120)
    one_line(kwdocs("build", "--src", str(src), "--out", str(out), "-j", jobs), "no space left")
    with open(src / "pkg1/module_1.py", "a") as handle:        # edits while the disk is full
        handle.write("\n\ndef added_after_the_disk_filled():\n    return 0\n")
    (src / "pkg2/module_2.py").unlink()
    (src / "pkg3/new_module.py").write_text("def brand_new():\n    return 1\n")
    remount(small_disk, "size=64m")
    result = kwdocs("build", "--src", str(src), "--out", str(out), "-j", jobs)
    assert result.returncode == 0, result.stderr
    assert kwdocs("check", "--src", str(src), "--out", str(out)).returncode == 0
    recovered = pages(out)
    shutil.rmtree(out)      # a clean build at the same place (pages link to sources relatively)
    assert kwdocs("build", "--src", str(src), "--out", str(out), "-j", jobs).returncode == 0
    assert recovered == pages(out)
    assert "added_after_the_disk_filled" in recovered["pkg1/module_1.py_kw.md"].decode()


def test_a_disk_too_full_for_doits_database_journal_is_one_line_never_a_traceback(small_disk, tmp_path):
    """With a few kB left, a page write failed, and then doit's removal of the failed task's
    record failed too (sqlite's journal): its traceback came before kwdocs' line, and the
    summary after it."""
    src, out = tmp_path / "src", small_disk / "out"
    make_tree(src, 8)
    remount(small_disk, "size=2m")
    assert kwdocs("build", "--src", str(src), "--out", str(out), "-j", "1").returncode == 0
    filler = small_disk / "filler"
    for jobs in ("1", "2"):
        with open(src / "pkg1/module_1.py", "a") as handle:
            handle.write(f"\n\ndef added_with_{jobs}_jobs():\n    return 0\n")
        free = os.statvfs(small_disk)
        filler.write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 4096))    # one page of room left
        one_line(kwdocs("build", "--src", str(src), "--out", str(out), "-j", jobs), "no space left")
        filler.unlink()
    assert kwdocs("build", "--src", str(src), "--out", str(out)).returncode == 0
    recovered = pages(out)
    shutil.rmtree(out)
    assert kwdocs("build", "--src", str(src), "--out", str(out)).returncode == 0
    assert recovered == pages(out) and "added_with_2_jobs" in recovered["pkg1/module_1.py_kw.md"].decode()


def test_a_read_only_output_is_one_line_and_check_still_answers(small_disk, tmp_path):
    src, out = tmp_path / "src", small_disk / "out"
    make_tree(src, 3)
    remount(small_disk, "size=2m")      # room for the state as it grows: this test is about "ro"
    assert kwdocs("build", "--src", str(src), "--out", str(out)).returncode == 0
    (src / "pkg0/module_0.py").write_text("def changed():\n    return 2\n")
    remount(small_disk, "ro")
    one_line(kwdocs("build", "--src", str(src), "--out", str(out)), str(out), "read-only")
    one_line(kwdocs("check", "--src", str(src), "--out", str(out), "--fix"), "read-only")
    result = kwdocs("check", "--src", str(src), "--out", str(out))
    assert (result.returncode, "Traceback" in result.stderr) == (1, False)
    assert "stale: pkg0/module_0.py_docs.md" in result.stdout


def test_an_output_path_that_is_a_file_and_a_source_path_that_is_a_file(tmp_path):
    src = tmp_path / "src"
    make_tree(src, 1)
    (tmp_path / "afile").write_text("not a folder\n")
    for out in (tmp_path / "afile", tmp_path / "afile/below"):
        one_line(kwdocs("build", "--src", str(src), "--out", str(out)), f"{tmp_path / 'afile'} is a file, not a folder")
    one_line(kwdocs("build", "--src", str(src / "pkg0/module_0.py")), "module_0.py: is a file, not a folder")
    assert (tmp_path / "afile").read_text() == "not a folder\n"


def deny(monkeypatch, folder: Path) -> None:
    """Make ``folder`` behave as a mode-000 folder does for a user who is not root: it can be
    seen, not listed, and nothing in it opened or looked at."""
    denied = os.fspath(folder)

    def refused(path) -> bool:
        path = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
        return path.startswith(denied + os.sep)

    def guard(real, listing=False):
        def call(path=".", *args, **kwargs):
            if refused(path) or listing and os.fspath(path) == denied:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)
        return call

    monkeypatch.setattr(os, "scandir", guard(os.scandir, listing=True))
    monkeypatch.setattr(os, "listdir", guard(os.listdir, listing=True))
    monkeypatch.setattr(os, "stat", guard(os.stat))
    monkeypatch.setattr(os, "lstat", guard(os.lstat))


def test_an_unreadable_source_folder_is_reported_skipped_and_the_rest_built(tmp_path, monkeypatch, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, 14)
    deny(monkeypatch, src / "pkg3")
    code = main(["build", "--src", str(src), "--out", str(out), "-j", "1"])
    printed = capsys.readouterr()
    assert code == 0 and "Traceback" not in printed.err, printed
    assert [line for line in printed.out.splitlines() if line.startswith("problem")] == [
        "problem: pkg3: folder skipped: Permission denied"]
    monkeypatch.undo()
    assert (out / "pkg4/module_4.py_docs.md").is_file() and not (out / "pkg3").exists()


def test_an_unreadable_source_root_is_one_line(tmp_path, monkeypatch, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, 2)
    deny(monkeypatch, src)
    code = main(["build", "--src", str(src), "--out", str(out), "-j", "1"])
    printed = capsys.readouterr()
    monkeypatch.undo()
    assert code == 2 and printed.err.splitlines() == [f"kwdocs: {src / 'pyproject.toml'}: permission denied"]

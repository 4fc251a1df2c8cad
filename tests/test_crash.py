"""Crash safety: a build killed with SIGKILL at any moment leaves every page old or new.

Builds of the 500-file slice of the benchmark corpus (``make-corpus.sh --small``)
are killed at moments spread over a cold build and over an incremental one.
After each kill every file in the output is absent, its old content or its new
content, never partial; the next build must finish (a killed build's workers
must not keep the lock), exit 0, leave no temporary file behind, and produce
exactly, byte for byte, what a clean build produces.

It takes a minute or two: deselect it with ``-m "not slow"``.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import run_kwdocs
from tests.output_checks import kwdocs_command, pages, run_build, temporaries

COLD_KILLS, INCREMENTAL_KILLS = 13, 7
SPREAD = 0.9   # kills are spread over this much of a measured build: runs vary on a shared machine
RECOVERY_TIMEOUT = 120


def build_ok(src: Path, out: Path) -> float:
    """A build that must succeed; returns its wall time."""
    started = time.monotonic()
    result = run_build(src, out, "-j", "2", "-q", timeout=RECOVERY_TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    return time.monotonic() - started


def killed_build(src: Path, out: Path, after: float) -> tuple[bool, int]:
    """Start a build in a new process group and SIGKILL its main process ``after`` seconds in.

    Returns whether it was still running then, and its process group (for the cleanup).
    """
    process = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out), "-j", "2", "-q"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(after)
        landed = process.poll() is None
        process.send_signal(signal.SIGKILL)   # the main process only, as the OOM killer would
        process.wait()
        return landed, process.pid
    except BaseException:
        kill_group(process.pid)
        raise


def kill_group(group: int) -> None:
    """Kill what is left of a killed build's process group (never this test's own group)."""
    assert group > 1 and group != os.getpgrp()
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def check_old_or_new(out: Path, old: dict[str, bytes], new: dict[str, bytes], moment: str) -> None:
    for rel, data in pages(out).items():
        assert data in (old.get(rel), new.get(rel)), f"{moment}: {rel} is neither its old nor its new content"


def recover_and_compare(src: Path, out: Path, clean: dict[str, bytes], moment: str, group: int) -> None:
    """The build after a kill finishes and leaves exactly a clean build's output."""
    try:
        result = run_build(src, out, "-j", "2", "-q", timeout=RECOVERY_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{moment}: the build after the kill did not finish in {RECOVERY_TIMEOUT} s "
                    "(is a worker of the killed build holding the lock?)")
    finally:
        kill_group(group)  # never leave a process behind, whatever happened
    assert result.returncode == 0, f"{moment}: {result.stdout}{result.stderr}"
    assert temporaries(out) == [], f"{moment}: temporary files left behind"
    actual = pages(out)
    assert sorted(actual) == sorted(clean), f"{moment}: the set of pages differs from a clean build's"
    different = [rel for rel in sorted(clean) if actual[rel] != clean[rel]]
    assert different == [], f"{moment}: pages differ from a clean build's: {different[:5]}"


def edit(src: Path) -> None:
    """An everyday change: some files edited, a few deleted, a few added (one in a new folder)."""
    sources = sorted(src.rglob("*.py"))
    for index, path in enumerate(sources):
        if index % 9 == 0:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(f"\n\ndef added_by_the_crash_test_{index}(value):\n    return value\n")
        elif index % 47 == 5:
            path.unlink()
    for index, folder in enumerate(sorted({path.parent for path in sources})[:3]):
        (folder / f"new_module_{index}.py").write_text(f'"""Added."""\nclass Added{index}:\n    pass\n')
    (src / "torch" / "brand_new").mkdir()
    (src / "torch" / "brand_new" / "__init__.py").write_text("from torch.nn import Module\n")


@pytest.mark.slow
def test_sigkill_at_any_moment_leaves_old_or_new_pages(corpus_slice: Path, tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(corpus_slice, src)  # the slice is shared with other tests: edit a copy
    cold_seconds = build_ok(src, tmp_path / "clean-before")
    before = pages(tmp_path / "clean-before")
    assert len(before) > 1000

    landed = 0
    for index in range(COLD_KILLS):
        moment = f"cold build killed at {SPREAD * (index + 0.5) / COLD_KILLS:.0%}"
        shutil.rmtree(out, ignore_errors=True)
        in_time, group = killed_build(src, out, SPREAD * cold_seconds * (index + 0.5) / COLD_KILLS)
        landed += in_time
        check_old_or_new(out, {}, before, moment)
        recover_and_compare(src, out, before, moment, group)

    # An incremental build: `out` now holds a finished build of the tree before the edit.
    finished = tmp_path / "finished-before"
    shutil.copytree(out, finished, symlinks=True)
    edit(src)
    build_ok(src, tmp_path / "clean-after")
    after = pages(tmp_path / "clean-after")
    shutil.rmtree(out)
    shutil.copytree(finished, out, symlinks=True)
    incremental_seconds = build_ok(src, out)
    assert pages(out) == after
    for _ in range(2):   # a short build: kill within the fastest of three, or the late kills come too late
        shutil.rmtree(out)
        shutil.copytree(finished, out, symlinks=True)
        incremental_seconds = min(incremental_seconds, build_ok(src, out))
    for index in range(INCREMENTAL_KILLS):
        moment = f"incremental build killed at {SPREAD * (index + 0.5) / INCREMENTAL_KILLS:.0%}"
        shutil.rmtree(out)
        shutil.copytree(finished, out, symlinks=True)
        in_time, group = killed_build(src, out, SPREAD * incremental_seconds * (index + 0.5) / INCREMENTAL_KILLS)
        landed += in_time
        check_old_or_new(out, before, after, moment)
        recover_and_compare(src, out, after, moment, group)
    # A kill that came after the build had finished tested nothing; a few may on a noisy machine.
    assert landed >= (COLD_KILLS + INCREMENTAL_KILLS) * 3 // 4, f"only {landed} kills landed during a build"


def test_an_edit_and_a_new_folder_in_one_build_equal_a_clean_build(golden_tree: Path, tmp_path: Path):
    """Found by the test above: when the unit list changes, doit runs link, keywords and assemble
    without saying which shards changed, and edits made in the same build were missed."""
    out, clean = tmp_path / "out", tmp_path / "clean"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    with open(golden_tree / "geometry/shapes/circle.py", "a", encoding="utf-8") as handle:
        handle.write("\n\ndef unit_circle():\n    return 1\n")
    (golden_tree / "extras").mkdir()
    (golden_tree / "extras/helpers.py").write_text("from geometry.shapes.circle import unit_circle\n")
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(clean), "-q") == 0
    assert pages(out) == pages(clean)

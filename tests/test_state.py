"""Every stored result proves itself: a killed build, a lost or damaged state folder cost time, never
correctness.  After each, the next build equals a clean build byte for byte, and ``kwdocs check``
gives the answer it gives without any state."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.output_checks import kwdocs_command, pages, run_build, temporaries


def check(src: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(kwdocs_command("check", "--src", str(src), "--out", str(out)),
                          capture_output=True, text=True, timeout=300)


def verdict(result: subprocess.CompletedProcess) -> tuple[int, list[str]]:
    """What check said: its exit code and the pages it named (its timing aside)."""
    return result.returncode, sorted(line for line in result.stdout.splitlines() if not line.startswith("kwdocs"))


def stateless_verdict(src: Path, out: Path, scratch: Path) -> tuple[int, list[str]]:
    """check's answer for the same pages with no state at all (a fresh clone in CI)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(out, scratch, ignore=shutil.ignore_patterns(".kwdocs"))
    return verdict(check(src, scratch))


def assert_like_a_clean_build(src: Path, out: Path, tmp: Path) -> None:
    """``out`` holds exactly what a clean build writes, and check says so with and without state."""
    clean = tmp / "clean-compare"
    if clean.exists():
        shutil.rmtree(clean)
    result = run_build(src, clean, "-q")
    assert result.returncode == 0, result.stderr
    expected, actual = pages(clean), pages(out)
    assert sorted(actual) == sorted(expected), sorted(set(actual) ^ set(expected))[:10]
    assert [rel for rel in expected if actual[rel] != expected[rel]] == []
    assert temporaries(out) == []
    said = check(src, out)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "Traceback" not in said.stderr


def build(src: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_build(src, out, "-q", *args)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    return result


# ---------------------------------------------------------------- the reproductions

def test_an_edit_after_a_build_killed_mid_extraction_reaches_its_pages(tmp_path):
    """A first build killed after one folder's facts were saved, but before doit recorded
    anything: the next build must read the edited file again, and check must not vouch for it."""
    src, out = tmp_path / "t", tmp_path / "o"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a/x.py").write_text("def one():\n    return 1\n")
    (src / "b/big.py").write_text("".join(f"def f{i}(a, b=1):\n    return a + b\n" for i in range(60000)))
    process = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out), "-j", "1"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list((out / ".kwdocs/facts").glob("*.json")):
            assert process.poll() is None and time.monotonic() < deadline, "the build ended before it was killed"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    with open(src / "a/x.py", "a") as handle:
        handle.write("\ndef two():\n    return 2\n")
    build(src, out, "-j", "1")
    assert "two" in (out / "a/x.py_kw.md").read_text()
    assert_like_a_clean_build(src, out, tmp_path)


def test_lost_facts_and_a_deleted_file_keep_the_other_pages(tmp_path):
    src, out = tmp_path / "t", tmp_path / "o"
    (src / "pkg/sub").mkdir(parents=True)
    (src / "pkg/util.py").write_text("def helper():\n    pass\n")
    (src / "pkg/sub/a.py").write_text("from pkg.util import helper\n")
    (src / "pkg/sub/b.py").write_text("from pkg.util import helper\n")
    build(src, out)
    shutil.rmtree(out / ".kwdocs/facts")
    (src / "pkg/sub/b.py").unlink()
    build(src, out)
    assert (out / "pkg/util.py_docs.md").is_file()
    assert_like_a_clean_build(src, out, tmp_path)

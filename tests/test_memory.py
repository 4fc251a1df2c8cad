"""Bounded memory: whatever the inputs, no process of a build holds more than 300 MB.

Files over the analysis limit are read only as far as their page shows (their hash is
still of the whole file); parsers get bounded input, and pathological code gives up
early rather than building enormous trees.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from output_checks import kwdocs_command

from kwdocs.engine import dispatch, tasks
from kwdocs.engine.workers import FreshWhenMany
from kwdocs.store import writer as output
from tests.conftest import run_kwdocs

PEAK_LIMIT_MB = 300
SPARSE_SIZE = 2 * 1024 ** 3
EIGHT_MB = 8 * 1024 * 1024
BELOW_LIMIT = 3 * 1024 * 1024 - 1024   # the analysis limit, documented in docs/pages.md
# Measures the largest process of a build (and its workers) by the operating system's account.
# The peak of the building process alone (its workers are other processes): it holds the build together.
# VmHWM, not ru_maxrss, which Linux carries over from the process that forked it (pytest's, here).
PEAK_OF_BUILDER = ("import re, sys; from kwdocs.cli import main; code = main(sys.argv[1:]); "
                   "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); sys.exit(code)")
PEAK_OF_CHILDREN = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
                    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


def json_of_many_keys(size: int) -> str:
    """An object of as many distinct short keys as fit in ``size`` bytes (a million in 8 MB)."""
    alphabet = [chr(code) for code in range(32, 127) if chr(code) not in '"\\']
    keys = ("".join(key) for length in (3, 4) for key in itertools.product(alphabet, repeat=length))
    entries, used = [], 2
    for key in keys:
        entry = json.dumps(key) + ":0"
        if used + len(entry) + 1 > size:
            break
        entries.append(entry)
        used += len(entry) + 1
    return "{" + ",".join(entries) + "}"


def dense_python(size: int) -> str:
    """Valid Python packed with definitions and calls: its whole tree would cost 2 GB at 8 MB."""
    lines, used, index = [], 0, 0
    while used < size - 200:
        line = f"def f{index}(a, b=1):\n    return a + b * g(a, [1, 2, 3], {{'k': b}})\n"
        lines.append(line)
        used += len(line)
        index += 1
    return "".join(lines)


def make_tree(src: Path) -> None:
    src.mkdir()
    with open(src / "sparse.bin", "wb") as sparse:    # a hole: no disk used
        sparse.truncate(SPARSE_SIZE)
    (src / "minus.py").write_text("x = " + "-" * (EIGHT_MB - 10) + "1\n")
    (src / "keys.json").write_text(json_of_many_keys(EIGHT_MB))
    # under the analysis limit, so the parsers see them whole
    (src / "minus_small.py").write_text("x = " + "-" * (BELOW_LIMIT - 10) + "1\n")
    (src / "keys_small.json").write_text(json_of_many_keys(BELOW_LIMIT))
    (src / "dense.py").write_text(dense_python(1024 * 1024))
    (src / "minus.h").write_text("int x = " + "-" * (BELOW_LIMIT - 20) + "1;\n")


def test_the_peak_stays_under_300_mb_whatever_the_inputs(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    assert json.loads((src / "keys.json").read_text()).__len__() >= 1_000_000
    run = subprocess.run([sys.executable, "-c", PEAK_OF_CHILDREN,
                          *kwdocs_command("build", "--src", str(src), "--out", str(out), "-j", "2")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    peak_mb = int(run.stdout.splitlines()[-1]) / 1024
    assert peak_mb < PEAK_LIMIT_MB, run.stdout

    # the big file's hash is of all of it, read in chunks
    whole = hashlib.sha256()
    chunk = bytes(1 << 20)
    for _ in range(SPARSE_SIZE // len(chunk)):
        whole.update(chunk)
    docs = (out / "sparse.bin_docs.md").read_text()
    assert whole.hexdigest() in docs and "2,147,483,648 bytes" in docs
    # files over the limit: metadata and their beginning; under it: what the parsers found
    assert "larger than 3 MiB" in (out / "keys.json_docs.md").read_text()
    assert "f0" in (out / "dense.py_kw.md").read_text() and "f9000" in (out / "dense.py_kw.md").read_text()
    assert "only the first 20,000 are listed" in (out / "keys_small.json_docs.md").read_text()
    assert "too large for Python's parser" in (out / "minus_small.py_docs.md").read_text()
    assert "too complex to parse" in (out / "minus.h_docs.md").read_text()


def small_files(src: Path, files: int) -> None:
    """``files`` small Python files, 50 to a folder, 40 folders to a package (issue 33's shape)."""
    for index in range(files):
        folder = src / f"pkg{index // 2000}" / f"mod{index // 50 % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{index}.py").write_text(f'"""File {index}."""\nimport os\n\n\ndef name_{index}(x):\n'
                                             '    """Return x."""\n    return x\n')


@pytest.mark.slow
def test_the_building_process_holds_about_as_much_for_eight_times_the_files(tmp_path):
    """Issue 33 asks for at most 1.5x.  2026-12-06: 37-38 MB at 2,500 files, 52-53 MB at 20,000
    (1.40x), the journals folded into the ledger as sorted runs; the fold that held an entry per
    page (40,824 at 20,000 files) peaked at 56-57 MB (1.51-1.52x) and fails this."""
    peaks_kb = {}
    for files in (2_500, 20_000):
        src, out = tmp_path / f"src-{files}", tmp_path / f"out-{files}"
        small_files(src, files)
        run = subprocess.run([sys.executable, "-c", PEAK_OF_BUILDER, "build", "--src", str(src), "--out", str(out),
                              "-j", "2", "-q"], capture_output=True, text=True, timeout=900, cwd=tmp_path)
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"{files:,} files scanned" in run.stdout
        assert (out / "pkg0" / "mod0" / "f0.py_docs.md").is_file()
        peaks_kb[files] = int(run.stdout.splitlines()[-1])
    assert peaks_kb[20_000] <= 1.5 * peaks_kb[2_500], peaks_kb


def test_each_whole_tree_step_runs_in_a_worker_of_its_own(tmp_path, monkeypatch):
    """The link, keywords and assemble steps each run in a worker that has run nothing else and
    ends with the step (what it took goes with it), not in one that extraction has grown."""
    src, log = tmp_path / "src", tmp_path / "log"
    small_files(src, 300)
    execute = dispatch.LookaheadRunner.execute_task

    def noted(self, task):
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {task.name}\n")
        return execute(self, task)
    monkeypatch.setattr(dispatch.LookaheadRunner, "execute_task", noted)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-j", "2", "-q") == 0
    ran: dict[str, list[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        pid, name = line.split(" ", 1)
        ran.setdefault(pid, []).append(name)
    for step in ("link", "keywords", "assemble"):
        assert [names for names in ran.values() if step in names] == [[step]], ran


def test_a_worker_that_grew_is_replaced_and_the_pages_are_the_same(tmp_path, monkeypatch):
    """A worker that grew past ``RETIRE_GROWTH`` (here: any growth) ends after its task and a fresh
    one is forked in its place; the pages are those of a one-process build."""
    src = tmp_path / "src"
    small_files(src, 300)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "one"), "-q") == 0
    started: list[int] = []
    fork = dispatch.LookaheadRunner._worker

    def counted(self, job_q, result_q):
        process = fork(self, job_q, result_q)
        started.append(process.pid)
        return process
    monkeypatch.setattr(dispatch.LookaheadRunner, "RETIRE_GROWTH", -1)
    monkeypatch.setattr(dispatch.LookaheadRunner, "_worker", counted)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "two"), "-j", "2", "-q") == 0
    assert len(set(started)) >= 10      # 6 units, each extracted and rendered, and the whole-tree steps
    assert _tree_files(tmp_path / "one") == _tree_files(tmp_path / "two")


def _where(folder: str, units: list[str], changed=()) -> tuple[int, int, int]:
    """Run by ``FreshWhenMany``: which process ran it, its parent, and how many units it was given;
    a file in the place of ``folder`` is the user's mistake an ``OSError`` names."""
    os.listdir(folder)
    return os.getpid(), os.getppid(), len(units)


def test_a_step_over_many_changed_units_runs_in_a_fresh_interpreter(tmp_path):
    """A large tree's whole-tree step starts with none of the building process's memory: it runs
    in a process of its own, started by this one; a step over a few units (an edit's) does not
    pay for one, nor does a dry run.  A mistake in there is still one line naming the file."""
    step, units = FreshWhenMany(_where, units=3), ["a", "b", "c", "d"]
    assert step(str(tmp_path), units, changed=["a", "b"]) == (os.getpid(), os.getppid(), 4)
    pid, parent, given = step(str(tmp_path), units, changed=["a", "b", "c"])
    assert (parent, given) == (os.getpid(), 4) and pid != os.getpid()
    assert step(str(tmp_path), units, changed=[])[0] != os.getpid()     # doit's "all of them"
    with output.dry_run(tmp_path / "state"):    # ``kwdocs check``: its writes are this process's records
        assert step(str(tmp_path), units, changed=[])[0] == os.getpid()
    plain = tmp_path / "plain"
    plain.write_text("a file, not a folder\n")
    mistake = tasks.Guarded(step)(str(plain), units, changed=[])
    assert isinstance(mistake, tasks.Mistake)
    assert mistake.message == f"kwdocs: {plain}: a file stands where a folder belongs"


def test_link_and_keywords_in_a_fresh_interpreter_write_the_same_pages(tmp_path, monkeypatch):
    """With every link and keyword step run in a fresh interpreter, a parallel build's pages are
    those of a one-process build that ran them in place; so is an edit's build after it, and
    ``kwdocs check`` finds every page as kwdocs wrote it."""
    src = tmp_path / "src"
    small_files(src, 300)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "one"), "-q") == 0
    monkeypatch.setattr(tasks, "FRESH_STEP_UNITS", 1)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "two"), "-j", "2", "-q") == 0
    assert _tree_files(tmp_path / "one") == _tree_files(tmp_path / "two")
    edited = next(src.rglob("f7.py"))
    edited.write_text(edited.read_text() + "\n\ndef added_later(y):\n    \"\"\"Return y.\"\"\"\n    return y\n")
    monkeypatch.setattr(tasks, "FRESH_STEP_UNITS", 10_000)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "one"), "-q") == 0
    monkeypatch.setattr(tasks, "FRESH_STEP_UNITS", 1)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "two"), "-j", "2", "-q") == 0
    assert "added_later" in (tmp_path / "two" / edited.relative_to(src).parent / "f7.py_docs.md").read_text()
    assert _tree_files(tmp_path / "one") == _tree_files(tmp_path / "two")
    # what the fresh interpreters wrote is in the ledger: check vouches for every page
    assert run_kwdocs("check", "--src", str(src), "--out", str(tmp_path / "two")) == 0


def test_a_build_started_by_a_script_without_a_file_or_a_guard_runs_its_fresh_steps(tmp_path):
    """The fresh interpreter is handed the step's call alone: multiprocessing's ``spawn`` ran the
    starting script again in it, which failed for a script read from standard input and would
    build again for one without ``if __name__ == "__main__"``."""
    src = tmp_path / "src"
    small_files(src, 120)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "in-place"), "-q") == 0
    script = ("from kwdocs.cli import main\nfrom kwdocs.engine import tasks\ntasks.FRESH_STEP_UNITS = 1\n"
              f"print('exit', main(['build', '--src', {str(src)!r}, '--out', {str(tmp_path / 'fresh')!r}, '-q']))\n")
    run = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.count("exit 0") == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert _tree_files(tmp_path / "in-place") == _tree_files(tmp_path / "fresh")


def _sleep_noting_pid(folder: str, units: list[str], changed=()) -> None:
    Path(folder, "pid").write_text(str(os.getpid()))
    time.sleep(120)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"    # a zombie has ended
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_a_fresh_interpreter_dies_with_the_process_that_started_it(tmp_path):
    """A build killed while its step runs in a fresh interpreter leaves no interpreter behind."""
    script = (f"import sys\nsys.path[:0] = {sys.path!r}\nfrom kwdocs.engine.workers import FreshWhenMany\n"
              f"from tests.test_memory import _sleep_noting_pid\n"
              f"FreshWhenMany(_sleep_noting_pid, 1)({str(tmp_path)!r}, ['a'], changed=[])\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[1])
    deadline = time.monotonic() + 60
    while not (tmp_path / "pid").exists() and parent.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "pid").exists(), "the step never started"
    time.sleep(0.1)     # the pid is written: the file's content is whole
    fresh = int((tmp_path / "pid").read_text())
    assert not _gone(fresh)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while not _gone(fresh) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(fresh)


def _tree_files(root) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and ".kwdocs" not in path.relative_to(root).parts}


def _header(classes: int) -> str:
    """A C++ header of ``classes`` documented classes with members (about 250 bytes each)."""
    return "#pragma once\n#include <vector>\n\nnamespace demo {\n" + "".join(
        f"/// Widget number {index}.\nclass Widget{index} {{\n public:\n  int size(int n) const;\n"
        f"  std::vector<int> items_{index};\n  static constexpr int kLimit{index} = {index};\n}};\n\n"
        for index in range(classes)) + "}  // namespace demo\n"


def test_extracting_the_same_files_again_holds_no_more_memory():
    """A watch session extracts saved files again for hours: what one extraction held must be
    let go, so rounds after the second hold no more (each file's bytes were kept, per parse)."""
    import gc
    import tracemalloc

    from kwdocs import languages
    files = {"small.h": _header(20), "large.hpp": _header(600), "kernel.cu": "__global__ void k() {}\n"
             + _header(60), "module.py": "class A:\n    def f(self, x: int = 1) -> int:\n        return x\n" * 40}
    assert len(files["large.hpp"]) > 65536    # read by tree-sitter in more than one chunk

    def extract_all() -> None:
        for rel, text in files.items():
            assert languages.language_for(rel, text).extract(text, rel)["symbols"]

    tracemalloc.start()
    try:
        extract_all()
        extract_all()
        gc.collect()
        second = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            extract_all()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - second
    finally:
        tracemalloc.stop()
    # before: each round kept every file's bytes (about 125 KB a round, 1.2 MB in all)
    assert grown < 64 * 1024, f"10 more rounds held {grown:,} more bytes"


def test_the_names_the_rules_remember_stay_bounded():
    """Each name a file calls or imports is matched against the rules once and remembered; a tree
    of ever new names (a worker's share of a large tree, hours of watching) must not grow the memo."""
    from kwdocs.rules.ruleset import RuleSet
    loaded = RuleSet.load()
    for index in range(100_000):
        loaded._matching("calls", f"helper_{index}")
    assert 0 < len(loaded._names["calls"]) <= 40_000     # bounded, whatever the number of names asked

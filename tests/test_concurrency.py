"""Two kwdocs processes on one tree: the second waits for the first, or says it is busy.

A commit hook and a watcher (or two CI steps) may start builds of the same
tree at once.  Both must finish without a mixed-up output: the output after
both equals a clean build's, byte for byte.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwdocs.store.lock import Busy, locked
from kwdocs.store.writer import TEMP_PREFIX, TEMP_SUFFIX
from tests.output_checks import kwdocs_command, pages, run_build, temporaries

WAITING = "waiting for another kwdocs process"


def make_tree(src: Path, folders: int = 12, files: int = 25) -> None:
    """Enough files that a build takes a while (a second or so)."""
    for folder in range(folders):
        for index in range(files):
            path = src / f"pkg{folder}" / f"module_{index}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'"""Module {index} of package {folder}."""\nimport os\n\n\n'
                            + "".join(f"class Thing{index}_{n}:\n    def method_{n}(self, x: int) -> int:\n"
                                      f"        return os.getpid() + x\n\n\n" for n in range(8)))


def start(src: Path, out: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out), *args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    try:
        stdout, stderr = process.communicate(timeout=180)
    finally:
        process.kill()
    return process.returncode, stdout, stderr


def wait_for_lock_holder(out: Path, process: subprocess.Popen, seconds: float = 60) -> None:
    """Until ``process`` holds the output folder's lock (it writes its pid into the lock file)."""
    lock = out / ".kwdocs" / "lock"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if lock.exists() and lock.read_text().strip() == str(process.pid):
            return
        assert process.poll() is None, "the first build ended before taking the lock"
        time.sleep(0.005)
    pytest.fail("the first build never took the lock")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    """A tree and the pages a clean build of it writes (into a sibling folder, as the tests' outputs)."""
    root = tmp_path_factory.mktemp("concurrency")
    make_tree(root / "src")
    result = run_build(root / "src", root / "clean", "-q")
    assert result.returncode == 0, result.stderr
    return root / "src", pages(root / "clean")


@pytest.fixture
def out(tree, request) -> Path:
    """An output folder beside the tree: pages link to sources by relative paths."""
    return tree[0].parent / request.node.name


def test_a_second_build_waits_for_the_first_and_says_so(tree, out):
    src, clean = tree
    first = start(src, out, "-j", "2")
    wait_for_lock_holder(out, first)
    second = start(src, out, "-j", "1")
    first_code, first_out, _ = finish(first)
    second_code, second_out, second_err = finish(second)
    assert first_code == 0 and second_code == 0, (first_out, second_out, second_err)
    assert WAITING in second_err, "the second build should say what it waits for"
    assert "0 pages written" in second_out, "the first build left nothing to do"
    assert pages(out) == clean
    assert temporaries(out) == []


def test_two_builds_started_together_both_finish(tree, out):
    src, clean = tree
    builds = [start(src, out, "-j", "2"), start(src, out, "-j", "1")]
    results = [finish(build) for build in builds]
    assert [code for code, _, _ in results] == [0, 0], results
    assert pages(out) == clean
    assert temporaries(out) == []


def test_a_caller_that_will_not_wait_is_told_the_folder_is_busy(tmp_path):
    state = tmp_path / "out" / ".kwdocs"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\nfrom kwdocs.store.lock import locked\n"
         f"with locked(Path({str(state)!r})):\n    print('held', flush=True)\n    sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(Busy, match=f"another kwdocs process is using {tmp_path / 'out'}"):
            with locked(state, wait=0.2, announce=None):
                pass
    finally:
        holder.communicate(input="", timeout=30)
    with locked(state, wait=0.2, announce=None):  # free again once the holder is gone
        pass


def test_the_lock_goes_with_a_killed_holder_and_its_temporaries_are_swept(tmp_path):
    state = tmp_path / "out" / ".kwdocs"
    page_folder = tmp_path / "out" / "pkg"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time\nfrom pathlib import Path\nfrom kwdocs.store.lock import locked\n"
         f"with locked(Path({str(state)!r})):\n"
         f"    Path({str(page_folder)!r}).mkdir()\n"
         f"    Path({str(page_folder)!r}, {TEMP_PREFIX + 'half' + TEMP_SUFFIX!r}).write_text('half a page')\n"
         "    print('held', flush=True)\n    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
    finally:
        holder.kill()
        holder.wait()
    assert temporaries(tmp_path / "out") == [f"pkg/{TEMP_PREFIX}half{TEMP_SUFFIX}"]
    with locked(state, wait=5, announce=None):
        assert temporaries(tmp_path / "out") == []
    assert (state / "lock").read_text() == "", "a holder that lets go in good order leaves nothing to sweep"


def children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_a_killed_parallel_build_leaves_no_worker_holding_the_lock(tree, out):
    """Forked workers share the lock; if they outlived a killed build, the next one would wait forever."""
    src, clean = tree
    first = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out), "-j", "2"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_lock_holder(out, first)
        deadline = time.monotonic() + 60
        while not children(first.pid) and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert children(first.pid), "the build never started its workers"
        first.kill()
        first.wait()
        result = run_build(src, out, "-q", timeout=60)
    finally:
        try:
            os.killpg(first.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert result.returncode == 0, result.stderr
    assert pages(out) == clean
    assert temporaries(out) == []


def test_ctrl_c_stops_a_parallel_build_cleanly_and_the_next_build_tidies_up(tmp_path):
    """Ctrl-C: one line, exit code 130, no traceback; the lock keeps the pid, so the next build
    sweeps any write a worker never finished, and ends where a clean build does."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, folders=32, files=40)
    process = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out), "-j", "2"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_lock_holder(out, process)
    # mid-build, whatever the machine's speed: the first units are extracted, 30 more wait
    deadline = time.monotonic() + 60
    while len(list((out / ".kwdocs" / "facts").glob("*.json"))) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "the build ended before Ctrl-C"
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    code, _, stderr = finish(process)
    assert (code, stderr) == (130, "kwdocs: interrupted\n")
    assert (out / ".kwdocs" / "lock").read_text().strip() == str(process.pid)
    assert run_build(src, out, "-j", "2").returncode == 0
    assert temporaries(out) == []
    assert (out / ".kwdocs" / "lock").read_text() == ""
    clean = tmp_path / "clean"
    assert run_build(src, clean).returncode == 0
    assert pages(clean) == pages(out)


def test_ctrl_c_while_doit_holds_the_streams_still_says_interrupted(tmp_path, monkeypatch, capfd):
    """doit swaps sys.stderr for its capture of a task's output just before an action runs: a
    Ctrl-C landing there must still reach the terminal (seen in CI: exit 130 and no line)."""
    import io
    import sys

    from kwdocs.cli import INTERRUPTED, main
    from kwdocs.commands import build

    def interrupted_while_captured(config, args):
        sys.stderr = io.StringIO()      # as doit's ``PythonAction.execute`` leaves it
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "run", interrupted_while_captured)
    monkeypatch.setattr(sys, "stderr", sys.stderr)      # put back after the test
    (tmp_path / "src").mkdir()
    assert main(["build", "--src", str(tmp_path / "src"), "--out", str(tmp_path / "out")]) == INTERRUPTED
    assert capfd.readouterr().err == "kwdocs: interrupted\n"


def test_ctrl_c_while_workers_start_leaves_no_worker_behind(tmp_path, monkeypatch):
    """Ctrl-C that lands while doit is still starting its workers (doit only terminates them once
    it waits for results): no worker may outlive the build, or Python's exit waits for it forever."""
    import multiprocessing

    from doit.runner import MRunner

    from tests.conftest import run_kwdocs

    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, folders=4, files=5)
    start_processes = MRunner._run_start_processes

    def interrupted(self, job_q, result_q):
        start_processes(self, job_q, result_q)
        raise KeyboardInterrupt

    monkeypatch.setattr(MRunner, "_run_start_processes", interrupted)
    try:
        assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-j", "2", "-q") == 130
        assert multiprocessing.active_children() == []
    finally:
        for child in multiprocessing.active_children():   # never leave a hung worker to pytest's exit
            child.kill()
            child.join()
    monkeypatch.undo()
    assert run_build(src, out, "-j", "2").returncode == 0
    clean = tmp_path / "clean"
    assert run_build(src, clean).returncode == 0
    assert pages(clean) == pages(out)

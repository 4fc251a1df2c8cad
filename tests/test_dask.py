"""Building on a Dask cluster (``--scheduler``): the same pages as a build on this machine, with
the extraction and rendering done by the cluster's workers, a lost worker's work done by
another, Ctrl-C leaving a state the next build finishes from, and a scheduler that cannot be
reached said in one line.

Every build runs as a user runs it, in its own process, and is judged by the pages it writes
and its summary line, which says how many files the cluster extracted and rendered.
"""
from __future__ import annotations

import gc
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.output_checks import kwdocs_command, pages, run_build
from tests.test_concurrency import finish, make_tree

pytest.importorskip("distributed")

CLUSTER = re.compile(r"([\d,]+) files scanned.*on the cluster: ([\d,]+) files extracted, ([\d,]+) rendered")
RULES = """\
[[rule]]
id = "team.functions"
section = "patterns"
text = ['def \\w+']
message = "Defines functions the team reviews"
"""


def settings_tree(root: Path) -> Path:
    """The golden tree with an extra rule file and a template of its own: workers must use both."""
    tree = root / "tree"
    shutil.copytree(FIXTURES / "golden" / "tree", tree)
    templates = root / "templates"
    templates.mkdir()
    shipped = (Path(__file__).resolve().parents[1] / "templates" / "file_kw.md.j2").read_text()
    (templates / "file_kw.md.j2").write_text("<!-- the team's keyword page -->\n" + shipped)
    (root / "rules.toml").write_text(RULES)
    (root / "kwdocs.toml").write_text(f'rules = ["{root / "rules.toml"}"]\ntemplates = "{templates}"\n')
    return tree


def on_cluster(result: subprocess.CompletedProcess) -> tuple[int, int, int]:
    """(files scanned, extracted on the cluster, rendered on the cluster), from the summary line."""
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    found = CLUSTER.search(result.stdout)
    assert found, result.stdout
    scanned, extracted, rendered = (int(number.replace(",", "")) for number in found.groups())
    return scanned, extracted, rendered


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_local_cluster_of_two_workers_writes_the_pages_of_a_local_build(tmp_path):
    tree = settings_tree(tmp_path)
    config = str(tmp_path / "kwdocs.toml")
    local = run_build(tree, tmp_path / "local", "--config", config, "-j", "1", "-q")
    assert local.returncode == 0, local.stderr
    result = run_build(tree, tmp_path / "dask", "--config", config, "--scheduler", "local", "-j", "2", "-q")
    scanned, extracted, rendered = on_cluster(result)
    # every file's facts and pages came from the workers, made with the rule file and templates sent to them
    assert extracted == rendered == scanned > 10
    assert pages(tmp_path / "dask") == pages(tmp_path / "local")
    assert b"the team's keyword page" in pages(tmp_path / "dask")["geometry/shapes/circle.py_kw.md"]
    assert b"Defines functions the team reviews" in pages(tmp_path / "dask")["geometry/shapes/circle.py_docs.md"]
    # nothing changed: a no-op, which never imports Dask
    again = subprocess.run([sys.executable, "-X", "importtime", *kwdocs_command(
        "build", "--src", str(tree), "--out", str(tmp_path / "dask"), "--config", config,
        "--scheduler", "local", "-q")[1:]], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert " 0 pages written" in again.stdout
    imported = [line.rpartition("|")[2].strip() for line in again.stderr.splitlines() if "|" in line]
    assert not [name for name in imported if name.split(".")[0] in ("dask", "distributed")]


def test_what_a_shared_cache_holds_is_not_sent_to_the_cluster(tmp_path):
    tree = settings_tree(tmp_path)
    cache = tmp_path / "cache"
    filled = run_build(tree, tmp_path / "first", "--cache", str(cache), "-q")
    assert filled.returncode == 0, filled.stderr
    result = run_build(tree, tmp_path / "dask", "--cache", str(cache), "--scheduler", "local", "-j", "2", "-q")
    scanned, extracted, rendered = on_cluster(result)
    assert (extracted, rendered) == (0, 0) and scanned > 10
    assert pages(tmp_path / "dask") == pages(tmp_path / "first")


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path):
    src = tmp_path / "src"
    make_tree(src, folders=2, files=2)
    address = f"tcp://127.0.0.1:{free_port()}"
    result = run_build(src, tmp_path / "out", "--scheduler", address, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr
    assert result.stderr.startswith(f"kwdocs: 'scheduler' ({address}): cannot reach it"), result.stderr
    assert not [page for page in pages(tmp_path / "out") if page.endswith(".md")]


# A worker's preload: right after a worker reads one file (``path``), a save appends a function to it.
EDIT_AFTER_READ = """\
import os

from kwdocs.engine.steps import extract

read = getattr(extract.extract_settled, "read", extract.extract_settled)     # Dask may preload it twice


def read_then_saved(config, rel, *args, **kwargs):
    facts = read(config, rel, *args, **kwargs)
    path = os.path.join(config.src, rel)
    if path == {path!r} and b"saved_mid_build" not in open(path, "rb").read():
        with open(path, "a") as file:
            file.write("\\n\\ndef saved_mid_build():\\n    return 1\\n")
    return facts


read_then_saved.read = read
extract.extract_settled = read_then_saved
"""


def test_a_file_saved_after_a_local_worker_read_it_is_documented_as_it_is_now(tmp_path):
    """A local cluster's workers read the files themselves: what a worker made of a file is used
    only while the file has the size and time stamp it had when the worker read it."""
    src = tmp_path / "src"
    make_tree(src, folders=3, files=4)
    saved = src / "pkg1" / "module_2.py"
    preload = tmp_path / "save_after_read.py"
    preload.write_text(EDIT_AFTER_READ.format(path=str(saved)))
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__PRELOAD=json.dumps([str(preload)]))
    result = subprocess.run(kwdocs_command("build", "--src", str(src), "--out", str(tmp_path / "dask"),
                                           "--scheduler", "local", "-j", "2", "-q"),
                            capture_output=True, text=True, env=env, timeout=300)
    scanned, extracted, rendered = on_cluster(result)
    assert "saved_mid_build" in saved.read_text(), "the worker did not save the file"
    # its facts were made here, from what it holds now; the cluster rendered its pages from them
    assert (extracted, rendered) == (scanned - 1, scanned)
    assert run_build(src, tmp_path / "local", "-q").returncode == 0
    assert pages(tmp_path / "dask") == pages(tmp_path / "local")
    assert b"saved_mid_build" in pages(tmp_path / "dask")["pkg1/module_2.py_docs.md"]


def test_a_local_cluster_says_nothing_of_its_own_beside_another_dask_cluster(tmp_path):
    """Another Dask cluster on the machine holds Dask's dashboard port: the build's stderr stays empty."""
    src = tmp_path / "src"
    make_tree(src, folders=4, files=5)
    with socket.socket() as other:
        try:
            other.bind(("", 8787))
            other.listen()
        except OSError:
            pass    # held already
        result = run_build(src, tmp_path / "out", "--scheduler", "local", "-j", "2", "-q")
    scanned, extracted, rendered = on_cluster(result)
    assert extracted == rendered == scanned == 20
    assert result.stderr == ""


def start(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env=env)


def test_a_worker_killed_mid_build_loses_no_work(tmp_path):
    """A scheduler and two workers of their own (``dask scheduler``, ``dask worker``); one worker is
    killed while it holds units of the build: the other does them, and the pages are a local build's.
    A worker killed leaves nothing of kwdocs' in its temporary folder: it writes no file there."""
    from distributed import Client

    src = tmp_path / "src"
    make_tree(src, folders=16, files=20)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert run_build(src, tmp_path / "local", "-q").returncode == 0
    address = f"tcp://127.0.0.1:{free_port()}"
    dask = [str(Path(sys.executable).parent / "dask")]
    processes = [listening_scheduler(int(address.rpartition(":")[2]))]
    try:
        for _ in range(2):
            processes.append(start([*dask, "worker", address, "--nthreads", "1", "--no-nanny",
                                    "--no-dashboard", "--host", "127.0.0.1"],
                                   env={**os.environ, "TMPDIR": str(scratch)}))
        with Client(address, timeout=60) as watcher:
            watcher.wait_for_workers(2, timeout=60)
            pids = watcher.run(os.getpid)
            build = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(tmp_path / "dask"),
                                                    "--scheduler", address, "-q"),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            victim, deadline = None, time.monotonic() + 120
            while victim is None:
                assert build.poll() is None and time.monotonic() < deadline, "the build ended before the kill"
                busy = [worker for worker, keys in watcher.processing().items() if keys]
                victim = busy[0] if busy else None
                time.sleep(0.002)
            os.kill(pids[victim], signal.SIGKILL)
            code, stdout, stderr = finish(build)
    finally:
        for process in processes:
            process.kill()
            process.wait()
    scanned, extracted, rendered = on_cluster(subprocess.CompletedProcess([], code, stdout, stderr))
    assert extracted == rendered == scanned == 320, "the lost worker's units were not done by the other"
    assert pages(tmp_path / "dask") == pages(tmp_path / "local")
    assert not [path.name for path in scratch.iterdir() if "kwdocs" in path.name]


def listening_scheduler(port: int) -> subprocess.Popen:
    """``dask scheduler`` on 127.0.0.1:``port``, once it listens."""
    scheduler = start([str(Path(sys.executable).parent / "dask"), "scheduler", "--host", "127.0.0.1",
                       "--port", str(port), "--no-dashboard"])
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return scheduler
        except OSError:
            assert time.monotonic() < deadline and scheduler.poll() is None, "the scheduler never listened"
            time.sleep(0.1)


def test_a_cluster_without_workers_costs_a_wait_never_a_hung_build(tmp_path, monkeypatch, capsys):
    from kwdocs import cli
    from kwdocs.engine import cluster_connection

    src = tmp_path / "src"
    make_tree(src, folders=3, files=3)
    assert run_build(src, tmp_path / "local", "-q").returncode == 0
    monkeypatch.setattr(cluster_connection, "NO_WORKERS", 2.0)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = listening_scheduler(port)
    try:
        code = cli.main(["build", "--src", str(src), "--out", str(tmp_path / "out"), "--scheduler", address, "-q"])
    finally:
        scheduler.kill()
        scheduler.wait()
    said = capsys.readouterr()
    assert code == 0, said.out + said.err
    assert said.err.splitlines() == [f"kwdocs: cluster {address}: no worker for 2 s; building here"]
    assert "on the cluster: 0 files extracted, 0 rendered" in said.out
    assert pages(tmp_path / "out") == pages(tmp_path / "local")


@pytest.mark.slow
def test_workers_that_cannot_run_kwdocs_leave_the_work_to_the_build(tmp_path):
    """A worker whose environment lacks kwdocs (here: its import refused by a preload script)
    cannot run a task (Dask drops such a worker): one line, and the build does the work itself.
    Slow: the build waits ``NO_WORKERS`` seconds for another worker."""
    src = tmp_path / "src"
    make_tree(src, folders=3, files=3)
    assert run_build(src, tmp_path / "local", "-q").returncode == 0
    (tmp_path / "no_kwdocs.py").write_text('import sys\n\nsys.modules["kwdocs"] = None\n')
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    processes = [listening_scheduler(port)]
    try:
        processes.append(start([str(Path(sys.executable).parent / "dask"), "worker", address, "--nthreads", "1",
                                "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                "--preload", str(tmp_path / "no_kwdocs.py")]))
        result = run_build(src, tmp_path / "out", "--scheduler", address, "-q", timeout=120)
    finally:
        for process in processes:
            process.kill()
            process.wait()
    assert on_cluster(result)[1:] == (0, 0)
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"kwdocs: cluster {address}: "), result.stderr
    assert result.stderr.rstrip().endswith("; building here"), result.stderr
    assert pages(tmp_path / "out") == pages(tmp_path / "local")


def test_ctrl_c_cancels_the_cluster_work_and_the_next_build_ends_where_a_clean_one_does(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, folders=60, files=10)
    for _ in range(3):      # Ctrl-Cs were lost in one build of six (see the test below)
        shutil.rmtree(out, ignore_errors=True)
        process = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out),
                                                  "--scheduler", "local", "-j", "2"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        # mid-build: the first units extracted (the cluster's first task), the other tasks' units wait
        while not list((out / ".kwdocs" / "facts").glob("*.json")):
            assert process.poll() is None and time.monotonic() < deadline, "the build ended before Ctrl-C"
            time.sleep(0.005)
        process.send_signal(signal.SIGINT)
        assert finish(process)[::2] == (130, "kwdocs: interrupted\n")
    assert run_build(src, out, "--scheduler", "local", "-j", "2", "-q").returncode == 0
    assert run_build(src, tmp_path / "clean", "-q").returncode == 0
    assert pages(out) == pages(tmp_path / "clean")


def test_a_local_cluster_leaves_no_garbage_collection_callback_in_the_building_process(tmp_path):
    """Python drops a KeyboardInterrupt raised in a gc callback, and a Ctrl-C landing during a full
    collection is raised in the first Python code after it: Dask's scheduler, which a local
    cluster runs in the building process, times every full collection in one (the build went on
    to its end after a Ctrl-C in 7 builds of 44 on this machine)."""
    from kwdocs.config import load_config
    from kwdocs.engine import cluster_connection

    src = tmp_path / "src"
    make_tree(src, folders=1, files=1)
    config = load_config(str(src), None, {"output": str(tmp_path / "out"), "scheduler": "local", "jobs": 1})
    before = list(gc.callbacks)
    with cluster_connection.connected(config) as session:
        assert session.client.submit(sum, [1, 2]).result(timeout=60) == 3   # the scheduler and a worker are up
        assert gc.callbacks == before


def test_a_local_cluster_started_from_a_folder_holding_a_kwdocs_folder_runs_this_kwdocs(tmp_path):
    """Started from a tree with a ``kwdocs`` folder of its own, each worker imported that folder
    instead of kwdocs, printed a traceback, and the build waited 30 s to do the work itself."""
    tree = settings_tree(tmp_path)
    here = tmp_path / "elsewhere"
    (here / "kwdocs").mkdir(parents=True)
    (here / "kwdocs" / "__init__.py").write_text('"""This tree\'s own kwdocs: notes, not the tool."""\n')
    (here / "kwdocs" / "README.md").write_text("Notes.\n")
    # as the installed ``kwdocs`` command runs: a script whose folder, not the shell's, leads the path
    script = tmp_path / "bin" / "kwdocs_command.py"
    script.parent.mkdir()
    script.write_text("from kwdocs.cli import entry\n\nif __name__ == '__main__':\n    entry()\n")
    result = subprocess.run([sys.executable, str(script), "build", "--src", str(tree), "--out", str(tmp_path / "dask"),
                             "--scheduler", "local", "-j", "2", "-q"],
                            cwd=here, capture_output=True, text=True, timeout=300)
    scanned, extracted, rendered = on_cluster(result)
    assert extracted == rendered == scanned > 10, result.stderr
    assert "no worker" not in result.stderr, result.stderr

"""doit's worker processes as kwdocs runs them: every task once, in dependency order, with the
next ready task already queued when a worker finishes one."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from kwdocs.engine import dispatch
from kwdocs.engine.runner import run_doit

INDEPENDENT = [f"part{n}" for n in range(6)]


def _append(log: str, name: str, fail: bool = False) -> bool:
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(name + "\n")
    return not fail


def namespace(tmp_path: Path, failing: str | None = None) -> dict:
    """Six independent tasks, then one that needs them all; each notes its name in a log."""
    log = str(tmp_path / "log")

    def task_part():
        for name in INDEPENDENT:
            yield {"name": name, "actions": [(_append, [log, name, name == failing])], "verbosity": 0}

    def task_whole():
        return {"actions": [(_append, [log, "whole"])], "task_dep": ["part"], "verbosity": 0}

    return {"DOIT_CONFIG": {"dep_file": str(tmp_path / "doit.sqlite3"), "backend": "sqlite3",
                            "default_tasks": ["part", "whole"], "verbosity": 0,
                            "reporter": "zero"},
            "task_part": task_part, "task_whole": task_whole}


def logged(tmp_path: Path) -> list[str]:
    return (tmp_path / "log").read_text(encoding="utf-8").split()


def test_a_parallel_run_runs_every_task_once_and_a_dependent_task_after_its_inputs(tmp_path):
    assert run_doit(namespace(tmp_path), 2) == 0
    names = logged(tmp_path)
    assert sorted(names[:-1]) == INDEPENDENT
    assert names[-1] == "whole"


def test_a_failed_task_fails_the_run_and_what_needs_it_never_runs(tmp_path):
    assert run_doit(namespace(tmp_path, failing="part2"), 2) == 1
    names = logged(tmp_path)
    assert "part2" in names and "whole" not in names
    assert len(names) == len(set(names))


@pytest.fixture
def handed_out(monkeypatch) -> list[str]:
    """The names of the tasks the runner hands to its workers, in order."""
    names: list[str] = []
    get_next_job = dispatch.LookaheadRunner.get_next_job

    def counting(self, completed):
        job = get_next_job(self, completed)
        if job is not None and job.type is not dispatch.JobHold.type:
            names.append(job.name)
        return job

    monkeypatch.setattr(dispatch.LookaheadRunner, "get_next_job", counting)
    return names


def test_a_finishing_worker_finds_its_next_task_already_queued(tmp_path, monkeypatch, handed_out):
    """Before the parent has seen any result, both workers have a task and one more waits."""
    before_first_result: list[int] = []
    process_result = dispatch.LookaheadRunner._process_result

    def noting(self, node, task, result):
        if not before_first_result:
            before_first_result.append(len(handed_out))
        return process_result(self, node, task, result)

    monkeypatch.setattr(dispatch.LookaheadRunner, "_process_result", noting)
    assert run_doit(namespace(tmp_path), 2) == 0
    assert before_first_result == [3]      # doit alone: 2
    assert sorted(handed_out) == sorted([f"part:{name}" for name in INDEPENDENT] + ["part", "whole"])   # "part": the group


def steps_namespace(tmp_path: Path, order: list[str]) -> dict:
    """A build's shape: facts first, then three one-task steps that need them, then render tasks
    that need one of those ("link"); doit's ``default_tasks`` in ``order``."""
    log = str(tmp_path / "log")

    def one(name: str, needs: str) -> dict:
        return {"actions": [(_append, [log, name])], "task_dep": [needs], "verbosity": 0}

    def task_facts():
        for name in ("a", "b"):
            yield {"name": name, "actions": [(_append, [log, name])], "verbosity": 0}

    def task_render():
        for name in ("x", "y", "z"):
            yield {"name": name, **one(name, "link")}

    return {"DOIT_CONFIG": {"dep_file": str(tmp_path / "doit.sqlite3"), "backend": "sqlite3",
                            "default_tasks": order, "verbosity": 0, "reporter": "zero"},
            "task_facts": task_facts, "task_render": task_render,
            **{f"task_{name}": (lambda name=name: one(name, "facts")) for name in ("link", "keywords", "search")}}


@pytest.mark.parametrize("steps", [["link", "keywords", "search"], ["search", "keywords", "link"],
                                   ["keywords", "link", "search"]])
def test_tasks_that_become_ready_together_are_handed_out_in_the_order_of_their_steps(tmp_path, handed_out, steps):
    """doit keeps the tasks waiting for a task in a set: without an order of its own, the link step
    every render task waits for was at times handed out after the keyword and search steps."""
    assert run_doit(steps_namespace(tmp_path, ["facts", *steps, "render"]), 2) == 0
    assert [name for name in handed_out if name in steps] == steps
    renders = [index for index, name in enumerate(handed_out) if name.startswith("render:")]
    assert len(renders) == 3 and min(renders) > handed_out.index("link")


def test_doit_gets_its_own_runner_back_after_a_run(tmp_path):
    from doit import cmd_run
    from doit.runner import MRunner

    run_doit(namespace(tmp_path), 2)
    assert cmd_run.MRunner is MRunner


def test_a_run_reads_no_installed_packages_entry_points(tmp_path, monkeypatch):
    """doit looks its plugins up in four entry-point groups, and each look-up read every installed
    package's metadata (a few milliseconds each, in every edit's build): kwdocs' runs, whose
    command, loader, backend and reporter are their own, look up none, and doit gets its own
    look-up back after the run."""
    import importlib.metadata

    import doit.plugin

    reads: list[str | None] = []
    read_all = importlib.metadata.entry_points

    def counted(**params):
        reads.append(params.get("group"))
        return read_all(**params)

    monkeypatch.setattr(importlib.metadata, "entry_points", counted)
    monkeypatch.setattr(doit.plugin, "entry_points", counted)
    own = doit.plugin.entry_points_impl
    assert run_doit(namespace(tmp_path), 1) == 0
    assert logged(tmp_path) == [*INDEPENDENT, "whole"]
    assert reads == []
    assert doit.plugin.entry_points_impl is own


def _imported_by_two_builds(tmp_path, module: str, source: str) -> list[list[str]]:
    """(exit code, whether ``module`` was imported) of a first build of a one-module tree in a
    fresh process, then of a second build with nothing to do, as each printed them."""
    import subprocess
    import sys

    src, out = tmp_path / "src", tmp_path / "out"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text(source)
    code = ("import sys; from kwdocs.cli import main; "
            f"code = main(['build', '--src', {str(src)!r}, '--out', {str(out)!r}, '-q']); "
            f"print(code, {module!r} in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True) for _ in range(2)]
    return [run.stdout.split()[-2:] or [run.stderr] for run in runs]


def test_a_build_with_nothing_to_do_never_imports_doit(tmp_path):
    """Importing doit costs a no-op build a quarter of its time: the runner is imported only
    when doit runs."""
    first, again = _imported_by_two_builds(tmp_path, "doit", "def f():\n    return 1\n")
    assert first == ["0", "True"]
    assert again == ["0", "False"]


def test_a_build_with_nothing_to_do_never_imports_the_page_code(tmp_path):
    """A no-op build checks the symbol index and stops: importing the page models (and what they
    import) for the index's rows was a seventh of its CPU time."""
    first, again = _imported_by_two_builds(tmp_path, "kwdocs.pages.model",
                                           'def f():\n    """One."""\n    return 1\n')
    assert first == ["0", "True"]
    assert again == ["0", "False"]


def test_a_scan_of_a_tree_without_gitignore_never_imports_pathspec(tmp_path):
    """Only a ``.gitignore`` or a file named as a secret-file glob with a slash names it
    (``**/.kube/config``) needs pathspec: its import was an eighth of a no-op build's CPU."""
    import subprocess
    import sys

    src, out = tmp_path / "src", tmp_path / "out"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    code = ("import sys; from kwdocs.config import load_config; from kwdocs.scan import scan; "
            f"found = scan(load_config(__import__('pathlib').Path({str(src)!r}), None, {{'output': {str(out)!r}}})); "
            "print(len(found.files), 'pathspec' in sys.modules)")
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert plain.stdout.split()[-2:] == ["1", "False"], plain.stderr
    (src / ".kube").mkdir()
    (src / ".kube" / "config").write_text("token: x\n")     # a secret file: skipped, and pathspec asked
    asked = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert asked.stdout.split()[-2:] == ["1", "True"], asked.stderr

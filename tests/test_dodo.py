"""kwdocs' rule set in a project's own ``dodo.py`` (``kwdocs.doit``), ``kwdocs init``, and the root ``dodo.py``.

Each run is ``python -m doit`` in the project, as its user types it, with the two lines
the README gives (read from README.md, so that it stays true).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kwdocs.commands import init

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "tree"
OWN_TASKS = '''"""A project's own tasks."""


def task_hello():
    """Say hello."""
    return {"actions": ["echo hello > hello.txt"], "targets": ["hello.txt"], "verbosity": 2}


def task_render():
    """The project's own render step."""
    return {"actions": ["echo rendered >> rendered.txt"], "uptodate": [False], "verbosity": 2}
'''


def readme_dodo_lines() -> str:
    """The lines the README's Use section gives for a project's dodo.py."""
    block = re.search(r"The two lines it adds:\n\n((?:    .*\n)+)", README)
    assert block is not None, "the README lost its dodo.py lines"
    return "".join(line[4:] + "\n" for line in block.group(1).splitlines())


def run(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})


def doit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    result = run(cwd, sys.executable, "-m", "doit", *args)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tree = tmp_path / "project"
    shutil.copytree(GOLDEN, tree)
    return tree


def pages(out: Path) -> dict[str, bytes]:
    return {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*.md"))
            if ".kwdocs" not in path.parts}


def test_the_rule_set_beside_a_projects_own_tasks(project):
    (project / "dodo.py").write_text(OWN_TASKS + "\n" + readme_dodo_lines())
    out = project / "kwdocs-out"

    listed = doit(project, "list")
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines()} == {"hello", "kwdocs", "render"}
    for task in ("render", "hello"):     # the project's own tasks: kwdocs neither scans nor prints
        alone = doit(project, task)
        assert alone.returncode == 0, alone.stderr
        assert alone.stdout.split() == [".", task] and alone.stderr == ""
    assert (project / "rendered.txt").read_text() == "rendered\n" and (project / "hello.txt").is_file()
    assert not out.exists()

    built = doit(project, "kwdocs")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "kwdocs:render:geometry/shapes" in built.stdout and " render\n" not in built.stdout + "\n"
    assert (project / "rendered.txt").read_text() == "rendered\n"   # the project's render did not run
    assert "class Circle" in (out / "geometry/shapes/circle.py_docs.md").read_text()
    assert "rendered.txt_docs.md" in pages(out) and not any(name.startswith(".doit") for name in pages(out))
    check = run(project, sys.executable, "-m", "kwdocs", "check")    # what `kwdocs build` would write
    assert check.returncode == 0, check.stdout + check.stderr
    found = run(project, sys.executable, "-m", "kwdocs", "find", "Circle")  # the state doit left is vouched for
    assert found.returncode == 0 and found.stderr == "", found.stdout + found.stderr
    assert "geometry/shapes/circle.py:" in found.stdout

    before = {name: (out / name).stat().st_mtime_ns for name in pages(out)}
    again = doit(project, "kwdocs")
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines and all(line.startswith("-- kwdocs:") for line in lines), again.stdout     # every task up to date
    assert {name: (out / name).stat().st_mtime_ns for name in pages(out)} == before

    with open(project / "geometry/shapes/square.py", "a") as handle:
        handle.write("\n\ndef unit_square():\n    return Square(1.0)\n")
    everything = doit(project)
    assert everything.returncode == 0, everything.stdout + everything.stderr
    assert ".  render" in everything.stdout and ".  kwdocs:render:geometry/shapes" in everything.stdout
    assert (project / "rendered.txt").read_text() == "rendered\nrendered\n"
    assert "unit_square" in (out / "geometry/shapes/square.py_kw.md").read_text()
    found = run(project, sys.executable, "-m", "kwdocs", "find", "unit_square")    # the index kept current
    assert found.returncode == 0 and found.stderr == "", found.stdout + found.stderr
    assert found.stdout.startswith("geometry/shapes/square.py:")


def test_a_bad_setting_is_one_message(project):
    (project / "dodo.py").write_text(readme_dodo_lines())
    (project / "pyproject.toml").write_text("[tool.kwdocs]\nout = 'docs'\n")
    hello = doit(project, "list")
    assert hello.returncode == 0 and hello.stderr == ""
    bad = doit(project, "kwdocs")
    assert bad.returncode != 0
    assert "unknown key 'out'" in bad.stdout + bad.stderr
    assert not (project / "kwdocs-out").exists()


def test_pages_come_back_after_kwdocs_clean(project):
    """doit keeps the tasks' records with the project's: a state removed (``kwdocs clean``,
    ``rm -rf kwdocs-out``) must not leave them saying the pages are up to date."""
    (project / "dodo.py").write_text(readme_dodo_lines())
    assert doit(project, "kwdocs").returncode == 0
    written = pages(project / "kwdocs-out")
    assert run(project, sys.executable, "-m", "kwdocs", "clean").returncode == 0
    assert not (project / "kwdocs-out").exists()
    again = doit(project, "kwdocs")
    assert again.returncode == 0, again.stdout + again.stderr
    assert pages(project / "kwdocs-out") == written


def test_a_file_of_the_users_where_a_page_goes_stops_it(project):
    (project / "dodo.py").write_text(readme_dodo_lines())
    (project / "kwdocs-out").mkdir()
    (project / "kwdocs-out/README.md_docs.md").write_text("my own notes\n")
    refused = doit(project, "kwdocs")
    assert refused.returncode != 0
    assert "README.md_docs.md: not written by kwdocs" in refused.stdout + refused.stderr
    assert [path.name for path in (project / "kwdocs-out").iterdir()] == ["README.md_docs.md"]
    assert (project / "kwdocs-out/README.md_docs.md").read_text() == "my own notes\n"


def kwdocs_init(cwd: Path) -> subprocess.CompletedProcess:
    return run(cwd, sys.executable, "-m", "kwdocs", "init")


def test_init_in_a_fresh_project(project):
    first = kwdocs_init(project)
    assert first.returncode == 0, first.stderr
    assert "kwdocs: wrote dodo.py" in first.stdout and "kwdocs: wrote .pre-commit-config.yaml" in first.stdout
    dodo = (project / "dodo.py").read_text()
    assert dodo.endswith(readme_dodo_lines())
    config = (project / ".pre-commit-config.yaml").read_text()
    assert config in README     # the README's snippet, word for word
    built = doit(project)
    assert built.returncode == 0 and (project / "kwdocs-out/index.md").is_file(), built.stdout + built.stderr

    second = kwdocs_init(project)
    assert second.returncode == 0, second.stderr
    assert "dodo.py has kwdocs' tasks already" in second.stdout
    assert ".pre-commit-config.yaml has kwdocs' hooks already" in second.stdout
    assert (project / "dodo.py").read_text() == dodo and (project / ".pre-commit-config.yaml").read_text() == config


THEIR_HOOKS = """\
# the project's hooks
repos:
-   repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v2.3.0
    hooks:
    -   id: check-yaml
    -   id: end-of-file-fixer

default_stages: [pre-commit]
"""


def test_init_adds_to_what_the_project_has(project):
    (project / "dodo.py").write_text(OWN_TASKS)
    (project / ".pre-commit-config.yaml").write_text(THEIR_HOOKS)
    first = kwdocs_init(project)
    assert first.returncode == 0, first.stderr
    assert "added kwdocs' tasks to dodo.py" in first.stdout
    assert "added kwdocs' hooks to .pre-commit-config.yaml" in first.stdout
    dodo = (project / "dodo.py").read_text()
    assert dodo.startswith(OWN_TASKS) and dodo.endswith(readme_dodo_lines())
    config = (project / ".pre-commit-config.yaml").read_text()
    assert config.startswith("# the project's hooks\n")
    theirs, ours = yaml.safe_load(THEIR_HOOKS), yaml.safe_load(config)
    assert ours["default_stages"] == ["pre-commit"]
    assert ours["repos"][:-1] == theirs["repos"]
    assert ours["repos"][-1] == yaml.safe_load(init.PRE_COMMIT_FILE)["repos"][0]
    listed = doit(project, "list")
    assert {line.split()[0] for line in listed.stdout.splitlines()} == {"hello", "kwdocs", "render"}

    second = kwdocs_init(project)
    assert second.returncode == 0 and "already" in second.stdout
    assert (project / "dodo.py").read_text() == dodo and (project / ".pre-commit-config.yaml").read_text() == config


def test_init_leaves_a_configuration_it_cannot_add_to(project):
    (project / ".pre-commit-config.yaml").write_text("repos: [{repo: local, hooks: []}]\n")
    refused = kwdocs_init(project)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and ".pre-commit-config.yaml" in refused.stderr
    assert (project / ".pre-commit-config.yaml").read_text() == "repos: [{repo: local, hooks: []}]\n"
    assert not (project / "dodo.py").exists()
    flag = run(project, sys.executable, "-m", "kwdocs", "init", "--out", "docs")    # a setting it would not keep
    assert flag.returncode == 2 and "--out" in flag.stderr and flag.stderr.count("\n") == 1
    assert not (project / "dodo.py").exists()


def test_the_root_dodo_py(tmp_path):
    """The README's first set-up command runs `doit` at the root: the summary line of `kwdocs
    build`, and its pages (on a copy: doit writes to the dodo.py's own folder)."""
    root = tmp_path / "kwdocs"
    shutil.copytree(GOLDEN, root)
    shutil.copy2(REPO / "dodo.py", root / "dodo.py")
    built = doit(root)
    assert built.returncode == 0, built.stdout + built.stderr
    assert re.search(r"^kwdocs: 14 files scanned, \d+ pages written", built.stdout, re.MULTILINE), built.stdout
    again = doit(root)
    assert re.search(r"^kwdocs: 14 files scanned, 0 pages written, 0 removed", again.stdout, re.MULTILINE)
    reference = tmp_path / "reference" / "kwdocs"
    shutil.copytree(GOLDEN, reference)
    shutil.copy2(REPO / "dodo.py", reference / "dodo.py")
    assert run(reference, sys.executable, "-m", "kwdocs", "build", "-j", "1").returncode == 0
    assert pages(root / "kwdocs-out") == pages(reference / "kwdocs-out")

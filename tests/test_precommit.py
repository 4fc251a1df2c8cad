"""The pre-commit hooks as a user gets them: ``pre-commit try-repo`` and a real ``git commit``.

pre-commit installs a hook repository from a commit into its own virtualenv,
so the hooks come from a scratch repository holding this working tree as it
is (uncommitted work included), installed once for the module.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "tree"
GIT_ENV = {"GIT_AUTHOR_NAME": "kwdocs", "GIT_AUTHOR_EMAIL": "kwdocs@example.invalid",
           "GIT_COMMITTER_NAME": "kwdocs", "GIT_COMMITTER_EMAIL": "kwdocs@example.invalid"}


def run(cwd: Path, *command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **GIT_ENV, **(env or {})})


def git(cwd: Path, *args: str) -> str:
    result = run(cwd, "git", *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def hooks(tmp_path_factory) -> tuple[Path, dict]:
    """(a repository with this kwdocs committed, environment with a private PRE_COMMIT_HOME)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        import pre_commit  # noqa: F401  (the hooks run through `python -m pre_commit`)
    except ImportError:
        pytest.fail("pre-commit is not installed: it is a test dependency (pip install -e '.[test]')")
    scratch = tmp_path_factory.mktemp("precommit")
    source = scratch / "kwdocs"
    listed = git(REPO, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for rel in listed:
        if rel and not rel.startswith(("tests/", "bench/")) and (REPO / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, source / rel)
    git(source, "init", "-q")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "kwdocs as tested")
    return source, {"PRE_COMMIT_HOME": str(scratch / "pre-commit-home")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's repository, its first commit made before kwdocs was set up."""
    tree = tmp_path / "project"
    shutil.copytree(GOLDEN, tree)
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "first")
    return tree


def pre_commit(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return run(cwd, sys.executable, "-m", "pre_commit", *args, env=env)


def test_try_repo_fails_until_the_pages_are_staged(hooks, project):
    """(try-repo installs the hook afresh on every call: about 10 s each.)"""
    source, env = hooks
    first = pre_commit(project, env, "try-repo", str(source), "kwdocs", "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "pages written" in first.stdout and "stage them" in first.stdout
    assert (project / "kwdocs-out/geometry/shapes/circle.py_docs.md").is_file()
    git(project, "add", "-A")
    second = pre_commit(project, env, "try-repo", str(source), "kwdocs", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr


def test_a_real_commit_with_the_hooks_installed(hooks, project):
    source, env = hooks
    rev = git(source, "rev-parse", "HEAD").strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {rev}\n    hooks:\n      - id: kwdocs\n      - id: kwdocs-check\n")
    assert pre_commit(project, env, "install").returncode == 0
    with open(project / "geometry/shapes/square.py", "a") as handle:
        handle.write("\n\ndef unit_square():\n    return Square(1.0)\n")
    (project / "README.md").write_text((project / "README.md").read_text() + "\nAn unstaged note.\n")
    git(project, "add", ".pre-commit-config.yaml", "geometry/shapes/square.py")
    refused = run(project, "git", "commit", "-m", "square grows", env=env)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "pages written" in refused.stdout + refused.stderr
    git(project, "add", "kwdocs-out")
    accepted = run(project, "git", "commit", "-m", "square grows", env=env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "unit_square" in git(project, "show", "HEAD:kwdocs-out/geometry/shapes/square.py_kw.md")
    assert "An unstaged note" in (project / "README.md").read_text()   # pre-commit's stash gave it back

    git(project, "checkout", "README.md")     # CI checks what is committed
    ci = pre_commit(project, env, "run", "kwdocs-check", "--all-files", "--hook-stage", "manual")
    assert ci.returncode == 0, ci.stdout + ci.stderr
    with open(project / "geometry/shapes/circle.py", "a") as handle:
        handle.write("\n\ndef unit_circle():\n    return Circle(1.0)\n")
    pages_before = {path: path.read_bytes() for path in (project / "kwdocs-out").rglob("*.md")}
    ci = pre_commit(project, env, "run", "kwdocs-check", "--all-files", "--hook-stage", "manual")
    assert ci.returncode == 1, ci.stdout + ci.stderr
    assert "stale: geometry/shapes/circle.py_kw.md" in ci.stdout
    assert {path: path.read_bytes() for path in (project / "kwdocs-out").rglob("*.md")} == pages_before


def readme_hooks() -> str:
    """The configuration the README's "Pre-commit hook and CI check" gives, word for word."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Pre-commit hook and CI check"):]
    return section[section.index("```yaml\n") + len("```yaml\n"):section.index("```\n", section.index("```yaml"))]


def test_the_readme_snippet_works_word_for_word(project, tmp_path):
    """Pasted into a fresh project, with the installed kwdocs on the PATH and nothing else."""
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    (project / ".pre-commit-config.yaml").write_text(readme_hooks())
    assert pre_commit(project, env, "install").returncode == 0
    git(project, "add", ".pre-commit-config.yaml")
    refused = run(project, "git", "commit", "-m", "kwdocs set up", env=env)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "pages written" in refused.stdout + refused.stderr
    assert "def area" in (project / "kwdocs-out/geometry/shapes/circle.py_docs.md").read_text()
    git(project, "add", "-A")
    accepted = run(project, "git", "commit", "-m", "kwdocs set up", env=env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "kwdocs-out/index.md" in git(project, "ls-files", "kwdocs-out")
    ci = pre_commit(project, env, "run", "kwdocs-check", "--all-files", "--hook-stage", "manual")
    assert ci.returncode == 0, ci.stdout + ci.stderr

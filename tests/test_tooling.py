"""The linters the project holds itself to, as tests: ruff and mypy on ``kwdocs/`` (configured in
pyproject.toml), so the README's one test command checks them too."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_in_kwdocs():
    result = run("ruff", "check", "--no-cache", "kwdocs")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing_in_kwdocs():
    result = run("mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_package_folder_is_installed():
    """A package folder missing from pyproject's explicit list installs in editable mode and is
    absent from a wheel (pre-commit's own install of the hook, pip install of a release)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {init.parent.relative_to(ROOT).as_posix().replace("/", ".")
               for init in (ROOT / "kwdocs").rglob("__init__.py")}
    assert folders - listed == set(), "add these to [tool.setuptools] packages"

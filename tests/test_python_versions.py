"""The pages do not depend on the Python that runs kwdocs: files with the syntax of Python 3.12
to 3.14 give the same bytes under every interpreter at hand, and no problem line.

The interpreters are those named in ``KWDOCS_TEST_PYTHONS`` (paths, separated as in PATH),
``.venv312/bin/python`` and the like in this repository (a virtual environment per version with
``pip install -e .``), or ``python3.12`` and the like on PATH, each able to import kwdocs and
its dependencies; a version without one is skipped.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import FIXTURES as ALL_FIXTURES, REPOSITORY

FIXTURES = ALL_FIXTURES / "python"

VERSIONS = ["3.11", "3.12", "3.13", "3.14"]
RUNNING = f"{sys.version_info[0]}.{sys.version_info[1]}"


def pages(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".kwdocs" not in p.parts}


@cache
def interpreters() -> dict[str, str]:
    """Version -> an interpreter that runs this checkout's kwdocs."""
    named = [path for path in os.environ.get("KWDOCS_TEST_PYTHONS", "").split(os.pathsep) if path]
    found: dict[str, str] = {}
    venvs = [str(REPOSITORY / f".venv{version.replace('.', '')}" / "bin" / "python") for version in VERSIONS]
    for candidate in named + venvs + [shutil.which(f"python{version}") or "" for version in VERSIONS]:
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys, kwdocs.cli, tree_sitter_python; print('%d.%d' % sys.version_info[:2])"],
            cwd=REPOSITORY, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
        if probe.returncode == 0:
            found.setdefault(probe.stdout.strip(), candidate)
    return found


def build(python: str, tmp_path: Path, name: str) -> dict[str, bytes]:
    """The pages of a tree of the fixtures with newer syntax, built by ``python``."""
    src = tmp_path / "src"
    if not src.is_dir():
        (src / "shapes").mkdir(parents=True)
        newest = (FIXTURES / "py314.py").read_text(encoding="utf-8")
        (src / "shapes" / "py314.py").write_text(newest, encoding="utf-8")
        # what Python 3.13 reads itself (3.14's ``except A, B:`` bracketed), and 3.12 (no defaults)
        (src / "shapes" / "py313.py").write_text(
            newest.replace("except ValueError, TypeError:", "except (ValueError, TypeError):"), encoding="utf-8")
        shutil.copy(FIXTURES / "pep695.py", src / "shapes" / "pep695.py")
    out = tmp_path / name
    done = subprocess.run([python, "-m", "kwdocs", "build", "--src", str(src), "--out", str(out), "-q", "-j", "1"],
                          cwd=REPOSITORY, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY)}, timeout=300)
    assert done.returncode == 0, done.stderr
    return pages(out)


def test_newer_syntax_gives_no_problem_and_lists_every_definition(tmp_path):
    built = build(sys.executable, tmp_path, "out")
    for name in ("py314", "py313", "pep695"):
        page = built[f"shapes/{name}.py_docs.md"].decode()
        assert "Problems" not in page and "did not parse" not in page, name
    page = built["shapes/py314.py_docs.md"].decode()
    for definition in ("type **`Point`** `= tuple[float, float]` ([line 6](",
                       "type **`Table`** `[K, V = list[K]] = dict[K, V]` ([line 8](",
                       "function **`midpoint`** `[T: (int, float)](a: `[`Pair`](#l7-type-pair)`[T]",
                       "class **`Cache`** `[K, V = str](dict[K, V], metaclass=type)` ([line 17](",
                       "type **`Entry`** `= tuple[K, V]` ([line 20](", "method **`describe`**", "method **`load`**"):
        assert definition in page, definition


@pytest.mark.parametrize("version", [version for version in VERSIONS if version != RUNNING])
def test_the_same_pages_under_every_python(version, tmp_path):
    python = interpreters().get(version)
    if python is None:
        pytest.skip(f"no Python {version} able to run kwdocs (see KWDOCS_TEST_PYTHONS)")
    mine = build(sys.executable, tmp_path, "mine")
    theirs = build(python, tmp_path, "theirs")
    assert sorted(theirs) == sorted(mine)
    for name, data in mine.items():
        assert theirs[name].decode() == data.decode(), f"{name} differs under Python {version}"

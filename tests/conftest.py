"""Shared fixtures: temporary trees and a way to run kwdocs on them."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from kwdocs.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/fixtures/golden/expected from the current output")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


def run_kwdocs(*argv: str, capsys=None) -> int:
    """Run the command line in this process, single-job unless asked otherwise."""
    args = list(argv)
    if args and args[0] in ("build",) and "-j" not in args:
        args += ["-j", "1"]
    return main(args)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``folder`` (state excluded) with its content and mtime."""
    return {path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file() and ".kwdocs" not in path.parts}


def changed_files(before: dict, after: dict) -> set[str]:
    """Pages written (new mtime or content) or added or removed between two snapshots."""
    return {name for name in set(before) | set(after) if before.get(name) != after.get(name)}


@pytest.fixture
def golden_tree(tmp_path: Path) -> Path:
    """The golden fixture tree, plus the files its .gitignore must keep out."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "golden" / "tree", tree)
    (tree / "build").mkdir()
    (tree / "build" / "output.txt").write_text("compiled output\n")
    (tree / "debug.log").write_text("a log line\n")
    return tree

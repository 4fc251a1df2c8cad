"""Shared fixtures: temporary trees and a way to run kwdocs on them."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def traced_peak(call: Callable[[], object]) -> int:
    """tracemalloc's peak, in bytes, while ``call`` runs."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def entry_text(page: str, name: str) -> str:
    """The Code Structure entry of ``name`` on a docs page and its documentation, up to the next
    entry (at any depth) or the next section."""
    start = page.index(f"**`{name}`**")
    after = _ENTRY.search(page, start)
    return page[start:after.start() if after else page.index("\n## ", start)]


_ENTRY = re.compile(r"^\s*- <a id=", re.MULTILINE)
REPOSITORY = Path(__file__).resolve().parent.parent
MAKE_CORPUS = REPOSITORY.parent / "shared" / "bench" / "make-corpus.sh"


def corpus_wheel() -> str | None:
    """The wheel make-corpus.sh would use without downloading it (it is 190 MB): in pip's
    find-links folders (the environment's or pip's configuration) or the script's cache."""
    folders = os.environ.get("PIP_FIND_LINKS", "").split()
    configured = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                                capture_output=True, text=True)
    if configured.returncode == 0:
        folders += [link.removeprefix("file://") for link in configured.stdout.split()]
    folders.append(str(Path.home() / ".cache" / "kwdocs-corpus"))
    for folder in folders:
        found = sorted(glob.glob(os.path.join(folder, "torch-2.13.0*.whl")))
        if found:
            return found[0]
    return None


@pytest.fixture(scope="session")
def corpus_slice(tmp_path_factory) -> Path:
    if not MAKE_CORPUS.is_file():
        pytest.skip(f"the corpus script is not there: {MAKE_CORPUS}")
    if corpus_wheel() is None:
        pytest.skip("make-corpus.sh has no torch 2.13.0 wheel at hand (PIP_FIND_LINKS, ~/.cache/kwdocs-corpus)")
    root = tmp_path_factory.mktemp("corpus")
    result = subprocess.run(["bash", str(MAKE_CORPUS), str(root / "src"), "--small"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return root / "src"


@contextmanager
def changed_after_extraction(rel: str) -> Iterator[None]:
    """Inside, the render step finds ``rel`` changed again since it was extracted (as a file
    saved or checked out mid-build is): its pages are left as they were."""
    from kwdocs.engine.steps import render
    from kwdocs.sources import ChangedSinceExtracted

    real = render.page_source

    def moved_again(config, facts, *args, **kwargs):
        if facts["path"] == rel:
            raise ChangedSinceExtracted(rel)
        return real(config, facts, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "page_source", moved_again)
        yield


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

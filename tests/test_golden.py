"""Golden pages: the whole output for a small tree, checked in and read by a person.

Regenerate after an intended change with
    python -m pytest tests/test_golden.py --update-golden
then read the diff of tests/fixtures/golden/expected before committing it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import FIXTURES, run_kwdocs

EXPECTED = FIXTURES / "golden" / "expected"


def pages(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".kwdocs" not in p.parts}


def test_golden_pages(golden_tree: Path, update_golden: bool):
    out = golden_tree.parent / "out"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    actual = pages(out)
    if update_golden:
        shutil.rmtree(EXPECTED, ignore_errors=True)
        for name, data in actual.items():
            (EXPECTED / name).parent.mkdir(parents=True, exist_ok=True)
            (EXPECTED / name).write_bytes(data)
    expected = pages(EXPECTED)
    assert sorted(actual) == sorted(expected), "the set of pages differs from the golden set"
    for name in expected:
        assert actual[name].decode() == expected[name].decode(), f"{name} differs from the golden page"


def test_same_tree_same_bytes_in_any_order_of_work(golden_tree: Path):
    """Two builds, one parallel and one serial, into different folders: identical pages."""
    first, second = golden_tree.parent / "first", golden_tree.parent / "second"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(first), "-q", "-j", "2") == 0
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(second), "-q", "-j", "1") == 0
    assert pages(first) == pages(second)

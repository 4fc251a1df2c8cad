"""The keywords step holds a build's changed entries in memory up to a bound and past it writes
them to run files of the state, a letter each (issue 33): either way the keyword index is the
same, and no run file outlives the build, a killed build's included."""
from __future__ import annotations

import filecmp
from pathlib import Path

from kwdocs.engine.steps import keywords as keywords_step
from tests.conftest import run_kwdocs


def _tree(src: Path) -> None:
    for number, name in enumerate(["alpha", "beta", "gamma", "delta", "zeta", "omega"]):
        path = src / f"pkg{number % 2}" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""The {name} module."""\n\n\ndef {name}_run():\n    return {number}\n\n\n'
                        f"class {name.title()}Thing:\n    def go(self):\n        return 1\n", encoding="utf-8")


def _same(left: Path, right: Path) -> list[str]:
    """The files whose bytes differ between two outputs, the state aside."""
    differ: list[str] = []
    compared = filecmp.dircmp(left, right, ignore=[".kwdocs"])
    stack = [compared]
    while stack:
        level = stack.pop()
        differ += [*level.left_only, *level.right_only, *level.diff_files, *level.funny_files]
        stack.extend(level.subdirs.values())
    return differ


def test_runs_written_to_files_give_the_index_held_runs_give_and_leave_none(tmp_path, monkeypatch):
    src = tmp_path / "src"
    _tree(src)
    held, spilled = tmp_path / "held", tmp_path / "spilled"
    assert run_kwdocs("build", "--src", str(src), "--out", str(held), "-q") == 0
    monkeypatch.setattr(keywords_step, "RUN_BYTES", 0)     # every entry past the bound: files
    assert run_kwdocs("build", "--src", str(src), "--out", str(spilled), "-q") == 0
    runs = spilled / ".kwdocs" / "keywords" / "runs"
    assert not runs.exists()
    assert _same(held, spilled) == []
    # a build killed in the step left a run; an edit's build removes it and indexes the edit
    runs.mkdir()
    (runs / "letter-Q").write_bytes(b'["pkg9/gone.py", 3]\n[["quux"]]\n')
    (src / "pkg0" / "alpha.py").write_text('"""Alpha, again."""\n\n\ndef quartz_run():\n    return 9\n', encoding="utf-8")
    assert run_kwdocs("build", "--src", str(spilled.parent / "src"), "--out", str(spilled), "-q") == 0
    assert not runs.exists()
    monkeypatch.undo()
    assert run_kwdocs("build", "--src", str(src), "--out", str(held), "-q") == 0
    assert _same(held, spilled) == []
    assert "quartz_run" in (held / "keywords.md").read_text(encoding="utf-8")
    assert "quux" not in (spilled / "keywords.md").read_text(encoding="utf-8")

"""The one place kwdocs writes through: only below the output folder, only on change, atomically."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kwdocs.store import writer as output


def leftovers(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.name.startswith(output.TEMP_PREFIX)]


def test_writes_once_then_leaves_an_unchanged_page_alone(tmp_path):
    root = tmp_path / "out"
    page = root / "a" / "b" / "page.md"
    assert output.write_if_changed(root, page, "# One\n") is True
    assert page.read_text() == "# One\n"
    before = page.stat().st_mtime_ns
    assert output.write_if_changed(root, page, "# One\n") is False
    assert page.stat().st_mtime_ns == before
    assert output.write_if_changed(root, page, "# Two\n") is True
    assert page.read_text() == "# Two\n"
    assert leftovers(root) == []


@pytest.mark.parametrize("escape", ["../elsewhere.md", "a/../../elsewhere.md", "../out2/page.md", "/etc/kwdocs.md"])
def test_paths_outside_the_output_folder_are_refused(tmp_path, escape):
    root = tmp_path / "out"
    root.mkdir()
    target = root / escape if not escape.startswith("/") else Path(escape)
    with pytest.raises(output.OutsideOutput):
        output.write_if_changed(root, target, "x")
    assert not (tmp_path / "elsewhere.md").exists() and not (tmp_path / "out2").exists()


def test_a_folder_removed_between_writes_is_made_again(tmp_path):
    """Folders already made are remembered; one deleted since (a clean, a test) is made again."""
    root = tmp_path / "out"
    output.write_if_changed(root, root / "pkg" / "first.md", "1")
    shutil.rmtree(root / "pkg")
    assert output.write_if_changed(root, root / "pkg" / "second.md", "2") is True
    assert (root / "pkg" / "second.md").read_text() == "2"


def test_a_leftover_temporary_file_is_never_reused(tmp_path, monkeypatch):
    """A killed process of the same pid may have left the very name the next write would take."""
    root = tmp_path / "out"
    (root / "pkg").mkdir(parents=True)
    upcoming = next(output._sequence) + 1      # the name after the one just drawn
    stale = root / "pkg" / f"{output.TEMP_PREFIX}{os.getpid()}-{upcoming}{output.TEMP_SUFFIX}"
    stale.write_text("half a page")
    assert output.write_if_changed(root, root / "pkg" / "page.md", "whole page") is True
    assert (root / "pkg" / "page.md").read_text() == "whole page"
    assert stale.read_text() == "half a page"
    assert output.sweep_temporaries(root) == 1 and leftovers(root) == []


def test_a_folder_standing_where_a_page_belongs_is_reported(tmp_path):
    root = tmp_path / "out"
    (root / "page.md").mkdir(parents=True)
    with pytest.raises(output.OutsideOutput, match="a folder stands where a page belongs"):
        output.write_if_changed(root, root / "page.md", "x")

"""doit's file checker: sources are judged by content, kwdocs' own state by its time stamp."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kwdocs import checker


@pytest.fixture
def setup(tmp_path: Path, monkeypatch):
    out = tmp_path / "out"
    (out / ".kwdocs").mkdir(parents=True)
    source, shard = tmp_path / "a.py", out / ".kwdocs" / "facts.json"
    source.write_text("x = 1\n")
    shard.write_text('{"files": {}}')
    past = os.stat(source).st_mtime - 60
    for path in (source, shard):
        os.utime(path, (past, past))
    read: list[str] = []
    real = checker.regular_file_md5
    monkeypatch.setattr(checker, "regular_file_md5", lambda path: read.append(path) or real(path))
    return checker.checker_for(out)(), source, shard, read


def touched(path: Path) -> os.stat_result:
    """The file with a new modification time and the same content."""
    later = os.stat(path).st_mtime + 30
    os.utime(path, (later, later))
    return os.stat(path)


def test_a_source_touched_without_a_change_is_not_modified(setup):
    check, source, _, read = setup
    state = check.get_state(str(source), None)
    assert check.check_modified(str(source), touched(source), state) is False
    assert read == [str(source), str(source)]    # hashed when saved and when its time stamp moved


def test_a_source_edited_to_the_same_size_is_modified(setup):
    check, source, _, _ = setup
    state = check.get_state(str(source), None)
    source.write_text("x = 2\n")
    assert check.check_modified(str(source), touched(source), state) is True


def test_state_files_are_judged_by_their_time_stamp_without_being_read(setup):
    """kwdocs rewrites a state file only with new content, so a new time stamp means new content."""
    check, _, shard, read = setup
    state = check.get_state(str(shard), None)
    assert check.check_modified(str(shard), os.stat(shard), state) is False
    assert check.check_modified(str(shard), touched(shard), state) is True
    assert read == []

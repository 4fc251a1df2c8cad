"""Deciding what is out of date: doit's checker by time stamp and size, extraction by content hash."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kwdocs.config import load_config
from kwdocs.engine import stat_checker as checker
from kwdocs.engine.steps import extract
from kwdocs.engine.tasks import SourcesUnchanged
from kwdocs.store.state import FACTS, load_shard


def touched(path: Path) -> os.stat_result:
    """The file with a new modification time and the same content."""
    later = os.stat(path).st_mtime + 30
    os.utime(path, (later, later))
    return os.stat(path)


@pytest.fixture
def files(tmp_path: Path):
    out = tmp_path / "out"
    (out / ".kwdocs").mkdir(parents=True)
    source, shard = tmp_path / "a.py", out / ".kwdocs" / "facts.json"
    source.write_text("x = 1\n")
    shard.write_text('{"files": {}}')
    past = os.stat(source).st_mtime - 60
    for path in (source, shard):
        os.utime(path, (past, past))
    return checker.checker_for(out)(), source, shard


def test_the_checker_goes_by_time_stamp_and_size_and_never_opens_a_file(files, monkeypatch):
    check, source, shard = files
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *args, **kw: opened.append(path) or real_open(path, *args, **kw))
    states = {path: check.get_state(str(path), None) for path in (source, shard)}
    assert all(state[2] == "" for state in states.values())    # no digest taken
    for path, state in states.items():
        assert check.check_modified(str(path), os.stat(path), state) is False
        assert check.check_modified(str(path), touched(path), state) is True
    source.write_text("x = 22\n")
    assert check.check_modified(str(source), os.stat(source), states[source]) is True
    assert opened == []


def test_a_state_saved_with_an_md5_by_an_earlier_version_still_reads(files):
    check, source, _ = files
    info = os.stat(source)
    assert check.check_modified(str(source), info, (info.st_mtime, info.st_size, "0" * 32)) is False


def counts(result: dict) -> dict:
    return {key: result[key] for key in ("files", "extracted")}


def test_a_touched_file_is_read_again_but_not_extracted_again(tmp_path: Path, monkeypatch):
    """The content hash in the facts decides: same bytes, same facts, nothing downstream changes."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("def alpha():\n    pass\n")
    (src / "b.py").write_text("def beta():\n    pass\n")
    config = load_config(src, None, {"output": str(tmp_path / "out")})
    rels = ["a.py", "b.py"]
    assert counts(extract.extract_unit(config, "", rels, [])) == {"files": 2, "extracted": 2}
    first = load_shard(config, FACTS, "")

    extracted: list[str] = []
    real = extract.extract_bytes
    monkeypatch.setattr(extract, "extract_bytes",
                        lambda rel, data, *mask: extracted.append(rel) or real(rel, data, *mask))
    touched(src / "a.py")
    (src / "b.py").write_text("def gamma():\n    pass\n")
    changed = [str(src / "a.py"), str(src / "b.py")]
    assert counts(extract.extract_unit(config, "", rels, changed)) == {"files": 2, "extracted": 1}
    assert extracted == ["b.py"]
    second = load_shard(config, FACTS, "")
    assert second["files"]["a.py"] == first["files"]["a.py"]
    assert [s["name"] for s in second["files"]["b.py"]["symbols"]] == ["gamma"]


def test_an_extract_task_is_up_to_date_by_one_stamp_of_its_files_sizes_and_times(tmp_path: Path):
    """doit keeps no record per source file: the unit's task compares one stamp of them all."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a.py", "b.py"):
        (src / name).write_text(f"def {name[0]}():\n    pass\n")
        past = os.stat(src / name).st_mtime - 60
        os.utime(src / name, (past, past))
    config = load_config(src, None, {"output": str(tmp_path / "out")})
    rels = ["a.py", "b.py"]
    values = extract.extract_unit(config, "", rels, [])
    unchanged = SourcesUnchanged(config, rels)
    assert unchanged(None, values) is True
    assert unchanged(None, {}) is False     # never run
    assert SourcesUnchanged(config, ["a.py"])(None, values) is False     # a file left the unit
    touched(src / "a.py")
    assert unchanged(None, values) is False
    values = extract.extract_unit(config, "", rels, [])
    assert unchanged(None, values) is True
    (src / "b.py").write_text("def b():\n    return 1\n")     # same time stamp, another size
    os.utime(src / "b.py", (os.stat(src / "a.py").st_mtime,) * 2)
    assert unchanged(None, values) is False
    # a file written as the build reads it (racily clean) is not vouched for: the next build reads it again
    (src / "b.py").write_text("def b():\n    return 2\n")
    values = extract.extract_unit(config, "", rels, [])
    assert values["sources"] is None and unchanged(None, values) is False
    (src / "b.py").unlink()
    os.mkfifo(src / "b.py")
    assert unchanged(None, values) is False

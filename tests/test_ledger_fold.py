"""Folding the page journals into the ledger: each page's newest entry, with removals and damaged
lines left out, the same bytes whether the journals' lines were sorted in memory or set aside in
run files, and in memory that does not grow with the number of pages (issue 33)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kwdocs.config import Config
from kwdocs.store import journal, writer as output
from tests.conftest import traced_peak

SHA = {name: name * 64 for name in "abcdef"}


def config_at(tmp_path: Path) -> Config:
    config = Config(src=tmp_path / "src", out=tmp_path / "out", project_name="p")
    (config.state / output.JOURNAL_FOLDER).mkdir(parents=True)
    return config


def ledger_path(config: Config) -> Path:
    return config.state / output.JOURNAL_FOLDER / journal.LEDGER_FILE


def write_journal(config: Config, name: str, lines: list[bytes]) -> None:
    (config.state / output.JOURNAL_FOLDER / f"journal-{name}.jsonl").write_bytes(b"".join(lines))


def line(page: str, sha: str | None, size: int, mtime_ns: int) -> bytes:
    return output.compact_json([page, sha, size, mtime_ns]) + b"\n"


def journals_of_a_rebuild(config: Config) -> None:
    """A ledger, then two processes' journals: pages written again, removed, removed and written
    again, equal time stamps, and lines a user or a killed writer damaged."""
    ledger = {"kept.md": [SHA["a"], 10, 100], "rewritten.md": [SHA["a"], 10, 100], "removed.md": [SHA["a"], 10, 100],
              'odd],"name.md': [SHA["a"], 10, 100], "newer in ledger.md": [SHA["a"], 10, 900],
              "bad entry.md": ["not", "an", "entry"]}
    output.write_json(config.out, ledger_path(config), ledger)
    write_journal(config, "1", [
        line("rewritten.md", SHA["b"], 11, 200),
        line("removed.md", None, 0, 300),
        line("back.md", SHA["b"], 12, 200),
        line("back.md", None, 0, 300),
        line("newer in ledger.md", SHA["b"], 11, 800),        # older than the ledger's: the ledger's wins
        b'{"page": "dict.md", "sha": 1, "size": 2, "time": 3}\n',   # damaged: an object, not a line kwdocs writes
        line("tie.md", SHA["c"], 13, 500),
        line('odd],"name.md', SHA["b"], 14, 200),
        line("bad entry.md", SHA["b"], 15, 200),
    ])
    write_journal(config, "2", [
        line("back.md", SHA["d"], 16, 400),                 # written again after its removal
        line("tie.md", SHA["d"], 17, 500),                  # the same time stamp: the later line wins
        b'["wrong.md", 1, 2, 3]\n',                          # damaged: no hash
        line("new.md", SHA["e"], 18, 600),
        b'["half.md", "' + SHA["f"].encode()[:20],           # a killed writer's half line
    ])


EXPECTED = {"back.md": [SHA["d"], 16, 400], "bad entry.md": [SHA["b"], 15, 200], "kept.md": [SHA["a"], 10, 100],
            "new.md": [SHA["e"], 18, 600], "newer in ledger.md": [SHA["a"], 10, 900],
            'odd],"name.md': [SHA["b"], 14, 200], "rewritten.md": [SHA["b"], 11, 200],
            "tie.md": [SHA["d"], 17, 500]}


@pytest.mark.parametrize("run_records", [4096, 2])
def test_the_fold_keeps_each_pages_newest_entry(tmp_path, monkeypatch, run_records):
    """In memory or through run files merged two at a time, the ledger holds the same bytes: the
    sorted JSON of each page's newest entry; the journals and run files are gone."""
    monkeypatch.setattr(journal, "RUN_RECORDS", run_records, raising=False)
    monkeypatch.setattr(journal, "FAN_IN", 2, raising=False)
    config = config_at(tmp_path)
    journals_of_a_rebuild(config)
    assert {page: list(entry) for page, entry in journal.load(config).items()} == EXPECTED
    journal.compact(config, force=True)
    assert ledger_path(config).read_bytes() == output.sealed(output.compact_json(EXPECTED, sort_keys=True))
    assert [path.name for path in ledger_path(config).parent.iterdir()] == [journal.LEDGER_FILE]
    assert journal.load(config) == EXPECTED


def test_a_ledger_kwdocs_did_not_write_in_order_is_still_folded(tmp_path):
    """A sealed ledger whose pages are out of order (not as the fold writes it) is read whole."""
    config = config_at(tmp_path)
    output.write_sealed(config.out, ledger_path(config), b'{"b.md":["' + SHA["a"].encode() + b'",1,2],"a.md":["'
                        + SHA["b"].encode() + b'",3,4]}')
    write_journal(config, "1", [line("c.md", SHA["c"], 5, 6)])
    journal.compact(config, force=True)
    assert output.read_json(ledger_path(config)) == {"a.md": [SHA["b"], 3, 4], "b.md": [SHA["a"], 1, 2],
                                                     "c.md": [SHA["c"], 5, 6]}


def fold_peak(tmp_path: Path, pages: int) -> tuple[int, Config]:
    """tracemalloc's peak while a cold build's journals of ``pages`` lines are folded."""
    config = config_at(tmp_path / str(pages))
    for process in range(2):
        write_journal(config, str(process), [line(f"pkg{index % 97}/f{index}.py_docs.md", f"{index:064x}", index, index)
                                             for index in range(process, pages, 2)])
    return traced_peak(lambda: journal.compact(config, force=True)), config


def test_the_folds_memory_does_not_grow_with_the_pages(tmp_path):
    """Eight times the pages, about the same memory: the fold held an entry per page (7 MB at
    40,000), which was the building process's peak on a large tree."""
    (small, _), (large, config) = fold_peak(tmp_path, 5_000), fold_peak(tmp_path, 40_000)
    assert large < 1.5 * small, (small, large)
    assert len(output.read_json(ledger_path(config))) == 40_000

"""What kwdocs last wrote to each page, so that a page can be judged by content without rendering it.

``output.write_if_changed`` appends one line per page it writes (or finds
already right) to a journal of its process: the page, the SHA-256 of what
kwdocs put there, and the size and modification time the page had then;
``output.remove`` appends one without a hash, dated when it removed the page.
``load`` merges those journals with ``ledger.json`` (the newest entry of a
page wins, and a removal drops the page); ``compact`` folds the journals into
``ledger.json``, for the holder of the output folder's lock only.

A page is *vouched for* when its content hashes to the ledger's entry.  The
hash is skipped when size and modification time both still equal the
entry's, as git does: a write always changes the modification time, and
pre-commit's stash, a checkout or an editor all write.  Only what kwdocs
wrote ever enters the ledger, so a page edited by hand is never vouched for.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from kwdocs.config import Config
from kwdocs.store import writer as output
from kwdocs.store.state import LEDGER

LEDGER_FILE = LEDGER
COMPACT_BYTES = 1 << 20     # journals larger than this (and than the ledger) are folded in,
COMPACT_FILES = 32          # and so are this many (each build and each watch adds one)

# [sha256, size, modification time (ns)]: a list as the ledger stores it, a tuple as a journal's
# line gives it (the fold at a build's end holds an entry per page: a tuple is a third smaller)
Entry = list | tuple


def _journals(config: Config) -> list[Path]:
    folder = config.state / output.JOURNAL_FOLDER
    return sorted(folder.glob("journal-*.jsonl")) if folder.is_dir() else []


def load(config: Config) -> dict[str, Entry]:
    """Page (relative to the output folder) -> what kwdocs last wrote there."""
    entries: dict[str, Entry] = output.read_json(config.state / output.JOURNAL_FOLDER / LEDGER_FILE, {})
    if not isinstance(entries, dict):   # not what kwdocs writes: vouch for nothing, render to judge
        entries = {}
    for page in [page for page, entry in entries.items() if not _valid(entry)]:
        del entries[page]
    for journal in _journals(config):
        try:
            handle = open(journal, "rb")    # noqa: SIM115 - closed below, after the lines are read
        except OSError:
            continue
        with handle:
            for line in handle:     # a line at a time: a cold build's journals hold a line per page
                try:
                    page, sha, size, mtime_ns = entry = orjson.loads(line)
                except (ValueError, TypeError):      # orjson.JSONDecodeError is a ValueError
                    continue     # the last line of a journal whose writer was killed mid-line
                if not _valid(entry[1:]) or not isinstance(page, str):
                    continue     # damaged: that page is not vouched for, so it is rendered to be judged
                known = entries.get(page)
                if known is None or mtime_ns >= known[2]:
                    entries[page] = (sha, size, mtime_ns)
    for page in [page for page, entry in entries.items() if entry[0] is None]:    # removed since
        del entries[page]
    return entries


def _valid(entry: object) -> bool:
    """An entry as kwdocs writes it: [SHA-256 hex or None (removed), size, time stamp]."""
    return (isinstance(entry, list) and len(entry) == 3 and (entry[0] is None or isinstance(entry[0], str))
            and isinstance(entry[1], int) and isinstance(entry[2], int))


def compact(config: Config, force: bool = False) -> None:
    """Fold the journals into the ledger once they grow (lock holders only)."""
    journals = _journals(config)
    ledger = config.state / output.JOURNAL_FOLDER / LEDGER_FILE
    sizes = sum(_size(path) for path in journals)
    if not journals or (not force and len(journals) < COMPACT_FILES and sizes < max(COMPACT_BYTES, _size(ledger))):
        return
    # removals are in the journals: no check of 25,000 pages, serially at the end of a cold build
    entries = load(config)
    pages = sorted(entries)

    def parts() -> Iterator[bytes]:
        """The ledger's JSON (keys sorted), an entry at a time, each let go once encoded."""
        yield b"{"
        for index, page in enumerate(pages):
            yield (b"," if index else b"") + output.compact_json(page) + b":" + output.compact_json(entries.pop(page))
        yield b"}"
    output.write_sealed_parts(config.out, ledger, parts())
    for journal in journals:
        try:
            journal.unlink()
        except FileNotFoundError:
            pass


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def file_sha256(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def vouched(config: Config, pages: Iterable[str], entries: dict[str, Entry]) -> tuple[set[str], set[str]]:
    """(pages the ledger vouches for, the rest: missing, changed since, or never recorded)."""
    good: set[str] = set()
    doubtful: set[str] = set()
    root = str(config.out) + os.sep
    for page in pages:
        entry = entries.get(page)
        path = root + page          # strings: pathlib doubled the time of 25,000 stats
        try:
            info = os.stat(path)
        except OSError:
            doubtful.add(page)
            continue
        if entry is not None and ((info.st_size == entry[1] and info.st_mtime_ns == entry[2])
                                  or (info.st_size == entry[1] and file_sha256(Path(path)) == entry[0])):
            good.add(page)
        else:
            doubtful.add(page)
    return good, doubtful

"""What kwdocs last wrote to each page, so that a page can be judged by content without rendering it.

``output.write_if_changed`` appends one line per page it writes (or finds
already right) to a journal of its process: the page, the SHA-256 of what
kwdocs put there, and the size and modification time the page had then;
``output.remove`` appends one without a hash, dated when it removed the page.
``load`` merges those journals with ``ledger.json`` (the newest entry of a
page wins, and a removal drops the page); ``compact`` folds the journals into
``ledger.json``, for the holder of the output folder's lock only: their lines
sorted a few thousand at a time into run files, merged with the ledger's
stream, so that the fold holds about as much for a million pages as for ten.

A page is *vouched for* when its content hashes to the ledger's entry.  The
hash is skipped when size and modification time both still equal the
entry's, as git does: a write always changes the modification time, and
pre-commit's stash, a checkout or an editor all write.  Only what kwdocs
wrote ever enters the ledger, so a page edited by hand is never vouched for.
"""
from __future__ import annotations

import hashlib
import heapq
import itertools
import os
from collections.abc import Iterable, Iterator
from operator import itemgetter
from pathlib import Path

import orjson

from kwdocs.config import Config
from kwdocs.store import writer as output
from kwdocs.store.state import LEDGER

LEDGER_FILE = LEDGER
COMPACT_BYTES = 1 << 20     # journals larger than this (and than the ledger) are folded in,
COMPACT_FILES = 32          # and so are this many (each build and each watch adds one)

# [sha256, size, modification time (ns)]: a list as the ledger stores it, a tuple as a journal's
# line gives it (``load`` holds an entry per page: a tuple is a third smaller)
Entry = list | tuple


def _journals(config: Config) -> list[Path]:
    folder = config.state / output.JOURNAL_FOLDER
    return sorted(folder.glob("journal-*.jsonl")) if folder.is_dir() else []


# page, SHA-256 hex (None: removed), size, modification time (ns): a ledger entry or a journal line
Record = tuple[str, str | None, int, int]
_page = itemgetter(0)
RUN_RECORDS = 4096      # journal lines the fold sorts in memory at a time, then sets aside in a run file
FAN_IN = 64             # run files merged at once (more are merged into one first): open files stay few


def load(config: Config) -> dict[str, Entry]:
    """Page (relative to the output folder) -> what kwdocs last wrote there."""
    entries: dict[str, Entry] = output.read_json(config.state / output.JOURNAL_FOLDER / LEDGER_FILE, {})
    if not isinstance(entries, dict):   # not what kwdocs writes: vouch for nothing, render to judge
        entries = {}
    for page in [page for page, entry in entries.items() if not _valid(entry)]:
        del entries[page]
    for page, sha, size, mtime_ns in _journal_records(_journals(config)):
        known = entries.get(page)
        if known is None or mtime_ns >= known[2]:
            entries[page] = (sha, size, mtime_ns)
    for page in [page for page, entry in entries.items() if entry[0] is None]:    # removed since
        del entries[page]
    return entries


def _journal_records(journals: list[Path]) -> Iterator[Record]:
    """The journals' lines in order, a line at a time (a cold build's journals hold a line per
    page); a damaged line is skipped: its page is not vouched for, so it is rendered to be judged."""
    for journal in journals:
        try:
            handle = open(journal, "rb")    # noqa: SIM115 - closed below, after the lines are read
        except OSError:
            continue
        with handle:
            for line in handle:
                try:
                    entry = orjson.loads(line)
                except ValueError:      # orjson.JSONDecodeError is one: a killed writer's half line
                    continue
                if isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str) and _valid(entry[1:]):
                    yield entry[0], entry[1], entry[2], entry[3]


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
    if output.dry_running():    # a dry run's ledger is in memory, read back by read_json
        output.write_sealed_parts(config.out, ledger, _ledger_parts(_in_memory(config)))
    else:
        runs: list[str] = []
        try:
            merged = _merged(_ledger_records(ledger), _sorted_runs(_journal_records(journals), ledger.parent, runs))
            output.write_sealed_parts(config.out, ledger, _ledger_parts(_newest(merged)))
        except _NotOurs:    # a ledger kwdocs sealed but did not write as it does now: read it whole
            output.write_sealed_parts(config.out, ledger, _ledger_parts(_in_memory(config)))
        finally:
            for run in runs:
                _unlink(run)
    for journal in journals:
        _unlink(journal)


def _ledger_parts(records: Iterable[Record]) -> Iterator[bytes]:
    """The ledger's JSON (keys sorted), an entry at a time, from its records in the pages' order."""
    yield b"{"
    for index, record in enumerate(records):
        yield (b"," if index else b"") + output.compact_json(record[0]) + b":" + output.compact_json(record[1:])
    yield b"}"


def _in_memory(config: Config) -> Iterator[Record]:
    """The fold of ``load``: every page's entry held at once."""
    entries = load(config)
    for page in sorted(entries):
        sha, size, mtime_ns = entries.pop(page)   # let go once encoded
        yield page, sha, size, mtime_ns


class _NotOurs(Exception):
    """The ledger's body is not one entry after another, its pages in order, as ``compact`` writes it."""


def _ledger_records(ledger: Path, block: int = 1 << 20) -> Iterator[Record]:
    """The ledger's valid entries in its order, a block of its bytes at a time; none if it is
    missing or its seal does not match (as ``load`` takes it).  Raises ``_NotOurs`` for a body
    kwdocs sealed but not in the pages' order, one entry after another (``_ledger_parts``)."""
    try:
        handle = open(ledger, "rb")     # noqa: SIM115 - closed below, after the body is read
    except OSError:
        return
    with handle:
        body = output.sealed_body_size(handle)
        if body is None:
            return
        handle.seek(0)
        if handle.read(1) != b"{":
            raise _NotOurs
        left, pending, last = body - 1, b"", None
        while left > 0:
            read = handle.read(min(block, left))
            if not read:        # cut short since its seal was read
                raise _NotOurs
            left -= len(read)
            data = pending + read
            if left <= 0:
                if not data.endswith(b"}"):
                    raise _NotOurs
                segment, pending = data[:-1], b""
            else:
                # an entry ends at ``],"``, which no page's JSON holds: a quote inside a string is escaped
                cut = data.rfind(b'],"') + 1
                if cut <= 0:    # no entry ends in this block: read on
                    pending = data
                    continue
                segment, pending = data[:cut], data[cut + 1:]
            try:
                entries = orjson.loads(b"{" + segment + b"}")
            except ValueError:
                raise _NotOurs from None
            for page, entry in entries.items():
                if last is not None and page <= last:
                    raise _NotOurs
                last = page
                if _valid(entry):
                    yield page, entry[0], entry[1], entry[2]


def _sorted_runs(records: Iterator[Record], folder: Path, runs: list[str]) -> list[Iterable[Record]]:
    """``records`` cut into runs of ``RUN_RECORDS``, each sorted by page (stably: a page's records
    keep their order) and, unless there is one alone, set aside in a file of ``folder`` whose path
    is added to ``runs`` (for the caller to remove); the runs in order, to be merged."""
    chunk = sorted(itertools.islice(records, RUN_RECORDS), key=_page)
    if len(chunk) < RUN_RECORDS:
        return [chunk]
    numbers = itertools.count()
    while chunk:
        runs.append(_set_aside(chunk, folder, next(numbers)))
        chunk = []      # let go before the next is read
        chunk = sorted(itertools.islice(records, RUN_RECORDS), key=_page)
    while len(runs) > FAN_IN:     # the first FAN_IN runs merged into one, which takes their place
        first = _set_aside(heapq.merge(*map(_run_records, runs[:FAN_IN]), key=_page), folder, next(numbers))
        for run in runs[:FAN_IN]:
            _unlink(run)
        runs[:FAN_IN] = [first]
    return [_run_records(run) for run in runs]


def _set_aside(records: Iterable[Record], folder: Path, number: int) -> str:
    """A run file of ``records``, a JSON line each, named as the sweep after a killed build
    removes it (``output.sweep_temporaries``)."""
    path = os.path.join(folder, f"{output.TEMP_PREFIX}fold-{os.getpid()}-{number}{output.TEMP_SUFFIX}")
    with open(path, "wb") as handle:
        for record in records:
            handle.write(orjson.dumps(record) + b"\n")
    return path


def _run_records(path: str) -> Iterator[Record]:
    with open(path, "rb") as handle:
        for line in handle:
            page, sha, size, mtime_ns = orjson.loads(line)
            yield page, sha, size, mtime_ns


def _merged(ledger: Iterator[Record], runs: list[Iterable[Record]]) -> Iterator[Record]:
    """Every record in the pages' order; a page's in the order written: the ledger's, then the journals'."""
    return heapq.merge(ledger, *runs, key=_page)


def _newest(records: Iterator[Record]) -> Iterator[Record]:
    """Each page's newest record, by time stamp (the last of equal ones), unless it is a removal."""
    best: Record | None = None
    for record in records:
        if best is None or record[0] != best[0]:
            if best is not None and best[1] is not None:
                yield best
            best = record
        elif record[3] >= best[3]:
            best = record
    if best is not None and best[1] is not None:
        yield best


def _unlink(path: Path | str) -> None:
    try:
        os.unlink(path)
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

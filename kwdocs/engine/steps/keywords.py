"""The keywords step: keywords.md (per letter when large), from the entries saved beside the facts."""
from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import orjson

from kwdocs import layout
from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.steps.common import (
    StateDamaged,
    _write_page,
    changed_units,
    keyword_pages_key,
    recovering,
    remove_forms,
    step_counts,
    stored_facts,
)
from kwdocs.formats import formats_for, written_forms
from kwdocs.pages import compose as pages, keywords
from kwdocs.pages.render import renderer_for
from kwdocs.store import writer as output
from kwdocs.store.owned import KEYWORD_PAGE
from kwdocs.store.state import (
    KEYWORD_ENTRIES,
    KEYWORDS,
    KEYWORDS_META,
    RUNS,
    keyword_rows_path,
    keyword_table,
    load_shard,
    save_shard,
)


def owned_keyword_page(page: str) -> bool:
    """Whether ``page`` is named as a keyword page (at the top of the output)."""
    return KEYWORD_PAGE.fullmatch(page) is not None



@recovering
@collector_paused()
def index_keywords(config: Config, units: list[str], changed: list[str]) -> dict:
    """Update the repository-wide keyword pages whose letters gained, lost or moved entries.

    Each unit's entries are remembered per letter as a digest, so an edit reads
    and rewrites only the letter tables (and pages) its entries actually touch.
    Entries wait as compact JSON text, and pages are rendered one letter at a
    time: a large tree's whole index as Python lists would not fit the memory target.
    """
    renderer = renderer_for(config)
    formats = formats_for(config)
    key = keyword_pages_key(config)
    meta = output.read_json(config.state / KEYWORDS_META, {}, strict=True) or {}
    fresh = meta.get("key") != key or not isinstance(next(iter(meta.get("units", {}).values()), {}), dict)
    known: dict[str, dict[str, str]] = {} if fresh else meta.get("units", {})
    counts: dict[str, int] = {} if fresh else meta.get("counts", {})
    changed_set = changed_units(config, units, changed)
    updated: list[str] = []     # the letters whose tables changed here

    def table_of(letter: str) -> dict[str, keywords.Entries]:
        """A letter's table, unit -> its entries, as the last build left it."""
        if fresh:
            return {}
        path = keyword_table(config, letter)
        if letter in meta.get("counts", {}) and output.read_state(path) is None:
            raise StateDamaged(f"{path} is missing")
        return keywords.read_entries(path, strict=True)

    with _Runs(config) as runs:
        for unit in units:
            if unit in known and unit not in changed_set:
                continue
            letters = _stored_keyword_entries(config, unit)
            digests = {letter: hashed for letter, (_, hashed, _) in letters.items()}
            for letter in set(digests) | set(known.get(unit, {})):
                if digests.get(letter) != known.get(unit, {}).get(letter):
                    count, text = (letters[letter][0], letters[letter][2]) if letter in letters else (0, "[]")
                    runs.add(letter, unit, count, text)
            known[unit] = digests
        for unit in sorted(set(known) - set(units)):
            for letter in known.pop(unit):
                runs.add(letter, unit, 0, "[]")
        for letter in runs.letters():   # one letter's table in memory at a time
            table = table_of(letter)
            for unit, count, text in runs.read(letter):
                if count:
                    table[unit] = (count, text)
                else:
                    table.pop(unit, None)
            counts[letter] = sum(count for count, _ in table.values())
            if not counts[letter]:
                counts.pop(letter)
            output.write_sealed(config.out, keyword_table(config, letter), keywords.table_text(table).encode("utf-8"))
            updated.append(letter)
            del table
    if fresh:   # a letter's table of before that no unit filled now: the letter's next edit would read it
        for path in sorted((config.state / KEYWORDS).glob("letter-*.jsonl")):
            if path.name.removeprefix("letter-").removesuffix(".jsonl") not in updated:
                output.remove(config.out, path)
    all_letters = keywords.sorted_letters(set(counts))
    split = sum(counts.values()) > keywords.SPLIT_THRESHOLD
    everything_again = fresh or not split or meta.get("letters") != all_letters or meta.get("split") != split
    to_render = set(all_letters) if everything_again else set(updated) & set(all_letters)

    def entries_of(letter: str) -> list[list]:
        # read back rather than kept from above: every letter's table at once was the step's peak
        table = keywords.read_entries(keyword_table(config, letter), strict=True)
        if not table and counts.get(letter):
            raise StateDamaged(f"{keyword_table(config, letter)} is missing")
        return [entry for unit in sorted(table) for entry in orjson.loads(table[unit][1])]

    def cached_rows(page: str) -> pages.RowCache:
        """The rows a page had (each checked against its places before it is used again)."""
        stored = {} if fresh else output.read_json(_rows_path(config, page), {})
        return stored if isinstance(stored, dict) else {}

    tally = step_counts(config)
    if everything_again or updated:
        for page, text, rows in pages.keyword_pages(config, renderer, entries_of, counts, to_render, cached_rows,
                                                    formats):
            _write_page(config, page, text, tally)
            if rows is not None:   # in page order, which is deterministic: no sorting 15,000 names
                output.write_json(config.out, _rows_path(config, page), rows, sort_keys=False)
    wanted = {layout.keywords_page()} | ({layout.keywords_page(letter) for letter in all_letters} if split else set())
    for page in sorted(set(meta.get("pages", [])) - wanted):
        remove_forms(config, page, tally)
        for form in written_forms(config, page):
            output.remove(config.out, _rows_path(config, form))
    output.write_json(config.out, config.state / KEYWORDS_META, {"key": key, "units": known, "counts": counts,
                                                      "letters": all_letters, "split": split,
                                                      "pages": sorted(wanted)})
    return tally


RUN_BYTES = 8 << 20   # entries' text held before the runs go to files (a large tree's cold build)


class _Runs:
    """Each letter's changed entries, unit by unit, held until they pass ``RUN_BYTES`` and from
    then on in a file of the state per letter (``runs/letter-X``) as they are read, read back a
    letter at a time: a cold build of a large tree changes every unit, and its whole index held as
    text was most of the step's peak, while an edit's few entries need no file (nor the disk
    space a nearly full disk lacks).  A dry run writes nothing, so it holds them all; the files
    are removed when done (or, left by a killed build, at the next run)."""

    def __init__(self, config: Config) -> None:
        self.folder = config.state / KEYWORDS / RUNS
        self.files: dict[str, BinaryIO] = {}
        self.made: list[str] = []
        self.held: dict[str, list[tuple[str, int, str]]] = {}
        self.held_bytes = 0
        self.dry = output.dry_running()

    def __enter__(self) -> _Runs:
        if not self.dry and self.folder.is_dir():
            self._remove(output.state_names(self.folder))    # what a killed build left
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.files.values():
            handle.close()
        if self.made:
            self._remove(self.made)
            with contextlib.suppress(OSError):
                self.folder.rmdir()

    def _remove(self, names: Iterable[str]) -> None:
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.folder / name)

    def add(self, letter: str, unit: str, count: int, text: str) -> None:
        """Note a unit's entries of a letter (``count`` 0: it has none any more)."""
        if not self.files and (self.dry or self.held_bytes + len(text) <= RUN_BYTES):
            self.held.setdefault(letter, []).append((unit, count, text))
            self.held_bytes += len(text)
            return
        if self.held:   # past the bound: what is held goes first, in the order noted
            held, self.held = self.held, {}
            for held_letter, rows in held.items():
                for row in rows:
                    self._write(held_letter, *row)
        self._write(letter, unit, count, text)

    def _write(self, letter: str, unit: str, count: int, text: str) -> None:
        handle = self.files.get(letter)
        if handle is None:      # 27 letters at most: each run stays open
            self.folder.mkdir(parents=True, exist_ok=True)
            handle = self.files[letter] = open(self.folder / f"letter-{letter}", "wb")   # noqa: SIM115
            self.made.append(f"letter-{letter}")
        # two lines: JSON escapes every newline of a unit's name and of its entries
        handle.write(orjson.dumps([unit, count]) + b"\n" + text.encode("utf-8") + b"\n")

    def letters(self) -> list[str]:
        """The letters noted, sorted."""
        return sorted(set(self.held) | set(self.files))

    def read(self, letter: str) -> Iterator[tuple[str, int, str]]:
        """A letter's (unit, count, entries) in the order they were noted."""
        yield from self.held.pop(letter, [])
        handle = self.files.pop(letter, None)
        if handle is None:
            return
        handle.close()
        with open(self.folder / f"letter-{letter}", "rb") as run:
            for head in run:
                unit, count = orjson.loads(head)
                yield unit, count, next(run)[:-1].decode("utf-8")


def _rows_path(config: Config, page: str) -> Path:
    """Where the rows of a keyword page (in any format: ``site/keywords-A.html``) are kept."""
    return keyword_rows_path(config, posixpath.basename(page))


def _stored_keyword_entries(config: Config, unit: str) -> dict[str, list]:
    """A unit's keyword entries as extraction left them (made again from its facts if lost or damaged)."""
    stored = load_shard(config, KEYWORD_ENTRIES, unit)
    if not keywords.valid_letters(stored.get("letters")):
        stored = {"letters": keywords.unit_letters(stored_facts(config, unit))}
        save_shard(config, KEYWORD_ENTRIES, unit, stored)
    return stored["letters"]

"""The keywords step: keywords.md (per letter when large), from the entries saved beside the facts."""
from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

import orjson
from markupsafe import Markup

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
from kwdocs.formats import Format, formats_for, written_forms
from kwdocs.pages import compose as pages, keywords
from kwdocs.pages.render import Renderer, renderer_for
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
    A letter page whose kept rows are proven made from its table as found here
    gets the rows of the names the edit touched spliced into them; any other is
    rendered whole.
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

    def spliced_table(letter: str, changes: dict[str, keywords.Entries]) -> tuple[str, str, dict[str, str]]:
        """A letter's table after ``changes`` (unit -> its entries now) as text, the seal of the
        table before and each changed unit's entries before; its count of entries in ``counts``.
        The changed units' lines replaced in the table's text, or (a unit new to the letter) the
        table read whole and written again."""
        path = keyword_table(config, letter)
        raw, before = output.read_sealed_and_seal(path, strict=True)
        if raw is None and letter in meta.get("counts", {}):
            raise StateDamaged(f"{path} is missing")
        spliced = keywords.splice_table(raw, changes) if raw is not None else None
        if spliced is not None:
            body, total, olds = spliced
        else:   # the table as read, decoded whole
            table = keywords.letter_table(raw) if raw is not None else None
            if table is None:
                table, before = {}, ""
            olds = {unit: table.get(unit, (0, "[]"))[1] for unit in changes}
            for unit, (count, text) in changes.items():
                if count:
                    table[unit] = (count, text)
                else:
                    table.pop(unit, None)
            body, total = keywords.table_text(table), sum(count for count, _ in table.values())
        if total:
            counts[letter] = total
        else:
            counts.pop(letter, None)
        return body, before, olds

    edits: dict[str, _Edit] = {}   # the letters whose tables changed here: what a page's kept rows need
    with _Runs(config) as runs:
        for unit in sorted(units):     # sorted: a fresh step's runs are its tables' lines in order
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
            if fresh:   # nothing to merge with: the table is written as its run is read, never held
                counts[letter], after = _write_fresh_table(config, letter, runs.read(letter))
                if not counts[letter]:
                    counts.pop(letter)
                edits[letter] = _Edit("", after, None, [])
                updated.append(letter)
                continue
            changes = {unit: (count, text) for unit, count, text in runs.read(letter)}
            body, before, olds = spliced_table(letter, changes)
            touched = keywords.touched_names(changes, olds, SPLICE_NAMES)
            named = [] if touched is None else keywords.named_entries(body, touched)
            data = body.encode("utf-8")
            del body
            sealed = output.sealed(data)
            del data
            output.write_if_changed(config.out, keyword_table(config, letter), sealed)
            edits[letter] = _Edit(before, output.seal_of(sealed), touched, named)
            updated.append(letter)
            del sealed
    if fresh:   # a letter's table of before that no unit filled now: the letter's next edit would read it
        for path in sorted((config.state / KEYWORDS).glob("letter-*.jsonl")):
            if path.name.removeprefix("letter-").removesuffix(".jsonl") not in updated:
                output.remove(config.out, path)
    all_letters = keywords.sorted_letters(set(counts))
    split = sum(counts.values()) > keywords.SPLIT_THRESHOLD
    everything_again = fresh or not split or meta.get("letters") != all_letters or meta.get("split") != split
    to_render = set(all_letters) if everything_again else set(updated) & set(all_letters)
    for letter in to_render - set(edits) if split else ():     # its table unchanged (the letter bar changed)
        seal = keywords.read_letter_table(keyword_table(config, letter))[1]
        edits[letter] = _Edit(seal, seal, set(), [])

    def entries_of(letter: str) -> list[list]:
        # read back rather than kept from above: every letter's table at once was the step's peak
        entries = keywords.table_entries(keyword_table(config, letter), strict=True)
        if not entries and counts.get(letter):
            raise StateDamaged(f"{keyword_table(config, letter)} is missing")
        return entries or []

    stored_rows: dict[str, dict] = {}

    def stored(page: str) -> dict:
        """A page's kept rows as the last build wrote them: the key and table they were made from."""
        if page not in stored_rows:
            found = {} if fresh else output.read_json(_rows_path(config, page), {})
            stored_rows[page] = found if isinstance(found, dict) and isinstance(found.get("rows"), dict) else {}
        return stored_rows[page]

    def cached_rows(page: str) -> pages.RowCache:
        """The rows a page had (each checked against its places before it is used again)."""
        rows = stored(page).get("rows", {})
        stored_rows.pop(page, None)
        return rows

    tally = step_counts(config)
    made_from: dict[str, str] = {}      # the seal of the table each letter page's rows are made from
    for letter in sorted(to_render) if split else []:
        made_from.update(dict.fromkeys(_forms(letter, formats), edits[letter].after))
    spliced: set[str] = set()
    if split and not fresh:
        for letter in sorted(to_render):
            edit = edits[letter]
            forms = _forms(letter, formats)
            # spliced only into rows proven made, with this key, from the table as this step found it
            if edit.touched is None or any(stored(form).get("key") != key or stored(form).get("table") != edit.before
                                           for form in forms):
                for form in forms:      # rendered whole below, its rows read again then: one letter's at a time
                    stored_rows.pop(form, None)
                continue
            for page, text, rows in _spliced_pages(config, renderer, formats, letter, edit, all_letters, counts,
                                                   {form: stored(form)["rows"] for form in forms}):
                _write_page(config, page, text, tally)
                _write_rows(config, page, key, edit.after, rows)
            spliced.add(letter)
            for form in forms:
                stored_rows.pop(form, None)
    if everything_again or updated:
        for page, text, whole_rows in pages.keyword_pages(config, renderer, entries_of, counts, to_render - spliced,
                                                          cached_rows, formats):
            _write_page(config, page, text, tally)
            del text    # the page written: not held while its rows are encoded
            if whole_rows is not None:   # in page order, which is deterministic: no sorting 15,000 names
                _write_rows(config, page, key, made_from.get(page, ""), whole_rows)
    wanted = {layout.keywords_page()} | ({layout.keywords_page(letter) for letter in all_letters} if split else set())
    for page in sorted(set(meta.get("pages", [])) - wanted):
        remove_forms(config, page, tally)
        for form in written_forms(config, page):
            output.remove(config.out, _rows_path(config, form))
    output.write_json(config.out, config.state / KEYWORDS_META, {"key": key, "units": known, "counts": counts,
                                                      "letters": all_letters, "split": split,
                                                      "pages": sorted(wanted)})
    return tally


SPLICE_NAMES = 64   # more names touched in a letter than this: its page is rendered whole


class _Edit(NamedTuple):
    """A letter's table before and after this step (their seals), the names whose rows may have
    changed (None: too many to splice) and those names' entries in the table after."""

    before: str
    after: str
    touched: set[str] | None
    entries: list[list]


def _forms(letter: str, formats: Sequence[Format]) -> list[str]:
    """A letter's page in Markdown and in each format that writes keyword pages."""
    page = layout.keywords_page(letter)
    return [page, *filter(None, (each.page_path(page) for each in formats))]


def _spliced_pages(config: Config, renderer: Renderer, formats: Sequence[Format], letter: str, edit: _Edit,
                   all_letters: list[str], counts: dict[str, int], kept: dict[str, pages.RowCache]
                   ) -> Iterator[tuple[str, str, pages.RowCache]]:
    """A letter's page in Markdown and each of ``formats``, and their rows to keep, from the rows
    ``kept`` for each (proven made from the letter's table before this step): the touched names'
    rows rendered again (or kept, as a whole render would, while their places are unchanged), the
    others' reused, in page order.  What a whole render gives, in proportion to what changed."""
    page = layout.keywords_page(letter)
    grouped = keywords.by_name(edit.entries)
    models: dict[str, dict] = {}
    _, touched_rows = pages.keyword_rows(renderer, page, grouped, kept[page], models)
    order = keywords.spliced_names(list(kept[page]), edit.touched or set(), [name for name, _ in grouped])
    rows = {name: touched_rows[name] if name in touched_rows else kept[page][name] for name in order}
    model = keywords.letter_model(letter, [entry[-1] for entry in rows.values()], project=config.project_name,
                                  all_letters=all_letters, counts=counts)
    title = f"Keyword Index of {config.project_name}: {letter}"     # as pages.keyword_pages titles it
    yield page, pages.front_matter(config, renderer.render(pages.KEYWORDS_TEMPLATE, model), title), rows
    for output_format in formats:
        form = output_format.page_path(page)
        if form is None:     # a format that writes no keyword pages
            continue
        cached = kept[form]
        missing = [(name, places) for name, places in grouped
                   if not isinstance(cached.get(name), list) or cached[name][:-1] != rows[name][:-1]]
        docs_links: dict[str, str] = {}
        made = output_format.rows("keyword_row", [
            models.get(name) or keywords.row_model(page, name, places, docs_links) for name, places in missing], page)
        fresh = {name: [*rows[name][:-1], str(row)] for (name, _), row in zip(missing, made, strict=True)}
        form_rows = {name: fresh.get(name) or cached[name] for name in order}
        text = output_format.render("keywords", model | {"rows": [Markup(entry[-1]) for entry in form_rows.values()]},
                                    page)
        yield form, text, form_rows


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


def _write_fresh_table(config: Config, letter: str, run: Iterable[tuple[str, int, str]]) -> tuple[int, str]:
    """A letter's table written a unit's line at a time from its run (sorted by unit, each unit
    once, as a fresh step notes them), and its count of entries and its seal."""
    total = 0

    def lines() -> Iterator[bytes]:
        nonlocal total
        for unit, count, text in run:
            if count:
                total += count
                yield keywords.table_line(unit, count, text).encode("utf-8")

    path = keyword_table(config, letter)
    output.write_sealed_parts(config.out, path, lines())
    return total, output.seal_of(output.read_state(path) or b"")


ROWS_AT_ONCE = 1024   # a page's kept rows encoded this many names at a time


def _write_rows(config: Config, page: str, key: str, table: str, rows: pages.RowCache) -> None:
    """A page's kept rows, ``{"key", "table", "rows"}`` as ``write_json`` writes them unsorted,
    encoded a few rows at a time: a large letter's rows encoded at once took orjson's buffer
    twice their size, and their sealed copy a third, the step's peak (rendered rows changed)."""

    def parts() -> Iterator[bytes]:
        yield orjson.dumps({"key": key, "table": table})[:-1] + b',"rows":{'
        names = list(rows)
        for start in range(0, len(names), ROWS_AT_ONCE):
            batch = {name: rows[name] for name in names[start:start + ROWS_AT_ONCE]}
            yield (b"," if start else b"") + orjson.dumps(batch)[1:-1]
        yield b"}}"

    output.write_sealed_parts(config.out, _rows_path(config, page), parts())


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

"""The repository-wide keyword index: every defined name, A to Z, with where it is defined.

Kept incrementally: each folder's definitions are cached by folder, and only
the letters whose entries changed are rendered again, so an edit costs a few
letter pages, not the whole index; on those pages, only the rows of the names
whose places changed are rendered, the others kept from the page before.
"""
from __future__ import annotations

import hashlib
import json
import string
from bisect import insort
from collections.abc import Mapping
from operator import itemgetter
from pathlib import Path

import orjson

from kwdocs import layout
from kwdocs.facts import Facts
from kwdocs.pages.model import kind_label
from kwdocs.store import writer as output

INDEXED_KINDS = ("namespace", "class", "function", "method", "macro", "type", "constant", "target")
SPLIT_THRESHOLD = 2000   # more entries than this: one page per letter behind a letter bar
OTHER = "other"
_INDEXED = frozenset(INDEXED_KINDS)
_ENTRY_ORDER = itemgetter(0, 2, 3, 1)   # a folder's entries: name, path, line, kind label
_PLACE_ORDER = itemgetter(2, 3, 1)      # a name's places: path, line, kind label


def letter_of(name: str) -> str:
    """The index letter: the first ASCII letter after leading underscores, else ``other``."""
    stripped = name.lstrip("_~:")
    first = stripped[:1].upper()
    return first if first and first in string.ascii_uppercase else OTHER  # '' is in every string


def unit_letters(files: dict[str, Facts]) -> dict[str, list]:
    """A unit's index entries by letter, each letter's as [count, digest, compact JSON], the
    entries [name, kind label, path, line, anchor, shown name] sorted by name, path, line and
    kind label.  Made at extraction, on every core, so the keyword step reads a shard a fifth
    the size of the unit's facts and neither re-encodes nor hashes entries that did not change."""
    by_letter: dict[str, list[list]] = {}
    for rel, facts in files.items():
        for symbol in facts.get("symbols", ()):
            kind = symbol["kind"]
            # a class's attribute too, under its qualified name: ``weight`` alone is every class's
            if kind in _INDEXED or symbol.get("detail") == "attribute":
                name, line = symbol["name"], symbol["line"]
                parent = symbol.get("parent")
                shown = f"{parent}.{name}" if parent and (kind == "method" or kind == "variable") else name
                if symbol.get("trait"):   # a Rust ``impl Trait for Type``, apart from the type's own
                    shown = f"{symbol['trait']} for {name}"
                entry = [name, kind_label(symbol), rel, line, layout.anchor(kind, name, line), shown]
                letter = letter_of(name)
                entries = by_letter.get(letter)
                if entries is None:
                    by_letter[letter] = [entry]
                else:
                    entries.append(entry)
    found: dict[str, list] = {}
    for letter, entries in by_letter.items():
        entries.sort(key=_ENTRY_ORDER)   # a letter at a time: fewer, shorter sorts
        data = output.compact_json(entries)
        found[letter] = [len(entries), hashlib.sha256(data).hexdigest()[:16], data.decode("utf-8")]
    return found


def valid_letters(letters: object) -> bool:
    """Whether a stored ``unit_letters`` has its shape (state can be damaged by hand)."""
    return isinstance(letters, dict) and all(
        isinstance(item, list) and len(item) == 3 and isinstance(item[0], int) and isinstance(item[2], str)
        for item in letters.values())


Entries = tuple[int, str]   # a unit's index entries for one letter: how many, and as compact JSON


def table_text(table: dict[str, Entries]) -> str:
    """A letter's table as kept in the state: a line per unit, its name, count and entries as JSON
    (tab-separated; JSON escapes tabs and newlines), sorted by unit.  Reading it back decodes
    nothing: an edit touches one unit of a table of hundreds."""
    return "".join(table_line(unit, *table[unit]) for unit in sorted(table))


def table_line(unit: str, count: int, entries: str) -> str:
    """A unit's line of a letter's table (see ``table_text``)."""
    return f"{json.dumps(unit)}\t{count}\t{entries}\n"


def read_entries(path: Path, strict: bool = False) -> dict[str, Entries]:
    """``table_text`` read back (sealed: see ``output.read_sealed``); empty when missing."""
    return read_letter_table(path, strict)[0]


def read_letter_table(path: Path, strict: bool = False) -> tuple[dict[str, Entries], str]:
    """``read_entries`` and the table's seal ('' when missing or damaged): what a page's kept rows
    name as the table they were rendered from."""
    body, seal = output.read_sealed_and_seal(path, strict)
    table = letter_table(body or b"")
    return ({}, "") if table is None else (table, seal)


def letter_table(body: bytes) -> dict[str, Entries] | None:
    """A letter's table (``table_text``) read back from its text, unit -> its entries; None when
    the text is not UTF-8."""
    try:
        text = body.decode("utf-8")
    except ValueError:
        return None
    table: dict[str, Entries] = {}
    for line in text.split("\n"):
        unit, _, rest = line.partition("\t")
        count, _, entries = rest.partition("\t")
        try:
            table[orjson.loads(unit)] = (int(count), entries)   # orjson: 2,800 names a letter
        except ValueError:
            continue
    return table


def splice_table(body: bytes, changes: Mapping[str, Entries]) -> tuple[str, int, dict[str, str]] | None:
    """A letter's table (``table_text``, as read back) with the lines of the ``changes``' units
    made again (a count of 0: the line taken out), its count of entries, and each changed unit's
    entries before (``"[]"`` when it had none): each line is found by its unit's text, never
    decoded, so an edit's cost is not every unit's.  None when a unit has no line to replace
    (a new one goes in its sorted place: the caller reads the table whole), or the body is not a
    table's text."""
    try:
        text = body.decode("utf-8")
    except ValueError:
        return None
    lines = text.split("\n")
    if lines[-1]:       # a table ends each line with a line break
        return None
    where = {line.partition("\t")[0]: number for number, line in enumerate(lines[:-1])}
    before: dict[str, str] = {}
    for unit, (count, entries) in changes.items():
        number = where.get(json.dumps(unit))
        if number is None:
            if count:
                return None
            before[unit] = "[]"
            continue
        before[unit] = lines[number].split("\t", 2)[2]
        lines[number] = table_line(unit, count, entries)[:-1] if count else ""
    kept = [line for line in lines[:-1] if line]
    try:
        total = sum(int(line.split("\t", 2)[1]) for line in kept)
    except (IndexError, ValueError):
        return None
    return "".join(line + "\n" for line in kept), total, before


def table_entries(path: Path, strict: bool = False) -> list[list] | None:
    """A letter table's entries in table order (units sorted, each unit's as kept), or None when
    the table is missing or damaged (``strict``: damaged raises ``StateDamaged``).  Decoded a
    unit's line at a time from the file's bytes, never copied whole as ``unsealed`` and
    ``read_entries`` copy it; a path or kind label repeated, or a shown name equal to its name,
    is one string: the largest letter of a 100,000-file tree holds 800,000 entries."""
    raw = output.read_state(path)
    if raw is None:
        return None
    view, end = memoryview(raw), len(raw) - output.SEAL_LENGTH - 2
    if end < 0 or raw[end] != 10 or \
            hashlib.sha256(view[:end]).hexdigest()[:output.SEAL_LENGTH].encode() != raw[end + 1:-1]:
        if strict:
            raise output.StateDamaged(f"{path} is damaged")
        return None
    shared: dict[str, str] = {}
    found: list[list] = []
    start = 0
    while start < end:
        stop = raw.find(b"\n", start, end)
        stop = end if stop < 0 else stop
        tab = raw.find(b"\t", raw.find(b"\t", start, stop) + 1, stop)
        for entry in orjson.loads(view[tab + 1:stop]) if tab >= 0 else ():
            entry[1] = shared.setdefault(entry[1], entry[1])
            entry[2] = shared.setdefault(entry[2], entry[2])
            if entry[5] == entry[0]:
                entry[5] = entry[0]
            found.append(entry)
        start = stop + 1
    return found


def touched_names(changes: Mapping[str, Entries], before: Mapping[str, str], most: int) -> set[str] | None:
    """The names whose rows may change in a letter's page after ``changes`` (unit -> its entries
    now): those whose entries differ from the unit's ``before``; None past ``most`` of them."""
    touched: set[str] = set()
    for unit, (_, text) in changes.items():
        touched |= changed_names(before[unit], text)
        if len(touched) > most:
            return None
    return touched


def changed_names(before: str, after: str) -> set[str]:
    """The names whose entries differ between a unit's entries of a letter (compact JSON) before
    and after: a unit is a folder, and an edit of one of its files moves that file's names only."""
    old, new = _entries_by_name(before), _entries_by_name(after)
    return {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}


def _entries_by_name(text: str) -> dict[str, list[list]]:
    found: dict[str, list[list]] = {}
    for entry in orjson.loads(text):
        found.setdefault(entry[0], []).append(entry)
    return found


_DECODER = json.JSONDecoder()


def named_entries(table_body: str, names: set[str]) -> list[list]:
    """The entries of ``names`` in a letter's table (``table_text``), in the order the whole
    table's entries take (units sorted, each unit's as kept), so ``by_name`` gives their rows'
    places as it gives them from the whole.  Found in the table's text, which is never decoded
    whole: an edit touches a few names of thousands.  ``["name",`` can only be an entry's start
    (JSON escapes a quote inside a string), and a unit's entries are sorted by name, so its
    entries of a name follow one another."""
    found: list[tuple[int, list]] = []
    for name in names:
        needle = "[" + orjson.dumps(name).decode("utf-8") + ","
        start = table_body.find(needle)
        while start >= 0:
            entry, end = _DECODER.raw_decode(table_body, start)
            found.append((start, entry))
            start = end + 1 if table_body.startswith(needle, end + 1) else table_body.find(needle, end)
    found.sort(key=itemgetter(0))
    return [entry for _, entry in found]


def spliced_names(names: list[str], touched: set[str], defined: list[str]) -> list[str]:
    """A page's names in page order after an edit: ``names`` as the page had them, those
    ``touched`` taken out and the ``defined`` ones among them put back in their place."""
    kept = [name for name in names if name not in touched]
    for name in defined:
        insort(kept, name, key=name_order)
    return kept


def letters(entries: list[list]) -> set[str]:
    return {letter_of(entry[0]) for entry in entries}


def by_name(entries: list[list]) -> list[tuple[str, list[list]]]:
    """Entries grouped by name, in page order: names A to Z ignoring case, places by path, line
    and kind label.  Grouping first sorts 75,000 names, not 200,000 places: most names have
    one place, and a name's places all keep ``unit_letters``' order when tied."""
    names: dict[str, list[list]] = {}
    for entry in entries:
        places = names.get(entry[0])
        if places is None:
            names[entry[0]] = [entry]
        else:
            places.append(entry)
    for places in names.values():
        if len(places) > 1:
            places.sort(key=_PLACE_ORDER)
    return sorted(names.items(), key=_group_order)


def name_order(name: str) -> tuple[str, str]:
    """Where a name goes on a keyword page: A to Z ignoring case, then case."""
    return name.lower(), name


def _group_order(item: tuple[str, list[list]]) -> tuple[str, str]:
    return item[0].lower(), item[0]


def places_digest(places: list[list]) -> str:
    """A short digest of a name's places: all that its row shows, on a given page."""
    return hashlib.blake2b(output.compact_json(places), digest_size=8).hexdigest()


Place = tuple[str, str, str, int, str, bool]   # kind label, shown name, path, line, link, more places follow


def row_model(page: str, name: str, places: list[list], docs_links: dict[str, str]) -> dict:
    """One name's table row: every place defining it, linked to the definition's anchor.

    Places are tuples the row macro unpacks, each saying whether more follow: a letter page
    lists 15,000 places, and a dict per place (or Jinja's ``loop``) cost the template lookups
    on each.  ``docs_links`` remembers each file's page link: a file defines many names.
    """
    shown_places: list[Place] = []
    last = len(places) - 1
    for index, (_, kind, rel, line, anchor, shown) in enumerate(places):
        docs_link = docs_links.get(rel)
        if docs_link is None:
            docs_link = docs_links[rel] = layout.link(page, layout.docs_page(rel))
        shown_places.append((kind, shown, rel, line, layout.anchor_link(docs_link, anchor), index < last))
    return dict(name=name, places=shown_places)


def letter_model(letter: str | None, rows: list[str], *, project: str, all_letters: list[str],
                 counts: dict[str, int]) -> dict:
    """The model of one keyword page (``letter`` None: the single page holding everything);
    ``rows`` are its table rows, rendered already (see ``kwdocs.pages.compose.keyword_rows``)."""
    page = layout.keywords_page(letter)
    return dict(project=project, letter=letter, rows=rows,
                bar=[dict(letter=each, count=counts.get(each, 0), link=layout.link(page, layout.keywords_page(each)))
                     for each in all_letters],
                index_link=layout.link(page, layout.index_page("")),
                home_link=layout.link(page, layout.keywords_page()) if letter else "")


def bar_model(*, project: str, all_letters: list[str], counts: dict[str, int]) -> dict:
    """The model of ``keywords.md`` when the index is split by letter."""
    page = layout.keywords_page()
    return dict(project=project, letter=None, rows=[], split=True,
                bar=[dict(letter=each, count=counts.get(each, 0), link=layout.link(page, layout.keywords_page(each)))
                     for each in all_letters],
                index_link=layout.link(page, layout.index_page("")), home_link="",
                total=sum(counts.values()))


def sorted_letters(found: set[str]) -> list[str]:
    return sorted(found - {OTHER}) + ([OTHER] if OTHER in found else [])

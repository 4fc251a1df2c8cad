"""The repository-wide keyword index: every defined name, A to Z, with where it is defined.

Kept incrementally: each folder's definitions are cached by folder, and only
the letters whose entries changed are rendered again, so an edit costs a few
letter pages, not the whole index.
"""
from __future__ import annotations

import posixpath
import string

from kwdocs import layout
from kwdocs.model import kind_label

INDEXED_KINDS = ("namespace", "class", "function", "method", "macro", "type", "constant", "target")
SPLIT_THRESHOLD = 2000   # more entries than this: one page per letter behind a letter bar
OTHER = "other"


def letter_of(name: str) -> str:
    """The index letter: the first ASCII letter after leading underscores, else ``other``."""
    stripped = name.lstrip("_~:")
    first = stripped[:1].upper()
    return first if first and first in string.ascii_uppercase else OTHER  # '' is in every string


def folder_entries(files: dict[str, dict]) -> list[list]:
    """The index entries one folder contributes: [name, kind label, path, line, anchor]."""
    entries = []
    for rel, facts in files.items():
        for symbol in facts.get("symbols", []):
            if symbol["kind"] in INDEXED_KINDS:
                name = symbol["name"]
                shown = f"{symbol['parent']}.{name}" if symbol.get("parent") and symbol["kind"] == "method" else name
                entries.append([name, kind_label(symbol), rel, symbol["line"],
                                layout.anchor(symbol["kind"], name, symbol["line"]), shown])
    entries.sort(key=lambda entry: (entry[0], entry[2], entry[3], entry[1]))
    return entries


def letters(entries: list[list]) -> set[str]:
    return {letter_of(entry[0]) for entry in entries}


def letter_model(letter: str | None, entries: list[list], *, project: str, all_letters: list[str],
                 counts: dict[str, int]) -> dict:
    """The model of one keyword page (``letter`` None: the single page holding everything)."""
    page = layout.keywords_page(letter)
    names: dict[str, list] = {}
    for name, kind, rel, line, anchor, shown in sorted(entries, key=lambda e: (e[0].lower(), e[0], e[2], e[3])):
        names.setdefault(name, []).append(dict(
            kind=kind, path=rel, line=line, shown=shown,
            link=layout.link(page, layout.docs_page(rel), anchor)))
    return dict(project=project, letter=letter, entries=[dict(name=n, places=p) for n, p in names.items()],
                bar=[dict(letter=l, count=counts.get(l, 0), link=layout.link(page, layout.keywords_page(l)))
                     for l in all_letters],
                index_link=layout.link(page, layout.index_page("")),
                home_link=layout.link(page, layout.keywords_page()) if letter else "")


def bar_model(*, project: str, all_letters: list[str], counts: dict[str, int]) -> dict:
    """The model of ``keywords.md`` when the index is split by letter."""
    page = layout.keywords_page()
    return dict(project=project, letter=None, entries=[], split=True,
                bar=[dict(letter=l, count=counts.get(l, 0), link=layout.link(page, layout.keywords_page(l)))
                     for l in all_letters],
                index_link=layout.link(page, layout.index_page("")), home_link="",
                total=sum(counts.values()))


def sorted_letters(found: set[str]) -> list[str]:
    return sorted(found - {OTHER}) + ([OTHER] if OTHER in found else [])


def page_name(letter: str) -> str:
    return posixpath.basename(layout.keywords_page(letter))

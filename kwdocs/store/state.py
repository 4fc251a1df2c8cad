"""kwdocs' own state under ``<out>/.kwdocs``: units, where their shards live, what was written.

Light on purpose (no parsers, no templates): ``kwdocs check`` on an
up-to-date tree needs only this.
"""
from __future__ import annotations

import zlib
from pathlib import Path

from kwdocs.pages import layout
from kwdocs.store import writer as output
from kwdocs.config import Config

FACTS, LINKS, PAGES, ROWS = "facts", "links", "pages", "rows"
LINK_INPUTS = "link-inputs"   # per unit: what linking needs of its facts (imports, language, test or not)
KEYWORD_ENTRIES = "keyword-entries"   # per unit: its keyword index entries by letter (see keywords.unit_letters)
FILE_ROWS = "folder-rows"     # per unit of a folder split into units: its rows of the index, as rendered
LINK_META = "link-meta.json"   # what linking last saw, and which units' link shards it rewrote
FOLDER_PARTS = "folder-parts"   # per unit: its part of its folder's doc.md (see model.folder_part)
BUCKET_FILES = 128        # a folder with more files than UNIT_LIMIT is split into buckets of about this many
UNIT_LIMIT = 256


BUCKET_MARK = "\0"   # no folder name holds it: a bucket is never taken for a folder (``x`` and ``x#0``)


def units_of(folder: str, names: list[str]) -> dict[str, list[str]]:
    """Split a folder's file names into units: the folder itself, or ``folder<NUL>k`` buckets.

    Buckets go by a stable hash of the name, and their number only changes when
    the folder doubles or halves, so adding a file touches one bucket.
    """
    if len(names) <= UNIT_LIMIT:
        return {folder: names}
    count = 1
    while count * BUCKET_FILES < len(names):
        count *= 2
    units: dict[str, list[str]] = {f"{folder}{BUCKET_MARK}{k}": [] for k in range(count)}
    for name in names:
        units[f"{folder}{BUCKET_MARK}{zlib.crc32(name.encode('utf-8', 'surrogateescape')) % count}"].append(name)
    return {unit: members for unit, members in units.items() if members}


def shard_path(config: Config, kind: str, unit: str) -> str:
    """Where a unit's shard of a kind lives, as the text doit compares dependencies by (built
    without ``Path`` objects: the task namespace names one per unit, 12,000 of them)."""
    return f"{config.state}/{kind}/{layout.state_name(unit)}"


def shard(config: Config, kind: str, unit: str) -> Path:
    return Path(shard_path(config, kind, unit))


def load_shard(config: Config, kind: str, unit: str) -> dict:
    data = output.read_json(shard(config, kind, unit), {})
    return data if isinstance(data, dict) and data.get("unit") == unit else {}


def save_shard(config: Config, kind: str, unit: str, data: dict) -> bool:
    return output.write_json(config.out, shard(config, kind, unit), dict(data, unit=unit))


def written_pages(config: Config, subjects: dict[str, str] | None = None) -> set[str]:
    """Every page the state says kwdocs wrote (output-relative paths), for clean and check
    (``subjects``: ``page_subjects``, when already read)."""
    found = set(page_subjects(config) if subjects is None else subjects)
    found.update((output.read_json(config.state / "keywords" / "meta.json", {}) or {}).get("pages", []))
    return found


def page_subjects(config: Config) -> dict[str, str]:
    """Each file's and folder's page the state says kwdocs wrote -> the source file or folder it
    documents, by its real name (a page's own may be cut or escaped: see ``kwdocs.pages.layout``)."""
    found: dict[str, str] = {}
    pages_dir = config.state / PAGES
    for path in sorted(pages_dir.glob("*.json")) if pages_dir.is_dir() else ():
        for rel in (output.read_json(path, {}) or {}).get("files", {}):
            found[layout.docs_page(rel)] = found[layout.kw_page(rel)] = rel
    for folder in (output.read_json(config.state / "folders.json", {}) or {}).get("pages", {}):
        found[layout.index_page(folder)] = found[layout.doc_page(folder)] = folder
    return found

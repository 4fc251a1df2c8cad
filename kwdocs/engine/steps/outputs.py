"""The pages a build is expected to write, as ``check`` compares them and the shared cache records them."""
from __future__ import annotations

import os
from pathlib import Path

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.engine.steps.common import digest, file_page_keys, render_key
from kwdocs.engine.steps.keywords import owned_keyword_page
from kwdocs.pages import compose as pages
from kwdocs.store import cache, journal, writer as output
from kwdocs.store.state import SEEN, written_pages

SHA256_HEX = 64


def outputs_inputs(config: Config, hashes: dict[str, str], problems: list) -> str:
    """A digest of everything a tree's Markdown pages are made from: each file's path and bytes
    (``hashes``), what the scan said of the tree, the extraction key, the templates, settings
    and code (the render keys), and where the output folder is beside the sources (each page
    links to its source)."""
    keys = file_page_keys(config) + [render_key(config, name)
                                     for name in (pages.KEYWORDS_TEMPLATE, *pages.FOLDER_TEMPLATES)]
    place = Path(os.path.relpath(config.src, config.out)).as_posix()
    return digest(sorted(hashes.items()), sorted(problems), keys, place)


def _outputs_claims(inputs: str) -> dict[str, str]:
    return {"kind": "outputs", "key": cache.entry_key("outputs", inputs), "inputs": inputs}


def share_outputs(config: Config, files: dict[str, tuple[int, int]], problems: list) -> int:
    """After a full build: the SHA-256 of every Markdown page kwdocs wrote, stored in the shared
    cache under ``outputs_inputs``, so that ``kwdocs check`` on a fresh clone of the same tree
    compares the pages with them instead of building (``expected_outputs``).  ``files``: the
    scan's (size, modification time) of each file.  Nothing is stored unless every file's hash
    (from the build's ``SEEN`` records) and every page's (from the journal) is known."""
    shared = cache.shared_cache(config)
    if shared is None or not shared.writable or shared.down:
        return 0
    hashes: dict[str, str] = {}
    folder = config.state / SEEN
    for path in folder.glob("*.json") if folder.is_dir() else ():
        for rel, record in (output.read_json(path, {}) or {}).get("files", {}).items():
            if rel in files and isinstance(record, list) and len(record) == 3 and files[rel] == (record[0], record[1]):
                hashes[rel] = record[2]
    if hashes.keys() != files.keys():
        return 0    # a file changed during the build, or was too fresh to vouch for
    claims = _outputs_claims(outputs_inputs(config, hashes, problems))
    stored = shared.get_many([claims["key"]]).get(claims["key"])
    if stored is not None:
        try:        # a fresh clone of a tree built before: the same inputs, so the same pages
            cache.decode_entry(stored, claims, shared.key)
            return 0
        except ValueError:
            pass    # damaged: made again below
    entries = journal.load(config)
    expected = written_pages(config)
    if not expected or not all(page in entries for page in expected):
        return 0
    return shared.put_many({claims["key"]: cache.encode_entry(claims, {page: entries[page][0] for page in expected},
                                                        shared.key)})


def expected_outputs(config: Config, scanned_files: list[str], folders: list[str], problems: list,
                     hashes: dict[str, str]) -> dict[str, str] | None:
    """What ``share_outputs`` stored for this tree (``hashes``: each file's SHA-256): every Markdown
    page kwdocs writes -> its SHA-256; None when the cache has no such entry, or one that fails
    its checks (said in one line)."""
    shared = cache.shared_cache(config)
    if shared is None:
        return None
    claims = _outputs_claims(outputs_inputs(config, hashes, problems))
    found = shared.get_many([claims["key"]]).get(claims["key"])
    if found is None:
        return None
    try:
        digests = cache.decode_entry(found, claims, shared.key)
        if not isinstance(digests, dict) or not all(
                isinstance(value, str) and len(value) == SHA256_HEX for value in digests.values()):
            raise ValueError("it holds no page hashes")
        made = {page for rel in scanned_files for page in (layout.docs_page(rel), layout.kw_page(rel))}
        made.update(page for folder in folders for page in (layout.index_page(folder), layout.doc_page(folder)))
        if not made <= digests.keys() or not all(
                owned_keyword_page(page) for page in digests.keys() - made) or layout.keywords_page() not in digests:
            raise ValueError("its pages are not this tree's")
        return digests
    except ValueError as error:
        cache.ignored(error, f"cache entry {claims['key'][:16]} of the tree's pages ignored ({error}); "
                             "building to compare")
        return None

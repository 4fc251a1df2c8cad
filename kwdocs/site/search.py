"""The site's navigation and search data, as scripts that work from ``file://``.

Browsers refuse ``fetch`` from ``file://``, so the data is JavaScript that
assigns one global each, loaded with ``<script src>``:

- ``tree.js`` (``window.KWDOCS_TREE``): every folder and documented file, for
  the folder tree and for finding a file by name.  Loaded by every page.
- ``search-index.js`` (``window.KWDOCS_INDEX``): every keyword with its kind,
  file, line and definition anchor.  Loaded on the first search only, since on
  a large tree it is megabytes.

Keywords come from the build's keyword index state
(``<out>/.kwdocs/keywords/letter-*.jsonl``), so the index changes exactly when
keywords do; each file is rewritten only when its content changes.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kwdocs.config import Config
from kwdocs.pages import keywords, layout
from kwdocs.store import writer as output
from kwdocs.store.state import KEYWORD_TABLES, KEYWORDS, SEARCH

TREE_FILE = "tree.js"
INDEX_FILE = "search-index.js"
DATA_FILES = (TREE_FILE, INDEX_FILE)
STATE_FILE = SEARCH


def as_script(global_name: str, data: object) -> str:
    """JSON assigned to a global; ASCII-only, so no character can end the literal early."""
    return f"window.{global_name} = {json.dumps(data, ensure_ascii=True, separators=(',', ':'), sort_keys=True)};\n"


def tree_data(project: str, subjects: dict[str, str]) -> dict:
    """Folders (those with an index page) and files (those with a documentation page) by their
    real names, from ``state.page_subjects``; ``pages`` and ``folderPages`` hold where the pages
    of those whose page path is not their name live (cut or escaped: see ``kwdocs.pages.layout``)."""
    folders, files, file_pages, folder_pages = [], [], {}, {}
    for page, subject in subjects.items():
        if page.endswith(layout.DOCS_SUFFIX):
            files.append(subject)
            if page != subject + layout.DOCS_SUFFIX:
                file_pages[subject] = page[: -len(layout.DOCS_SUFFIX)]
        elif page == "index.md" or page.endswith("/index.md"):
            folders.append(subject)
            if layout.output_folder(subject) != subject:
                folder_pages[subject] = layout.output_folder(subject)
    data: dict[str, object] = {"project": project, "folders": sorted(folders), "files": sorted(files)}
    if file_pages or folder_pages:    # rare: the data of most trees stays as it was
        data.update(pages=file_pages, folderPages=folder_pages)
    return data


def keyword_tables(config: Config) -> list[Path]:
    folder = config.state / KEYWORDS
    return sorted(folder.glob(KEYWORD_TABLES)) if folder.is_dir() else []


def keyword_entries(config: Config) -> list[list]:
    """Every indexed definition: [name, kind label, path, line, anchor, shown name]."""
    entries: list[list] = []
    for path in keyword_tables(config):
        for _, text in keywords.read_table(path).values():
            try:
                folder_entries = json.loads(text)
            except ValueError:
                continue
            entries.extend(entry for entry in folder_entries if isinstance(entry, list) and len(entry) >= 6)
    entries.sort(key=lambda entry: (str(entry[0]).lower(), str(entry[2]), entry[3]))
    return entries


def build_index(entries: list[list], documented: set[str]) -> dict:
    """The compact search index: kinds and files once, keywords as rows of indices.

    Each keyword row is [name, kind index, file index, line, anchor, shown];
    keywords of files without a page (none, normally) are left out.
    """
    kinds: dict[str, int] = {}
    files: dict[str, int] = {}
    rows = []
    for name, kind, path, line, anchor, shown, *_ in entries:
        if path not in documented:
            continue
        kind_index = kinds.setdefault(kind, len(kinds))
        file_index = files.setdefault(path, len(files))
        rows.append([name, kind_index, file_index, line, anchor, shown if shown != name else ""])
    return {"kinds": list(kinds), "files": list(files), "keywords": rows}


def write_site_data(config: Config, subjects: dict[str, str], folder: Path) -> int:
    """Write ``tree.js`` and ``search-index.js`` into ``folder`` if they changed; returns files written.

    The keyword tables are read only when one of them (or the set of pages)
    changed since the last time, so a build that changed nothing reads none.
    """
    tree = tree_data(config.project_name, subjects)
    written: int = output.write_if_changed(config.out, folder / TREE_FILE, as_script("KWDOCS_TREE", tree))
    state_path = config.state / STATE_FILE
    stamp: list[object] = [[path.name, path.stat().st_mtime_ns, path.stat().st_size] for path in keyword_tables(config)]
    stamp.append(hashlib.sha256("\n".join(tree["files"]).encode("utf-8", "surrogateescape")).hexdigest())
    if (output.read_json(state_path, None) == stamp) and (folder / INDEX_FILE).is_file():
        return written
    index = build_index(keyword_entries(config), set(tree["files"]))
    written += output.write_if_changed(config.out, folder / INDEX_FILE, as_script("KWDOCS_INDEX", index))
    output.write_json(config.out, state_path, stamp)
    return written

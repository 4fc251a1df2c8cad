"""The site's navigation and search data, as scripts that work from ``file://``.

Browsers refuse ``fetch`` from ``file://``, so the data is JavaScript that
assigns one global each, loaded with ``<script src>``:

- ``tree.js`` (``window.KWDOCS_TREE``): every folder and documented file, for
  the folder tree and for finding a file by name.  Loaded by every page.
- ``search-index.js`` (``window.KWDOCS_INDEX``): every keyword with its kind,
  file, line and definition anchor.  Loaded on the first search only, since on
  a large tree it is megabytes.
- ``fulltext/<bucket>.js`` (``window.KWDOCS_FULLTEXT[bucket]``): the words of the
  documentation text (docstrings, doc comments, the sections of Markdown and reST
  files), one script per first two letters of a word, so a search loads the few
  buckets its words are in (``fulltext/buckets.js`` lists those there are).  Each
  unit of the build adds its part to a bucket, and an edit rewrites only the
  buckets whose part from that unit changed.

Keywords come from the build's keyword index state
(``<out>/.kwdocs/keywords/letter-*.jsonl``), so the index changes exactly when
keywords do; each file is rewritten only when its content changes.
"""
from __future__ import annotations

import functools
import hashlib
import json
import posixpath
import re
from collections.abc import Callable
from pathlib import Path

import orjson

from kwdocs.config import Config
from kwdocs.pages import keywords, layout
from kwdocs.store import writer as output
from kwdocs.store.state import FACTS, FULLTEXT, KEYWORD_TABLES, KEYWORDS, SEARCH

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
    written += write_fulltext(config, folder)
    state_path = config.state / STATE_FILE
    stamp: list[object] = [[path.name, path.stat().st_mtime_ns, path.stat().st_size] for path in keyword_tables(config)]
    stamp.append(hashlib.sha256("\n".join(tree["files"]).encode("utf-8", "surrogateescape")).hexdigest())
    if (output.read_json(state_path, None) == stamp) and (folder / INDEX_FILE).is_file():
        return written
    index = build_index(keyword_entries(config), set(tree["files"]))
    written += output.write_if_changed(config.out, folder / INDEX_FILE, as_script("KWDOCS_INDEX", index))
    output.write_json(config.out, state_path, stamp)
    return written


# ---------------------------------------------------------------- full-text search

FULLTEXT_FOLDER = "fulltext"     # in the site's static folder: one script per word bucket
FULLTEXT_META = "meta.json"      # in the state's FULLTEXT folder
BUCKETS_FILE = "buckets.js"      # in FULLTEXT_FOLDER: the list of buckets (no bucket has a longer name)
MIN_WORD, MAX_WORD = 3, 40
_WORD = re.compile(r"[a-z0-9]+")
# words too common in documentation to tell one text from another
STOP_WORDS = frozenset("""the and for are but not you all any can had her was one our out has his how its
may new now old see two who did get let put say she too use this that with from have were they will
would there their what when which while been into than then them these those also each only other
some such more most very just over same both here where does done should could""".split())
PROSE_LANGUAGES = ("markdown", "rst")


def words_of(text: str) -> set[str]:
    """The words a text is found by: lower-case ASCII letters and digits, long enough, not too common."""
    words = set(_WORD.findall(text.lower()))    # each word once before the tests: texts repeat words
    words -= STOP_WORDS
    return {word for word in words if MIN_WORD <= len(word) <= MAX_WORD and not word.isdigit()}


def bucket_of(word: str) -> str:
    """The bucket (script) a word is kept in: its first two characters."""
    return word[:2]


def unit_texts(config: Config, files: dict[str, dict], mask: Callable[[str, str], str]) -> list[tuple]:
    """A unit's documentation texts as (path, line, label, text): each module docstring (line 0:
    the page itself) and each definition's own documentation, and each section of a prose file
    (read again, its secrets masked as on its page), in path and line order."""
    texts: list[tuple] = []
    for rel, facts in sorted(files.items()):
        symbols = facts.get("symbols", [])
        if facts.get("language") in PROSE_LANGUAGES and not facts.get("binary") and facts.get("sha256"):
            texts.extend(_sections(config, rel, facts, symbols, mask))
            continue
        if facts.get("docstring"):
            texts.append((rel, 0, posixpath.basename(rel), facts["docstring"]))
        for symbol in symbols:
            if symbol.get("doc"):
                label = f"{symbol['parent']}.{symbol['name']}" if symbol.get("parent") else symbol["name"]
                texts.append((rel, symbol["line"], label.replace("::", "."), symbol["doc"]))
    return texts


def _sections(config: Config, rel: str, facts: dict, symbols: list, mask: Callable[[str, str], str]) -> list[tuple]:
    from kwdocs.engine.steps import read_source, source_path
    from kwdocs.extract.decode import decode
    from kwdocs.pages.compose import ANALYSE_LIMIT

    try:
        text = mask(decode(read_source(source_path(config, rel), ANALYSE_LIMIT))[0], facts.get("language", ""))
    except OSError:
        return []
    lines = text.split("\n")
    headings = [symbol for symbol in symbols if symbol["kind"] == "heading"]
    starts = [(0, posixpath.basename(rel))] + [(symbol["line"], symbol["name"]) for symbol in headings]
    found = []
    for (line, label), following in zip(starts, [start[0] for start in starts[1:]] + [len(lines) + 1]):
        body = "\n".join(lines[max(line - 1, 0):following - 1])
        if body.strip():
            found.append((rel, line, label, body))
    return found


def bucket_parts(texts: list[tuple]) -> dict[str, dict]:
    """What a unit adds to each word bucket: its texts that hold a word of the bucket
    (``docs``: [file index, line (0: the whole page), label], ``files``: their paths) and, per word,
    the indices of those texts."""
    postings: dict[str, list[int]] = {}
    for index, (*_, text) in enumerate(texts):
        for word in words_of(text):
            postings.setdefault(word, []).append(index)
    buckets: dict[str, list[str]] = {}
    for word in sorted(postings):
        buckets.setdefault(bucket_of(word), []).append(word)
    parts: dict[str, dict] = {}
    for bucket, words in buckets.items():
        used = sorted(set().union(*(postings[word] for word in words)))
        renumber = {index: new for new, index in enumerate(used)}
        files: dict[str, int] = {}
        docs = [[files.setdefault(texts[index][0], len(files)), texts[index][1], texts[index][2]] for index in used]
        parts[bucket] = {"files": list(files), "docs": docs,
                         "words": {word: [renumber[index] for index in postings[word]] for word in words}}
    return parts


def write_fulltext(config: Config, folder: Path) -> int:
    """Bring the full-text index (``folder/fulltext/<bucket>.js``, each assigning its part of
    ``window.KWDOCS_FULLTEXT``) up to date with the facts; returns files written or removed.

    Each unit's facts shard is read again only when it changed since the last time (its
    size and time stamp), and only the buckets whose part from it changed are written:
    the state keeps, per bucket, each unit's part as text."""
    from kwdocs.engine.steps import rules_for

    state = config.state / FULLTEXT
    meta_path = state / FULLTEXT_META
    meta = output.read_json(meta_path, {}) or {}
    known: dict[str, list] = meta.get("units", {}) if meta.get("version") == FULLTEXT_VERSION else {}
    facts_folder = config.state / FACTS
    shards = {path.name: path for path in sorted(facts_folder.glob("*.json"))} if facts_folder.is_dir() else {}
    mask = functools.partial(_masked, rules_for(config))
    updates: dict[str, dict[str, str | None]] = {}   # bucket -> unit shard -> its part as text (None: none)
    now: dict[str, list] = {}
    for name, path in shards.items():
        stamp = output.stamp(path)
        old = known.get(name)
        if old is not None and stamp is not None and list(old[0]) == list(stamp):
            now[name] = old
            continue
        data = output.read_json(path, {})
        files = data.get("files") if isinstance(data, dict) else None
        parts = bucket_parts(unit_texts(config, files, mask)) if isinstance(files, dict) else {}
        texts = {bucket: _json_text(part) for bucket, part in parts.items()}
        digests = {bucket: hashlib.sha256(text.encode()).hexdigest() for bucket, text in texts.items()}
        before = old[1] if old is not None else {}
        for bucket in set(digests) | set(before):
            if digests.get(bucket) != before.get(bucket):
                updates.setdefault(bucket, {})[name] = texts.get(bucket)
        now[name] = [list(stamp) if stamp is not None else None, digests]
    for name in sorted(set(known) - set(shards)):   # units that went away
        for bucket in known[name][1]:
            updates.setdefault(bucket, {})[name] = None
    tables: dict[str, dict[str, str]] = {}
    for bucket in sorted(updates):
        table = (output.read_json(state / f"bucket-{bucket}.json", {}) or {}) if known else {}
        expected = {name: entry[1][bucket] for name, entry in known.items() if bucket in entry[1]}
        if not isinstance(table, dict) or table.keys() != expected.keys() or any(
                not isinstance(text, str) or hashlib.sha256(text.encode()).hexdigest() != expected[name]
                for name, text in table.items()):
            # a table that is not what the last build left: every bucket is made again
            output.remove(config.out, meta_path)
            return write_fulltext(config, folder)
        tables[bucket] = table
    changed = 0
    for bucket, changes in sorted(updates.items()):
        table_path = state / f"bucket-{bucket}.json"
        table = tables[bucket]
        for name, text in changes.items():
            if text is None:
                table.pop(name, None)
            else:
                table[name] = text
        script = folder / FULLTEXT_FOLDER / f"{bucket}.js"
        if table:
            output.write_json(config.out, table_path, table)
            body = ",".join(table[name] for name in sorted(table))
            assign = f"(window.KWDOCS_FULLTEXT = window.KWDOCS_FULLTEXT || {{}})[{json.dumps(bucket)}]"
            changed += output.write_if_changed(config.out, script, f"{assign} = [{body}];\n")
        else:
            output.remove(config.out, table_path)
            changed += output.remove(config.out, script)
    if not known:   # started afresh: the scripts and tables of buckets no unit fills any more go
        wanted = {bucket for entry in now.values() for bucket in entry[1]}
        scripts = folder / FULLTEXT_FOLDER
        for script in sorted(scripts.glob("*.js")) if scripts.is_dir() else ():
            if script.stem not in wanted and script.name != BUCKETS_FILE:
                changed += output.remove(config.out, script)
        for table_path in sorted(state.glob("bucket-*.json")) if state.is_dir() else ():
            if table_path.stem.removeprefix("bucket-") not in wanted:
                output.remove(config.out, table_path)
    # the buckets there are, so that a search asks for no script that is not there
    buckets = sorted({bucket for entry in now.values() for bucket in entry[1]})
    changed += output.write_if_changed(config.out, folder / FULLTEXT_FOLDER / BUCKETS_FILE,
                                       as_script("KWDOCS_FULLTEXT_BUCKETS", buckets))
    output.write_json(config.out, meta_path, {"version": FULLTEXT_VERSION, "units": now})
    return changed


FULLTEXT_VERSION = 1


def _json_text(data: object) -> str:
    """Compact JSON; ASCII-only when it holds other characters, as ``as_script`` writes it."""
    text = orjson.dumps(data).decode()
    return text if text.isascii() else json.dumps(data, ensure_ascii=True, separators=(",", ":"))


def _masked(rules, text: str, language: str) -> str:
    return rules.mask_secrets(text, language)[0]

"""The site's navigation and search data, as scripts that work from ``file://``.

Browsers refuse ``fetch`` from ``file://``, so the data is JavaScript that
assigns one global each, loaded with ``<script src>``:

- ``tree.js`` (``window.KWDOCS_TREE``): every folder and documented file, for
  the folder tree and for finding a file by name.  Loaded by every page.
- ``keywords/<shard>.js`` (``window.KWDOCS_KEYWORDS[shard]``): every keyword with
  its kind, file, line and definition anchor, one part per unit of the build,
  each unit's part in the shard its name hashes to (``keywords/buckets.js`` lists
  the shards there are).  Loaded on the first search only, all of them: a
  keyword is found by any part of its name.
- ``fulltext/<bucket>.js`` (``window.KWDOCS_FULLTEXT[bucket]``): the words of the
  documentation text (docstrings, doc comments, the sections of Markdown and reST
  files), one script per first two letters of a word, so a search loads the few
  buckets its words are in (``fulltext/buckets.js`` lists those there are).

Both indexes are kept the same way (``update_index``): each unit adds a part to
some buckets, the state records every part's digest and length by unit (a
bucket's script holds its parts, in unit order, so they are read back from it),
and a build makes again only the parts of units whose input changed (the unit's
keyword entries or facts, as extraction stored them), and writes only the
buckets whose parts changed.  Every file is rewritten only when its content changes.  They are the
build's ``search`` step (``write_search``), which needs extraction only, so it
runs beside the render step; ``tree.js`` lists pages, so the ``site`` step writes
it after them.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import posixpath
import re
import zlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from kwdocs import layout
from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.extract.decode import decode
from kwdocs.languages import by_id
from kwdocs.pages import keywords
from kwdocs.pages.compose import ANALYSE_LIMIT
from kwdocs.rules.ruleset import rules_for
from kwdocs.sources import ChangedSinceExtracted, page_source
from kwdocs.store import writer as output
from kwdocs.store.state import (
    FACTS,
    FOLDERS_META,
    FULLTEXT,
    KEYWORD_ENTRIES,
    PAGES,
    SEARCH,
    SITE_TREE,
    mark_damaged,
    shard_path,
)

TREE_FILE = "tree.js"
EARLIER_FILES = ("search-index.js",)   # data files of earlier versions in the static folder, removed


def as_script(global_name: str, data: object) -> str:
    """JSON assigned to a global; ASCII-only, so no character can end the literal early."""
    return f"window.{global_name} = {_json_text(data, sort_keys=True)};\n"


def tree_data(project: str, files: Iterable[str], folders: Iterable[str]) -> dict:
    """Folders (those with an index page) and files (those with a documentation page) by their
    real names (see ``write_tree``); ``pages`` and ``folderPages`` hold where the pages
    of those whose page path is not their name live (cut or escaped: see ``kwdocs.layout``)."""
    file_pages, folder_pages = {}, {}
    for rel in files:
        page = layout.docs_page(rel)
        if page != rel + layout.DOCS_SUFFIX:
            file_pages[rel] = page[: -len(layout.DOCS_SUFFIX)]
    for subject in folders:
        if layout.output_folder(subject) != subject:
            folder_pages[subject] = layout.output_folder(subject)
    data: dict[str, object] = {"project": project, "folders": sorted(folders), "files": sorted(files)}
    if file_pages or folder_pages:    # rare: the data of most trees stays as it was
        data.update(pages=file_pages, folderPages=folder_pages)
    return data


TREE_VERSION = 2    # of the form of SITE_TREE's record


def folders_with_pages(config: Config) -> list[str]:
    """The folders the state says have pages (as ``state.page_subjects`` names them)."""
    meta = output.read_json(config.state / FOLDERS_META, {})
    folders = meta.get("pages") if isinstance(meta, dict) else None
    return list(folders) if isinstance(folders, dict) else []


def write_tree(config: Config, folders: list[str], folder: Path) -> int:
    """Bring ``tree.js`` up to date with the files and ``folders`` that have pages; returns files written.

    The files are those each unit's record of its pages lists (``state.page_subjects``).  An edit
    writes its own unit's record again, listing the same files: ``SITE_TREE`` keeps a digest of
    what each record listed, by the record's identity (inode, time stamp, size), and what
    ``tree.js`` was made from and its identity then; only records that are not the files read
    last time are read, and every record only when one of them lists other files."""
    record_path = config.state / SITE_TREE
    record = output.read_json(record_path, {})
    if not isinstance(record, dict) or record.get("version") != TREE_VERSION:
        record = {}
    known: dict = record["units"] if isinstance(record.get("units"), dict) else {}
    pages_folder = os.path.join(config.state, PAGES)
    # as the build or a dry run (``kwdocs check``) left them
    names = [name for name in output.state_names(pages_folder) if name.endswith(".json") and not name.startswith(".")]

    def listed(name: str) -> list[str]:
        data = output.read_json(Path(pages_folder, name), {})
        files = data.get("files") if isinstance(data, dict) else None
        return sorted(files) if isinstance(files, dict) else []

    units: dict[str, list] = {}
    lists: dict[str, list[str]] = {}
    for name in names:
        info = _state_identity(os.path.join(pages_folder, name))
        if info is None:
            continue
        entry = known.get(name)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == info:
            units[name] = entry
            continue
        lists[name] = listed(name)
        units[name] = [info, part_digest(_json_text(lists[name]))]
    script = folder / TREE_FILE
    made_from = [config.project_name, part_digest(_json_text(sorted(folders)))]
    same_files = units.keys() == known.keys() and all(
        isinstance(old := known[name], list) and old[1:] == entry[1:] for name, entry in units.items())
    written = False
    if not same_files or record.get("made_from") != made_from or record.get("script") != file_identity(script):
        files = {rel for name in units for rel in (lists[name] if name in lists else listed(name))}
        written = output.write_if_changed(config.out, script, as_script("KWDOCS_TREE", tree_data(
            config.project_name, files, folders)))
    output.write_json(config.out, record_path, {"version": TREE_VERSION, "units": units, "made_from": made_from,
                                                "script": file_identity(script)})
    return int(written)


def _state_identity(path: str) -> list[int] | None:
    """``file_identity`` of a state file as the build or dry run left it (``output.state_stamp``)."""
    if output.dry_running():
        stamp = output.state_stamp(path)
        if stamp is None or stamp[0] < 0:
            return None if stamp is None else [-1, *stamp]
    return file_identity(path)


def file_identity(path: Path | str) -> list[int] | None:
    """A file's inode, time stamp and size: another file, or the same file written again."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_ino, info.st_mtime_ns, info.st_size]


def write_site_data(config: Config, folders: list[str], folder: Path) -> int:
    """Bring ``tree.js`` in ``folder`` up to date (``folders``: ``folders_with_pages``); returns
    files written or removed.  The search indexes are the ``search`` step's (``write_search``)."""
    written = write_tree(config, folders, folder)
    for name in EARLIER_FILES:
        written += output.remove(config.out, folder / name)
    return written


def write_search(config: Config, units: list[str], folder: Path) -> dict:
    """The build's ``search`` step: bring the keyword and full-text indexes in the site's static
    ``folder`` up to date with the shards extraction wrote for ``units`` (the tree's units: shards
    of gone units are pruned later); returns counts.  It reads no page, so it runs beside the
    render step.  An edit reads and writes the parts of the units it changed."""
    written = 0
    try:
        with collector_paused():    # a large tree's words are millions of short-lived lists, none in a cycle
            written += write_keyword_index(config, folder, units)
            written += write_fulltext(config, folder, units)
    except output.StateDamaged as damage:   # the build starts the state over (see ``runner``)
        mark_damaged(config, str(damage))
    return {"assets_written": written}


# ---------------------------------------------------------------- incremental indexes by bucket

@dataclass(frozen=True)
class SearchIndex:
    """A search index kept as one script per bucket: each unit's part of each bucket as JSON
    text, the scripts' text the parts of a bucket in unit order."""
    state: str           # the state's folder of it: meta.json (per unit: its input, its parts' digests
                         # and lengths)
    scripts: str         # the site's folder of it: <bucket>.js (its parts, in unit order), and
                         # BUCKETS_FILE listing them
    data_global: str     # what each bucket's script adds its parts to, by bucket
    list_global: str     # what BUCKETS_FILE assigns
    version: int         # of the parts' form: another one makes every part again


BUCKETS_FILE = "buckets.js"      # no bucket is named like it: bucket names are short
META_FILE = "meta.json"


def part_digest(text: str) -> str:
    """A short hash of ``text``: what a search bucket's meta records of each unit's part."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _bucket_start(index: SearchIndex, bucket: str) -> str:
    """What a bucket's script holds before its parts."""
    return f"(window.{index.data_global} = window.{index.data_global} || {{}})[{json.dumps(bucket)}] = ["


_BUCKET_END = "];\n"


def _bucket_table(index: SearchIndex, script: Path, bucket: str, expected: dict[str, list]) -> dict[str, str] | None:
    """The parts a bucket's script holds, by unit: ``expected`` (unit -> [digest, length] of its
    part, as the meta recorded them) cut out of the script and checked; None when the script is
    not what the last build wrote (edited, cut short, missing)."""
    if not expected:
        return {}
    try:
        text = script.read_text("ascii")    # parts are ASCII-only (``_json_text``): a character is a byte
    except (OSError, UnicodeDecodeError):
        return None
    start = _bucket_start(index, bucket)
    if not text.startswith(start) or not text.endswith(_BUCKET_END):
        return None
    body = text[len(start):-len(_BUCKET_END)]
    table, at = {}, 0
    for unit in sorted(expected):
        digest, length = expected[unit]
        if at:      # the parts are joined by commas
            if body[at:at + 1] != ",":
                return None
            at += 1
        part = body[at:at + length]
        if part_digest(part) != digest:
            return None
        table[unit] = part
        at += length
    return table if at == len(body) else None


def update_index(config: Config, index: SearchIndex, folder: Path, inputs: dict[str, object],
                 parts_of: Callable[[str], dict[str, str]], content_of: Callable[[str], str] | None = None,
                 unsettled: Collection[str] = ()) -> int:
    """Bring ``index`` in the site's static ``folder`` up to date; returns files written or removed.

    ``inputs`` maps each unit to what its parts are made from (a digest, a file's stamp; None:
    unknown, made again); ``parts_of(unit)`` makes a unit's parts, bucket -> JSON text.  Only
    units whose input changed are made again, and only buckets whose parts changed are
    written: every part in a bucket's table is checked against the digest the meta recorded.
    ``content_of(unit)``, when given, is a digest of all that a unit's parts are made of, cheaper
    than its parts: a unit whose input changed but not its content keeps its parts.
    ``unsettled`` names the units whose parts, once made, were found made of sources that no longer
    match their input: they are recorded with no input, so the next build makes them again.
    """
    state = config.state / index.state
    meta_path = state / META_FILE
    if _parts_kept(config, index, folder, inputs, content_of, unsettled):
        return 0
    meta = output.read_json(meta_path, {}) or {}
    known: dict[str, list] = meta.get("units", {}) if meta.get("version") == index.version else {}
    updates: dict[str, dict[str, str | None]] = {}   # bucket -> unit -> its part (None: none)
    now: dict[str, list] = {}
    for unit, source in inputs.items():
        old = known.get(unit)
        if old is not None and source is not None and old[0] == source:
            now[unit] = old
            continue
        content = [content_of(unit)] if content_of is not None else []
        if old is not None and source is not None and content and old[2:] == content:
            now[unit] = [None if unit in unsettled else source, old[1], *content]
            continue
        texts = parts_of(unit)
        digests = {bucket: [part_digest(text), len(text)] for bucket, text in texts.items()}
        before = old[1] if old is not None else {}
        for bucket in set(digests) | set(before):
            if digests.get(bucket) != before.get(bucket):
                updates.setdefault(bucket, {})[unit] = texts.get(bucket)
        now[unit] = [None if unit in unsettled else source, digests, *content]
    for unit in sorted(set(known) - set(inputs)):   # units that went away
        for bucket in known[unit][1]:
            updates.setdefault(bucket, {})[unit] = None
    scripts = folder / index.scripts
    tables: dict[str, dict[str, str]] = {}
    for bucket in sorted(updates):
        # the parts the script holds now, read back from it: a script per bucket and no copy in the
        # state (a second new file per bucket was a third of a cold build's search step)
        table = _bucket_table(index, scripts / f"{bucket}.js", bucket,
                              {unit: entry[1][bucket] for unit, entry in known.items() if bucket in entry[1]})
        if table is None:
            # a script that is not what the last build left: every bucket is made again
            output.remove(config.out, meta_path)
            return update_index(config, index, folder, inputs, parts_of, content_of, unsettled)
        tables[bucket] = table
    changed = 0
    for bucket, changes in sorted(updates.items()):
        table = tables[bucket]
        for unit, text in changes.items():
            if text is None:
                table.pop(unit, None)
            else:
                table[unit] = text
        script = scripts / f"{bucket}.js"
        if table:
            body = ",".join(table[unit] for unit in sorted(table))
            changed += output.write_if_changed(config.out, script, f"{_bucket_start(index, bucket)}{body}{_BUCKET_END}")
        else:
            changed += output.remove(config.out, script)
    wanted = {bucket for entry in now.values() for bucket in entry[1]}
    if not known:   # started afresh: the scripts of buckets no unit fills any more go
        for script in sorted(scripts.glob("*.js")) if scripts.is_dir() else ():
            if script.stem not in wanted and script.name != BUCKETS_FILE:
                changed += output.remove(config.out, script)
        # and the parts' copies in the state that earlier versions kept, one file per bucket
        for table_path in sorted(state.glob("bucket-*.json")) if state.is_dir() else ():
            output.remove(config.out, table_path)
    # the buckets there are, so that a search asks for no script that is not there
    changed += output.write_if_changed(config.out, scripts / BUCKETS_FILE, as_script(index.list_global, sorted(wanted)))
    output.write_json(config.out, meta_path, {"version": index.version, "units": now})
    _keep_sources(config, index, folder, {unit: [entry[0], *entry[2:3]] for unit, entry in now.items()})
    return changed


SOURCES_FILE = "sources.json"    # beside META_FILE: what each unit's parts were made from, without their digests


def _keep_sources(config: Config, index: SearchIndex, folder: Path, sources: dict[str, list]) -> None:
    """Record what each unit's parts were made from ([input, content digest]), with the meta and
    bucket list they belong to (by their identity): ``_parts_kept`` trusts it only beside them."""
    state = config.state / index.state
    output.write_json(config.out, state / SOURCES_FILE, {
        "version": index.version, "units": sources, "meta": file_identity(state / META_FILE),
        "buckets": file_identity(folder / index.scripts / BUCKETS_FILE)})


def _parts_kept(config: Config, index: SearchIndex, folder: Path, inputs: dict[str, object],
                content_of: Callable[[str], str] | None, unsettled: Collection[str] = ()) -> bool:
    """Whether no unit's parts can have changed since ``update_index`` last ran: the same units,
    each with the input or (``content_of``) the content its parts were made from.  Then only the
    inputs are recorded, and the meta (every part's digest, a large file) is neither read nor
    written: an edit that changes no documentation text changes a unit's input only."""
    state = config.state / index.state
    recorded = output.read_json(state / SOURCES_FILE, {})
    if not isinstance(recorded, dict) or recorded.get("version") != index.version \
            or recorded.get("meta") != file_identity(state / META_FILE) \
            or recorded.get("buckets") != file_identity(folder / index.scripts / BUCKETS_FILE):
        return False
    sources = recorded.get("units")
    if not isinstance(sources, dict) or sources.keys() != inputs.keys():
        return False
    now: dict[str, list] = {}
    for unit, source in inputs.items():
        old = sources[unit]
        if source is None or not isinstance(old, list) or not old:
            return False
        if old[0] == source:
            now[unit] = old
        elif content_of is not None and old[1:] == [content_of(unit)] and unit not in unsettled:
            now[unit] = [source, old[1]]
        else:
            return False
    if now != sources:
        _keep_sources(config, index, folder, now)
    return True


# ---------------------------------------------------------------- keyword search

KEYWORD_INDEX = SearchIndex(state=SEARCH, scripts="keywords", data_global="KWDOCS_KEYWORDS",
                      list_global="KWDOCS_KEYWORD_SHARDS", version=3)
KEYWORD_SHARDS = 32     # few scripts for the browser to load, each small enough to write again on an edit


def shard_of(unit: str) -> str:
    """The keyword script a unit's part is in: a stable hash of its name, so units keep theirs."""
    return f"{zlib.crc32(unit.encode('utf-8', 'surrogateescape')) % KEYWORD_SHARDS:02x}"


def keyword_part(letters: dict[str, list]) -> dict:
    """A unit's part of the keyword search: kinds and files once, keywords as rows of indices,
    [name, kind index, file index, line, anchor, shown name ("": the name)], by name, file and line.
    ``letters`` is the unit's entries as extraction stored them (``keywords.unit_letters``)."""
    entries = [entry for _, _, text in letters.values() for entry in orjson.loads(text)]
    entries.sort(key=lambda entry: (str(entry[0]).lower(), str(entry[2]), entry[3]))
    kinds: dict[str, int] = {}
    files: dict[str, int] = {}
    rows = []
    for name, kind, path, line, anchor, shown, *_ in entries:
        kind_index = kinds.setdefault(kind, len(kinds))
        file_index = files.setdefault(path, len(files))
        rows.append([name, kind_index, file_index, line, anchor, shown if shown != name else ""])
    return {"kinds": list(kinds), "files": list(files), "keywords": rows}


def unit_stamps(config: Config, kind: str, units: Iterable[str]) -> dict[str, tuple[str, list[int] | None]]:
    """Each unit's shard of ``kind``: its path, and its time stamp and size (None: there is none).
    A shard rewritten since the last build is read again, no other."""
    stamps: dict[str, tuple[str, list[int] | None]] = {}
    for unit in units:
        path = shard_path(config, kind, unit)
        stamp = output.state_stamp(path)    # a dry run's own shards too (``kwdocs check``)
        stamps[unit] = (path, list(stamp) if stamp is not None else None)
    return stamps


def write_keyword_index(config: Config, folder: Path, units: Iterable[str]) -> int:
    """Bring the keyword search (``folder/keywords/``) up to date with the keyword entries
    extraction stored for ``units``: a unit's part is made again only when its shard was
    rewritten with other entries (the digests of its letters).  Extraction stores every unit's:
    one missing or damaged is damaged state."""
    shards = unit_stamps(config, KEYWORD_ENTRIES, units)

    @functools.lru_cache(maxsize=1)     # a unit's content, then its parts: one unit's entries at a time
    def letters_of(unit: str) -> dict[str, list]:
        stored = output.read_json(Path(shards[unit][0]), {})
        letters = stored.get("letters") if isinstance(stored, dict) and stored.get("unit") == unit else None
        if not isinstance(letters, dict) or not keywords.valid_letters(letters):
            raise output.StateDamaged(f"the keyword entries of {unit or '.'} are damaged")
        return letters

    def content_of(unit: str) -> str:
        return part_digest(_json_text({letter: item[1] for letter, item in letters_of(unit).items()}, sort_keys=True))

    def parts_of(unit: str) -> dict[str, str]:
        letters = letters_of(unit)
        return {shard_of(unit): _json_text(keyword_part(letters))} if letters else {}

    return update_index(config, KEYWORD_INDEX, folder, {unit: stamp for unit, (_, stamp) in shards.items()},
                        parts_of, content_of)


# ---------------------------------------------------------------- full-text search

FULLTEXT_FOLDER = "fulltext"     # in the site's static folder: one script per word bucket
FULLTEXT_META = "meta.json"      # in the state's FULLTEXT folder
BUCKETS_FILE = "buckets.js"      # in FULLTEXT_FOLDER: the list of buckets (no bucket has a longer name)
MIN_WORD, MAX_WORD = 3, 40
_WORD = re.compile(rf"[a-z0-9]{{{MIN_WORD},}}")     # runs too short to be a word are not even made
# words too common in documentation to tell one text from another
STOP_WORDS = frozenset("""the and for are but not you all any can had her was one our out has his how its
may new now old see two who did get let put say she too use this that with from have were they will
would there their what when which while been into than then them these those also each only other
some such more most very just over same both here where does done should could""".split())


def words_of(text: str) -> set[str]:
    """The words a text is found by: lower-case ASCII letters and digits, long enough, not too common."""
    words = set(_WORD.findall(text.lower()))    # each word once before the tests: texts repeat words
    words -= STOP_WORDS
    return {word for word in words if len(word) <= MAX_WORD and not word.isdigit()}


def bucket_of(word: str) -> str:
    """The bucket (script) a word is kept in: its first two characters."""
    return word[:2]


def unit_texts(config: Config, files: dict[str, dict], mask: Callable[[str, str], str],
               unsettled: set[str] | None = None) -> list[tuple]:
    """A unit's documentation texts as (path, line, label, text): each module docstring (line 0:
    the page itself) and each definition's own documentation, and each section of a prose file
    (read again, its secrets masked as on its page), in path and line order.  A prose file that no
    longer holds the bytes its facts describe gives no text and is added to ``unsettled``."""
    texts: list[tuple] = []
    for rel, facts in sorted(files.items()):
        symbols = facts.get("symbols", [])
        language = by_id(facts.get("language") or "text")
        if language is not None and language.prose and not facts.get("binary") and facts.get("sha256"):
            try:
                texts.extend(_sections(config, rel, facts, symbols, mask))
            except ChangedSinceExtracted:
                if unsettled is not None:
                    unsettled.add(rel)
            continue
        if facts.get("docstring"):
            texts.append((rel, 0, posixpath.basename(rel), facts["docstring"]))
        for symbol in symbols:
            if symbol.get("doc"):
                label = f"{symbol['parent']}.{symbol['name']}" if symbol.get("parent") else symbol["name"]
                texts.append((rel, symbol["line"], label.replace("::", "."), symbol["doc"]))
    return texts


def _sections(config: Config, rel: str, facts: dict, symbols: list, mask: Callable[[str, str], str]) -> list[tuple]:
    # of the facts' very bytes, or ChangedSinceExtracted (a checkout between the steps): words of
    # other bytes, kept under the facts' stamp, would stay when the file goes back (issue 31)
    head = page_source(config, {**facts, "path": rel}, ANALYSE_LIMIT)
    if head is None:
        return []
    text = mask(decode(head)[0], facts.get("language", ""))
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
    # one pass in text order: a bucket numbers its texts as it meets them, so each word's
    # indices come out ascending with no renumbering afterwards
    buckets: dict[str, tuple[dict[str, int], dict[int, int], list[list], dict[str, list[int]]]] = {}
    for index, (path, line, label, text) in enumerate(texts):
        for word in words_of(text):
            key = bucket_of(word)
            bucket = buckets.get(key)
            if bucket is None:
                bucket = buckets[key] = ({}, {}, [], {})
            files, numbers, docs, words = bucket
            number = numbers.get(index)
            if number is None:
                number = numbers[index] = len(docs)
                docs.append([files.setdefault(path, len(files)), line, label])
            postings = words.get(word)
            if postings is None:
                words[word] = [number]
            else:
                postings.append(number)
    return {name: {"files": list(files), "docs": docs, "words": {word: words[word] for word in sorted(words)}}
            for name, (files, _, docs, words) in sorted(buckets.items())}


FULLTEXT_INDEX = SearchIndex(state=FULLTEXT, scripts="fulltext", data_global="KWDOCS_FULLTEXT",
                       list_global="KWDOCS_FULLTEXT_BUCKETS", version=3)


def write_fulltext(config: Config, folder: Path, units: Iterable[str]) -> int:
    """Bring the full-text index (``folder/fulltext/<bucket>.js``, each assigning its part of
    ``window.KWDOCS_FULLTEXT``) up to date with the facts of ``units``; returns files written or removed.

    Each unit's facts shard is read again only when it changed since the last time (its
    size and time stamp), and only the buckets whose part from it changed are written."""
    # the parts are kept by the name of the unit's facts shard, in that order; a unit with no facts has no words
    shards = {posixpath.basename(path): (path, stamp, unit)
              for unit, (path, stamp) in unit_stamps(config, FACTS, units).items() if stamp is not None}

    unsettled: set[str] = set()     # units with a prose file changed since extracted

    @functools.lru_cache(maxsize=1)     # a unit's content, then its parts: one unit's texts at a time
    def texts_of(name: str) -> list[tuple]:
        path, _, unit = shards[name]
        data = output.read_json(Path(path), {})
        if isinstance(data, dict) and data and data.get("unit") != unit:
            # another unit's shard in its place (shards swapped or copied): never its words under this unit
            raise output.StateDamaged(f"{path} holds the facts of another unit")
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict):
            return []
        changed: set[str] = set()
        texts = unit_texts(config, files, functools.partial(_masked, rules_for(config)), changed)
        if changed:
            unsettled.add(name)
        return texts

    def content_of(name: str) -> str:
        # an edit that changes no documentation text (most do) leaves the unit's words as they were
        return part_digest(_json_text(texts_of(name)))

    def parts_of(name: str) -> dict[str, str]:
        return {bucket: _json_text(part) for bucket, part in bucket_parts(texts_of(name)).items()}

    return update_index(config, FULLTEXT_INDEX, folder, {name: stamp for name, (_, stamp, _) in sorted(shards.items())},
                        parts_of, content_of, unsettled)


def _json_text(data: object, sort_keys: bool = False) -> str:
    """Compact JSON, ASCII-only (``json.dumps(ensure_ascii=True)``'s bytes): no character in it can
    end a script's literal early or read differently in another encoding."""
    text = output.compact_json(data, sort_keys=sort_keys).decode()
    return text if text.isascii() else json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=sort_keys)


def _masked(rules, text: str, language: str) -> str:
    return rules.mask_secrets(text, language)[0]

"""The build steps that doit runs: extract, link, render, keywords, assemble.

Data flows one way through JSON state under ``<out>/.kwdocs``, per *unit* (a
folder, or a bucket of a folder holding thousands of files, so that an edit
never re-reads one enormous shard):

    sources --extract:<unit>--> facts/<id>.json    what each file defines and imports
    facts   --link------------> links/<id>.json    which file each import names; users
    facts + links --render:<unit>--> the unit's file pages
    facts   --keywords--------> keywords.md (per letter when large), from the entries saved beside the facts
    facts   --assemble--------> index.md and doc.md of every folder
    pages   --prune-----------> pages and state of gone files removed

Each step rewrites a state file only when its content changes, so doit's time
stamp check cuts off everything downstream of an edit that changes nothing.  Page
texts come from ``kwdocs.pages.compose``; this module only decides what to redo and
writes it.  Each step returns counts for the build summary.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import posixpath
import stat
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson

from kwdocs import languages
from kwdocs.config import Config
from kwdocs.context import per_config
from kwdocs.engine.workers import collector_paused
from kwdocs.extract import ctags, extract_bytes
from kwdocs.extract.decode import decode, is_binary
from kwdocs.extract.links import mentions_of, uses_and_mentions
from kwdocs.facts import Facts, Problem, as_facts, identity as facts_identity
from kwdocs.pages import compose as pages, keywords, layout, model
from kwdocs.pages.formats import file_page_paths, formats_for, written_forms
from kwdocs.pages.render import renderer_for
from kwdocs.rules.ruleset import RuleSet
from kwdocs.scan import folder_of
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import (  # noqa: F401  (re-exported: the steps' callers use them through build)
    EARLIER,
    FACTS,
    FILE_ROWS,
    FOLDER_PARTS,
    FOLDERS_META,
    IMPORTANCE,
    KEYWORD_ENTRIES,
    KEYWORDS_META,
    LINK_INPUTS,
    LINK_META,
    LINK_REQUESTS,
    LINKS,
    PAGES,
    PROBLEMS,
    PRUNED,
    ROWS,
    SEEN,
    TOKENS,
    TOKENS_SUFFIX,
    keyword_rows,
    keyword_table,
    load_shard,
    mark_damaged,
    save_shard,
    shard_path,
    tokens_shard,
    units_of,
    written_pages,
)

StateDamaged = output.StateDamaged


def digest(*parts: object) -> str:
    """A stable hash of JSON-like parts (paths and the like as their text), for cache keys."""
    return hashlib.sha256(output.compact_json(parts, sort_keys=True, default=str)).hexdigest()


@per_config
def rules_for(config: Config) -> RuleSet:
    """Lazy: an edit's build needs only their fingerprint; config validation compiled them once."""
    return RuleSet.load(extra_files=list(config.rules), replace=config.replace_rules, project=config.project_name,
                        lazy=True)


@per_config
def extraction_key(config: Config) -> str:
    """What facts depend on besides the file itself: kwdocs' code, the languages installed
    (``languages.fingerprint``), the rules, and whether Universal Ctags is there to read the
    languages kwdocs has no extractor for."""
    return digest(code_fingerprint(), languages.fingerprint(), rules_for(config).fingerprint(), pages.ANALYSE_LIMIT,
                  ctags.fingerprint())


@per_config
def render_key(config: Config, template: str) -> str:
    """What a page depends on besides its model: its templates, kwdocs' code and the settings.
    The code fingerprint names the packages installed beside kwdocs with their versions, the
    docstring parser's among them: another one may read a docstring differently."""
    renderer = renderer_for(config)
    return digest(code_fingerprint(), renderer.fingerprint(template), config.fingerprint_data(),
                  model.sections_fingerprint())


# ---------------------------------------------------------------- reading sources

def source_path(config: Config, rel: str) -> str:
    """A source file's path as text, as doit names a task's files: a ``Path`` per file and
    step cost more than what is done with it."""
    return os.path.join(config.src, rel)


class Source(NamedTuple):
    """What ``read_head`` read of a file: its beginning, and its size, hash and lines as a whole."""

    head: bytes
    size: int
    sha256: str
    lines: int


READ_CHUNK = 1 << 20


def _open_regular(path: Path | str) -> int:
    """A descriptor of a regular file, never blocking on a FIFO swapped in after the scan."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, "not a regular file any more")
    return fd


def read_source(path: Path | str, limit: int | None = None) -> bytes:
    """A regular file's bytes, or its first ``limit`` bytes: a page shows no more."""
    fd = _open_regular(path)
    try:
        if limit is None:
            chunks = []
            while chunk := os.read(fd, READ_CHUNK):
                chunks.append(chunk)
            return b"".join(chunks)
        head = bytearray()
        while len(head) < limit and (chunk := os.read(fd, min(READ_CHUNK, limit - len(head)))):
            head += chunk
        return bytes(head)
    finally:
        os.close(fd)


def read_head(path: Path | str, limit: int, hashed: bool = True) -> Source:
    """A regular file's first ``limit`` bytes, and its size, SHA-256 and line count as a whole:
    the rest is read in chunks and dropped, so a file of any size costs ``limit`` bytes.
    ``hashed=False``: no hash ("") of a file that fits in ``limit`` (whoever reads it hashes it)."""
    fd = _open_regular(path)
    try:
        hasher = hashlib.sha256() if hashed else None
        head = bytearray()
        size = newlines = 0
        last = b""
        text = True     # lines are counted in text only (a binary file has none)
        while chunk := os.read(fd, READ_CHUNK if len(head) >= limit else min(READ_CHUNK, limit - len(head))):
            if len(head) < limit:
                head += chunk
                text = len(head) < limit or not is_binary(head)
                if hasher is not None:
                    hasher.update(chunk)
            else:
                if hasher is None:      # larger than the limit: its hash can only be made here
                    hasher = hashlib.sha256(head)
                hasher.update(chunk)
            size += len(chunk)
            newlines += chunk.count(b"\n") if text else 0
            last = chunk[-1:]
        digest = hasher.hexdigest() if hasher is not None else ""
        return Source(bytes(head), size, digest, newlines + (0 if last in (b"", b"\n") else 1))
    finally:
        os.close(fd)


def file_hashes(paths: list[str], threads: int = 4) -> dict[str, str | None]:
    """The SHA-256 of each regular file (None: unreadable, or not a regular file), read on a few
    threads: hashing and reading let go of the interpreter's lock."""
    from concurrent.futures import ThreadPoolExecutor

    def one(path: str) -> str | None:
        try:
            return read_head(path, 0).sha256
        except OSError:
            return None

    with ThreadPoolExecutor(threads) as pool:
        return dict(zip(paths, pool.map(one, paths, chunksize=64)))


Lookup = Callable[[str, Source], "Facts | None"]


class Read(NamedTuple):
    """A file as read ahead of its extraction: when reading began, its stamp then and after."""

    started: int
    stamp: tuple[int, int]
    source: Source


def extract_file(config: Config, rel: str, previous: Facts | None = None, cached: Lookup | None = None,
                 read: Source | None = None) -> Facts:
    """Facts of one file with its rule findings; a file that cannot be read still gets a record.

    ``previous`` are the file's facts from the last build under the same extraction key:
    they are returned as they are when the content is the same (a file touched, or checked
    out again), so its content hash, not its time stamp, decides what is extracted again.
    Only the first ``pages.ANALYSE_LIMIT`` bytes of a file are held (and, when it is no
    larger, analysed): a larger file is documented by its metadata and beginning.
    ``cached`` gives the facts a shared cache holds of these bytes, if any; ``read``: the file
    as the caller read it, unchanged since.
    """
    try:
        source = read if read is not None else read_head(source_path(config, rel), pages.ANALYSE_LIMIT,
                                                         hashed=previous is not None or cached is not None)
    except OSError as error:
        reason = error.strerror or str(error)
        return Facts(path=rel, size=0, lines=0, sha256="", language="unreadable", type_label="Unreadable File",
                     fence="", binary=False, encoding="", parsed=False, docstring="", symbols=[], imports=[],
                     problems=[{"message": f"could not be read: {reason}"}], findings={})
    if previous is not None and previous.get("size") == source.size and previous.get("sha256") == source.sha256:
        return previous
    if cached is not None and (found := cached(rel, source)) is not None:
        return found
    return facts_of_source(config, rel, source)


def facts_of_source(config: Config, rel: str, source: Source) -> Facts:
    """Facts of one file from what ``read_head`` read of it: no file system needed, so a Dask
    worker (``kwdocs.engine.cluster``) makes them from the bytes it is sent."""
    data = source.head
    rules = rules_for(config)
    if source.size > len(data) and not is_binary(data):
        facts, _, calls = extract_bytes(rel, b"")
        text: str | None
        text, _ = decode(data)
        facts["lines"] = source.lines
        facts["problems"].append({"message": f"larger than {pages.ANALYSE_LIMIT // (1024 * 1024)} MiB: "
                                              "only its metadata and beginning are documented"})
    else:
        # the extractor reads the masked text: everything pages show besides the source
        # (overview, signatures, keywords, search data) comes from it
        facts, text, calls = extract_bytes(rel, data, lambda text, language: rules.mask_secrets(text, language, "x")[0])
    facts["size"] = source.size
    facts["sha256"] = source.sha256 or facts["sha256"]
    facts["findings"] = rules.evaluate(facts, text, calls)
    return facts


READ_ATTEMPTS = 3
RACY_NS = 20_000_000    # the kernel stamps files from a clock that may lag by a tick


def extract_settled(config: Config, rel: str, previous: Facts | None = None,
                    seen: dict[str, list] | None = None, cached: Lookup | None = None,
                    read: Read | None = None) -> Facts:
    """``extract_file``, again while the file changes under it (a save, a checkout).

    ``seen`` gets the file's [size, time stamp, SHA-256] as read, unless its time stamp is
    too recent to tell a later write in the same clock tick from this one (git's "racily
    clean"): then the next build reads it again.

    A file deleted or replaced mid-build is documented as it is now (or as
    unreadable); one that never holds still as last read, with a problem.  The
    build goes on either way, and ``kwdocs.engine.stat_checker`` makes the next one read
    any file modified during this one again.  ``read``: the file as the caller read it, used
    when its stamp is still the one it had then.
    """
    source = source_path(config, rel)
    for _ in range(READ_ATTEMPTS):
        started = time.time_ns()
        before = output.stamp(source)
        if read is not None and before is not None and read.stamp == before:
            started = read.started
            facts = extract_file(config, rel, previous, cached, read.source)
        else:
            facts = extract_file(config, rel, previous, cached)
        read = None
        if output.stamp(source) == before:
            if seen is not None and before is not None and facts.get("sha256") \
                    and before[0] < started - RACY_NS:
                seen[rel] = [before[1], before[0], facts["sha256"]]
            return facts
    problem: Problem = {"message": "kept changing while it was being read; the next build reads it again"}
    return {**facts, "problems": [*facts["problems"], problem]}   # a copy: facts may be ``previous``


# ---------------------------------------------------------------- the steps' common ground

def recovering(step: Callable[..., dict]) -> Callable[..., dict]:
    """A step that meets state which is not what kwdocs wrote tells the build so (``runner``
    starts the state over and builds again) instead of failing or trusting it."""
    @functools.wraps(step)
    def run(config: Config, *args, **kwargs) -> dict:
        try:
            return step(config, *args, **kwargs)
        except StateDamaged as damage:
            mark_damaged(config, str(damage))
            return {}
    return run


def _stat(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def unit_facts(config: Config, unit: str, rels: list[str]) -> dict[str, Facts]:
    """The unit's facts, made again here when they are missing, damaged, of other files or of
    other code: doit's records only say when to extract, never that the facts are there."""
    shard = load_shard(config, FACTS, unit)
    files = shard.get("files")
    if shard.get("key") != extraction_key(config) or not isinstance(files, dict) or files.keys() != set(rels):
        extract_unit(config, unit, rels, [])
        files = load_shard(config, FACTS, unit, strict=True).get("files", {})
    return files


def stored_facts(config: Config, unit: str) -> dict[str, Facts]:
    """A live unit's facts for steps that make a lost summary again: none is damage."""
    files = load_shard(config, FACTS, unit, strict=True).get("files")
    if not isinstance(files, dict) or not files:
        raise StateDamaged(f"the facts of {unit or '.'} are missing")
    return files


# ---------------------------------------------------------------- extract

@recovering
@collector_paused()
def extract_unit(config: Config, unit: str, rels: list[str], changed: list[str]) -> dict:
    """Bring the unit's facts shard up to date.

    doit's ``changed`` is not trusted with what to keep (after a killed build doit
    knows nothing and says nothing changed): a file's facts are kept when its size
    and time stamp are those it had when they were made (``SEEN``); otherwise it
    is read, and its content hash decides whether it is extracted again.
    """
    key = extraction_key(config)
    previous, kept, now_seen = vouched_facts(config, unit, rels)
    redo = [rel for rel in rels if rel not in kept]
    remote = cluster_facts(config, unit) if redo else None
    shared = SharedFacts(config, redo) if config.cache and redo else None
    lookup = _first_of([found.lookup for found in (remote, shared) if found is not None])
    made_here = [rel for rel in (shared.misses if shared is not None else redo) if remote is None or rel not in remote]
    _prefetch_tags(config, made_here)
    extracted = 0
    # an HTML build keeps the highlight tokens of the trees parsed here: the render step then parses no file twice
    with _recording_tokens(config, redo) as recorder:
        for rel in redo:
            if recorder is not None:
                recorder.path = rel
            before = previous.get(rel)
            settled = remote.settled(config, rel) if remote is not None else None
            if settled is not None:     # made on the cluster from what the file holds now (its time stamp says so)
                kept[rel], now_seen[rel] = settled
            else:
                read = shared.read.pop(rel, None) if shared is not None else None
                kept[rel] = extract_settled(config, rel, before, now_seen, lookup, read)
            extracted += kept[rel] is not before and (shared is None or rel not in shared.used)
    files: dict[str, Facts] = {rel: kept[rel] for rel in rels}
    stored = shared.store(files, now_seen) if shared is not None else 0
    if recorder is not None and recorder.entries:
        _save_tokens(config, unit, files, recorder.entries)
    # what linking and folder pages need of the facts, made here where the work runs on every core
    # (the link and assemble steps, which see the whole tree, run alone); the facts shard goes last:
    # the later steps key on it
    save_shard(config, LINK_INPUTS, unit, {"files": _link_inputs(files)})
    save_shard(config, KEYWORD_ENTRIES, unit, {"letters": keywords.unit_letters(files)})
    rows, part = _unit_rows(files)
    save_shard(config, ROWS, unit, rows)
    save_shard(config, FOLDER_PARTS, unit, part)
    save_shard(config, FACTS, unit, {"key": key, "files": files})
    save_shard(config, SEEN, unit, {"files": now_seen})    # after the facts: it vouches for them
    if shared is None and not config.scheduler:
        return {"files": len(rels), "extracted": extracted}
    from kwdocs.store.cache import report
    return {"files": len(rels), "extracted": extracted, "cache_hits": len(shared.used) if shared else 0,
            "cache_stored": stored, **report(), "cluster_extracted": remote.used if remote else 0}


def _recording_tokens(config: Config, redo: list[str]) -> contextlib.AbstractContextManager:
    """``tokens.recording()`` in an HTML build with files to extract; else nothing (None)."""
    if not (config.html and redo):
        return contextlib.nullcontext()
    from kwdocs.site import tokens
    return tokens.recording(config.max_source_bytes)


def _save_tokens(config: Config, unit: str, files: dict[str, Facts], recorded: dict) -> None:
    """Keep the tokens just recorded of the unit's files that are highlighted as recorded (their
    fence's), beside those kept of its other files (each proves itself by its text's digest)."""
    from kwdocs.site import tokens as highlight_tokens
    fresh = {rel: entry for rel, entry in recorded.items()
             if rel in files and files[rel].get("fence") == entry.info}
    if not fresh:
        return
    path = tokens_shard(config, unit)
    kept = highlight_tokens.read(path, unit, code_fingerprint(), set(files) - fresh.keys())
    highlight_tokens.write(config.out, path, unit, code_fingerprint(), kept | fresh)


def _offering_tokens(config: Config, unit: str, facts: dict[str, Facts], todo: list[str]
                     ) -> contextlib.AbstractContextManager:
    """In an HTML build, the highlighter offered the kept tokens of the files to render that may
    have some (``tokens.offered``); else nothing."""
    if not config.html or not todo:
        return contextlib.nullcontext()
    from kwdocs.site import tokens as highlight_tokens
    wanted = {rel for rel in todo if facts[rel].get("fence") in highlight_tokens.FENCES}
    if not wanted:
        return contextlib.nullcontext()
    return highlight_tokens.offered(highlight_tokens.read(tokens_shard(config, unit), unit, code_fingerprint(), wanted))


def _first_of(lookups: list[Lookup]) -> Lookup | None:
    """One lookup asking each of ``lookups`` in turn (a cluster's facts, then a shared cache's)."""
    if len(lookups) < 2:
        return lookups[0] if lookups else None

    def lookup(rel: str, source: Source) -> Facts | None:
        return next((facts for look in lookups if (facts := look(rel, source)) is not None), None)
    return lookup


def vouched_facts(config: Config, unit: str, rels: list[str]) -> tuple[dict[str, Facts], dict[str, Facts],
                                                                          dict[str, list]]:
    """The unit's facts of the last build under this extraction key, those of its files whose
    size and time stamp are still those they had when their facts were made, and their
    ``SEEN`` records: the files not kept are read again."""
    old = load_shard(config, FACTS, unit)
    previous = old.get("files", {}) if old.get("key") == extraction_key(config) else {}
    seen = load_shard(config, SEEN, unit).get("files", {})
    kept: dict[str, Facts] = {}
    now_seen: dict[str, list] = {}
    for rel in rels:
        before = previous.get(rel)
        record = seen.get(rel)
        if before is not None and record is not None and record[2] == before.get("sha256") \
                and _stat(source_path(config, rel)) == (record[0], record[1]):
            kept[rel] = before
            now_seen[rel] = record
    return previous, kept, now_seen


# What Dask workers made, while a build runs on a cluster: ``kwdocs.engine.cluster`` lends its
# ``facts_of`` and ``pages_of`` here for a session's duration (it is built on the steps, so
# they never import it)
remote_facts: Callable[[Config, str], Any] | None = None
remote_pages: Callable[[Config, str], Any] | None = None


def cluster_facts(config: Config, unit: str):
    """What a Dask worker made of the unit's files (``kwdocs.engine.cluster``), when this build
    runs on a cluster."""
    if not config.scheduler or remote_facts is None:
        return None
    return remote_facts(config, unit)


class SharedFacts:
    """A unit's files' facts in the shared cache (``kwdocs.store.cache``): fetched in one batch
    before extraction, and those extracted here stored in one batch after it."""

    def __init__(self, config: Config, rels: list[str]) -> None:
        from kwdocs.store import cache

        self.cache = cache.shared_cache(config)
        self.key = extraction_key(config)
        self.hashes: dict[str, str] = {}
        self.used: set[str] = set()
        self.found: dict[str, Facts] = {}
        self.read: dict[str, Read] = {}     # each file as read here, for its extraction: read once
        keys: dict[str, str] = {}
        for rel in rels:
            path = source_path(config, rel)
            started = time.time_ns()
            before = output.stamp(path)
            try:
                source = read_head(path, pages.ANALYSE_LIMIT)
            except OSError:
                continue
            if before is not None and output.stamp(path) == before:
                self.read[rel] = Read(started, before, source)
            self.hashes[rel] = source.sha256
            keys[cache.entry_key("facts", rel, self.hashes[rel], self.key)] = rel
        assert self.cache is not None
        for key, data in self.cache.get_many(list(keys)).items():
            rel = keys[key]
            try:
                facts = as_facts(cache.decode(data, self.claims(key, rel), self.cache.key))
                if facts is None or facts.get("path") != rel or facts.get("sha256") != self.hashes[rel]:
                    raise ValueError("its facts are of another file")
                self.found[rel] = facts
            except ValueError as error:
                cache.ignored(error, f"{rel}: cache entry {key[:16]} ignored ({error}); extracted again")
        self.misses = [rel for rel in rels if rel not in self.found]

    def claims(self, key: str, rel: str) -> dict[str, str]:
        """What an entry of ``rel``'s facts says it was made from."""
        return {"kind": "facts", "key": key, "path": rel, "sha256": self.hashes[rel], "extraction": self.key}

    def lookup(self, rel: str, source: Source) -> Facts | None:
        """The cached facts of ``rel`` if made from exactly these bytes."""
        facts = self.found.get(rel)
        if facts is None or facts.get("sha256") != source.sha256 or facts.get("size") != source.size:
            return None
        self.used.add(rel)
        return facts

    def store(self, files: dict[str, Facts], seen: dict[str, list]) -> int:
        """Store the facts extracted here of files that held still while read (``seen``)."""
        from kwdocs.store import cache

        if self.cache is None:
            return 0
        entries = {}
        for rel, sha256 in self.hashes.items():
            facts = files.get(rel)
            if rel in self.used or facts is None or facts.get("sha256") != sha256 or rel not in seen:
                continue
            key = cache.entry_key("facts", rel, sha256, self.key)
            entries[key] = cache.encode(self.claims(key, rel), facts, self.cache.key)
        return self.cache.put_many(entries)


def _prefetch_tags(config: Config, rels: list[str]) -> None:
    """One ctags process for the unit's files of the languages ctags reads (by name; a file
    known by its ``#!`` line alone gets its own), instead of one per file."""
    wanted = [rel for rel in rels if languages.language_of(rel).module == languages.CTAGS]
    if not wanted or ctags.executable() is None:
        return
    heads = {}
    for rel in wanted:
        try:
            heads[rel] = read_source(source_path(config, rel), pages.ANALYSE_LIMIT + 1)
        except OSError:
            continue  # extraction reads it again and says why it cannot
    prefetch_tags_of(config, heads)


def prefetch_tags_of(config: Config, heads: dict[str, bytes]) -> None:
    """``_prefetch_tags`` for files already read (their first ``ANALYSE_LIMIT + 1`` bytes, or
    all of a smaller one)."""
    wanted = [rel for rel in heads if languages.language_of(rel).module == languages.CTAGS]
    if not wanted or ctags.executable() is None:
        return
    texts = {}
    rules = rules_for(config)
    for rel in wanted:
        data = heads[rel]
        if not is_binary(data) and len(data) <= pages.ANALYSE_LIMIT:
            # masked as extraction masks it: the same text, and no secret in ctags' files
            texts[rel] = rules.mask_secrets(decode(data)[0], languages.language_of(rel).id, "x")[0]
    ctags.prefetch_texts(texts)


# ---------------------------------------------------------------- link

def _link_inputs(files: dict[str, Facts]) -> dict[str, dict]:
    """What linking reads of each file: its imports, whether it is a test, the names it calls
    through imports, and its top-level definitions: ``defines`` (name -> anchor, what other
    pages' cross-references link to), ``defs`` (name -> line) and ``binds`` (as imported ->
    as bound), with which the link step sends a name imported elsewhere to its definition."""
    inputs = {}
    for rel, facts in files.items():
        info = {"language": facts.get("language", ""), "imports": facts.get("imports", []),
                "test": model.is_test(facts), "uses": facts.get("uses", []), **_names_of(facts), **mentions_of(facts)}
        if defines := model.top_definitions(facts):
            info["defines"] = defines
        if facts.get("installs"):   # what a build file installs, joined with the other files when linking
            info["installs"] = facts["installs"]
        inputs[rel] = info
    return inputs


def _names_of(facts: Facts) -> dict[str, dict]:
    """A file's top-level definitions (``defs``: name -> line) and the names its imports bind
    (``binds``: as imported -> as bound); none when it has none."""
    defs: dict[str, int] = {}
    binds: dict[str, str] = {}
    for symbol in facts.get("symbols", []):
        if symbol["kind"] == "import":
            if symbol.get("signature"):
                binds.setdefault(symbol["signature"], symbol["name"])
        elif symbol["kind"] in model.LINKED_KINDS and not symbol.get("parent"):
            defs.setdefault(symbol["name"], symbol["line"])
    return {key: value for key, value in (("defs", defs), ("binds", binds)) if value}


_DEFINITION_INPUTS = ("defs", "defines")


def _import_digest(inputs: dict[str, dict]) -> str:
    """A digest of a unit's link inputs but its definitions: what resolving imports reads."""
    return digest({rel: {key: value for key, value in info.items() if key not in _DEFINITION_INPUTS}
                   for rel, info in inputs.items()})


def _definitions_digest(inputs: dict[str, dict]) -> str:
    return digest({rel: [info.get(key) for key in _DEFINITION_INPUTS] for rel, info in inputs.items()})


def _stored_link_inputs(config: Config, unit: str) -> dict[str, dict]:
    """A unit's link inputs as extraction left them (made again from its facts if lost or damaged)."""
    stored = load_shard(config, LINK_INPUTS, unit)
    if not isinstance(stored.get("files"), dict):
        stored = {"files": _link_inputs(stored_facts(config, unit))}
        save_shard(config, LINK_INPUTS, unit, stored)
    for info in stored["files"].values():
        _interned(info.get("imports", []))
    return stored["files"]


def _interned(imports: list) -> list:
    """The same records with one string object per distinct import kind and module, as they
    are read (interning after reading them all raises the peak): a tree links all its
    imports at once, and a common header is included thousands of times."""
    for record in imports:
        if isinstance(record, dict):
            for key in ("kind", "module"):
                if isinstance(record.get(key), str):
                    record[key] = sys.intern(record[key])
    return imports


def changed_units(config: Config, units: list[str], changed: list[str] | None) -> set[str]:
    """The units whose facts shard doit says changed, for the steps that read every unit's shard.

    When an ``uptodate`` check fails (the unit list, a template), doit runs the
    task without looking at its files and passes no changes at all: then any
    shard may have changed since the task last ran.
    """
    if not changed:
        return set(units)
    changed_paths = set(changed)
    return {unit for unit in units if shard_path(config, FACTS, unit) in changed_paths}


@recovering
@collector_paused()
def link_tree(config: Config, units: list[str], changed: list[str]) -> dict:
    """Resolve imports and includes across the tree; write the link shards that changed.

    Most edits change no import: then the digests of the changed units' link
    inputs match and nothing is recomputed, and an edit that only moves definitions
    sends the names other files import from them to their new lines
    (``_moved_definitions``).  Each unit's inputs are kept in a shard of their own,
    written only when they change (one file for the whole tree meant holding it twice
    over as text on every relink).
    """
    meta_path = config.state / LINK_META
    meta = output.read_json(meta_path, {}) or {}
    digests: dict[str, str] = meta.get("digests", {})
    definitions: dict[str, str] = meta.get("definitions", {})
    changed_set = changed_units(config, units, changed)
    fresh_inputs: dict[str, dict] = {}
    for unit in units:
        if unit not in digests or unit in changed_set:
            fresh_inputs[unit] = _stored_link_inputs(config, unit)
    new_digests = {unit: _import_digest(inputs) for unit, inputs in fresh_inputs.items()}
    rules = rules_for(config)
    new_definitions = {unit: _definitions_digest(inputs) for unit, inputs in fresh_inputs.items()}
    if (set(digests) == set(units) and all(digests[u] == d for u, d in new_digests.items())
            and meta.get("roots") == list(config.include_roots) and meta.get("code") == code_fingerprint()
            and meta.get("rules") == rules.fingerprint()
            and isinstance(meta.get("anchored"), dict) and set(definitions) == set(units)
            and all(os.path.isfile(shard_path(config, kind, unit)) for unit in units
                    for kind in (LINKS, IMPORTANCE, LINK_REQUESTS))):
        moved = [unit for unit, value in new_definitions.items() if definitions[unit] != value]
        if not moved:
            return {"link_shards": 0}
        # the imports are as they were: only where names from the moved units' files are defined changes
        rewritten = _moved_definitions(config, moved, fresh_inputs)
        if rewritten is not None:
            try:
                rewritten = sorted(set(rewritten) | set(_anchor_again(config, moved, fresh_inputs, meta["anchored"])))
            except (TypeError, IndexError, KeyError, AttributeError):
                rewritten = None     # a damaged record of where anchors were looked for: link it all
        if rewritten is not None:
            output.write_json(config.out, meta_path, dict(meta, definitions=definitions | new_definitions,
                                                          rewritten=rewritten))
            return {"link_shards": len(rewritten)}
    inputs = {unit: fresh_inputs.get(unit) or _stored_link_inputs(config, unit) for unit in units}
    # the whole tree's links from the cache only without links of an earlier build (a fresh clone):
    # an edit that relinks would add an entry the size of all links for each tree it links
    shared = SharedLinks(config, inputs, {unit: [new_digests[unit], new_definitions[unit]] for unit in units},
                         rules.fingerprint()) if config.cache and not digests else None
    made: Iterator[tuple[str, bytes]]
    if shared is not None and shared.found is not None:
        bodies, anchored = shared.found, shared.anchored
        made = ((name, bodies[name]) for name in bodies if name != ANCHORED_PART)
    else:
        linked = _link_all(config, inputs, rules)
        anchored = linked["anchored"]
        made = _link_bodies(linked, units)
        bodies = {ANCHORED_PART: output.compact_json(anchored, sort_keys=True)} if shared is not None else {}
    storing = shared is not None and shared.found is None
    rewritten = []
    for name, body in made:     # each written as it is made: all of them at once raised the step's peak
        kind, _, unit = name.partition("/")
        if output.write_sealed(config.out, shard_path(config, kind, unit), body) and kind == LINKS:
            rewritten.append(unit)
        if storing:
            bodies[name] = body
    if storing and shared is not None:
        shared.store(bodies)
    output.write_json(config.out, meta_path, {     # "rewritten": the units whose pages may need rendering again
        "digests": {unit: new_digests.get(unit) or digests[unit] for unit in units},
        "definitions": {unit: new_definitions.get(unit) or _definitions_digest(inputs[unit]) for unit in units},
        "anchored": anchored,
        "roots": list(config.include_roots), "code": code_fingerprint(), "rules": rules.fingerprint(),
        "rewritten": rewritten})
    if shared is None:
        return {"link_shards": len(rewritten)}
    from kwdocs.store.cache import report
    return {"link_shards": len(rewritten), **report()}


def _link_all(config: Config, inputs: dict[str, dict], rules: RuleSet) -> dict:
    """The whole tree linked: each unit's [links, importance, link requests] (``units``), and
    which files each unit's anchors were looked for in (``anchored``, as the link meta keeps it)."""
    from kwdocs.extract.cmake import installed_files
    from kwdocs.extract.links import definition_links, name_uses, reexports, resolve_links

    flat = {rel: info for entry in inputs.values() for rel, info in entry.items()}
    unit_of = {rel: unit for unit, entry in inputs.items() for rel in entry}
    resolved = resolve_links({rel: info["language"] for rel, info in flat.items()},
                             {rel: info["imports"] for rel, info in flat.items() if info["imports"]},
                             config.include_roots, in_place=True)   # the inputs are saved in their shards
    tests = {rel for rel, info in flat.items() if info["test"]}
    shared = reexports(resolved)
    uses = name_uses(resolved, {rel: info.get("uses", []) for rel, info in flat.items()}, shared)
    names, places, requests = definition_links(
        resolved, {rel: info["defs"] for rel, info in flat.items() if "defs" in info},
        {rel: info["binds"] for rel, info in flat.items() if "binds" in info}, shared)
    by_unit: dict[str, dict[str, list]] = {}
    for place, asked in requests.items():
        by_unit.setdefault(unit_of[place], {})[place] = [
            [importer, unit_of[importer], bound, name, imported_from, [[file, unit_of[file]] for file in looked_in]]
            for importer, bound, name, imported_from, looked_in in asked]
    anchored: dict[str, list] = {}
    installs = {rel: info["installs"] for rel, info in flat.items() if info.get("installs")}
    installed = installed_files(installs, flat) if installs else {}
    follows: dict = {}      # each file's imports by name, for every file's anchors
    linked: dict[str, list] = {}
    for unit, entry in inputs.items():
        files = {}
        for rel in entry:
            links = resolved.get(rel, {"deps": [], "used_by": []})
            if rel in names:    # the page links what its source names, and lists where its definitions are used
                links["names"] = names[rel]
            if rel in places:
                links["uses"] = places[rel]
            links["test_users"] = [user for user in links["used_by"] if user in tests]
            links["indirect_test_users"] = _indirect_tests(rel, resolved, tests, set(links["test_users"]))
            links["anchors"] = _anchors(links, flat[rel], lambda path: flat.get(path, {}).get("defines", {}),
                                        lambda path: resolved.get(path, {}).get("deps", []), unit, unit_of, anchored,
                                        follows)
            if rel in installed:   # the rules that need the build files' word: ``installed = true``
                build, line = installed[rel]
                links["installed_by"] = [build, line]
                links["findings"] = rules.installed_findings(rel, flat[rel]["language"], build, line)
            files[rel] = links
        # Main Definitions' ranking, apart from the links so that a new use re-renders no file page
        importance = {rel: {"users": len(files[rel]["used_by"]), "names": uses.get(rel, {})} for rel in entry}
        linked[unit] = [files, importance, by_unit.get(unit, {})]
    return {"units": linked, "anchored": {rel: [owner, sorted(users), _defines_digest(flat[rel])]
                                          for rel, (owner, users) in sorted(anchored.items())}}


ANCHORED_PART = "anchored"      # the part of a links entry that is the link meta's ``anchored``


def _link_bodies(linked: dict, units: list[str]) -> Iterator[tuple[str, bytes]]:
    """Each unit's link shards as (``kind/unit``, the bytes ``save_shard`` writes before its seal):
    what a links entry holds beside the link meta's ``anchored``, written as they are."""
    for unit in units:
        for kind, files in zip((LINKS, IMPORTANCE, LINK_REQUESTS), linked["units"][unit]):
            yield f"{kind}/{unit}", output.compact_json({"files": files, "unit": unit}, sort_keys=True)


class SharedLinks:
    """The whole tree's links in the shared cache, keyed by every unit's link inputs, the include
    roots, kwdocs' code and the rules: a fresh clone of a tree linked before links nothing."""

    def __init__(self, config: Config, inputs: dict[str, dict], digests: dict[str, list[str]], rules: str) -> None:
        """``digests``: each unit's ``_import_digest`` and ``_definitions_digest`` (linking made them)."""
        from kwdocs.store import cache

        self.cache = cache.shared_cache(config)
        self.units = list(inputs)
        made_from = digest(self.units, [digests[unit] for unit in self.units], list(config.include_roots),
                           code_fingerprint(), rules)
        self.claims = {"kind": "links", "key": cache.entry_key("links", made_from), "inputs": made_from}
        # the parts a links entry of this tree names: each unit's three shards and ``anchored``
        self.parts = {ANCHORED_PART} | {f"{kind}/{unit}" for unit in self.units
                                        for kind in (LINKS, IMPORTANCE, LINK_REQUESTS)}
        self.found: dict[str, bytes] | None = None
        self.anchored: dict = {}
        assert self.cache is not None
        data = self.cache.get_many([self.claims["key"]]).get(self.claims["key"])
        if data is None:
            return
        try:
            bodies = cache.decode_parts(data, self.claims, self.cache.key)
            anchored = orjson.loads(bodies.get(ANCHORED_PART, b""))    # a JSONDecodeError is a ValueError
            if bodies.keys() != self.parts or not isinstance(anchored, dict):
                raise ValueError("its links are not this tree's")
            self.found, self.anchored = bodies, anchored
        except ValueError as error:
            cache.ignored(error, f"cache entry {self.claims['key'][:16]} of the tree's links ignored ({error}); "
                                 "linked again")

    def store(self, bodies: dict[str, bytes]) -> int:
        from kwdocs.store import cache

        if self.cache is None:
            return 0
        return self.cache.put_many({self.claims["key"]: cache.encode_parts(self.claims, bodies, self.cache.key)})


def _moved_definitions(config: Config, moved: list[str], fresh_inputs: dict[str, dict]) -> list[str] | None:
    """After an edit that changed no import, only definitions: the names other files import
    from the ``moved`` units' files, looked for again; the units whose link shards changed.
    None when a name is now found in another file than before (or in none, or now in one):
    then where each definition is used changes too, and the whole tree is linked again."""
    from kwdocs.extract.links import chain_definition

    defs_of: dict[str, dict[str, dict]] = {}

    def defs(unit: str) -> dict[str, dict]:
        if unit not in defs_of:
            inputs = fresh_inputs.get(unit) or _stored_link_inputs(config, unit)
            defs_of[unit] = {rel: info.get("defs", {}) for rel, info in inputs.items()}
        return defs_of[unit]

    links_of: dict[str, dict] = {}
    seen: set[tuple[str, str]] = set()
    for unit in moved:
        asked = load_shard(config, LINK_REQUESTS, unit, strict=True).get("files")
        if not isinstance(asked, dict):
            return None
        for requests in asked.values():
            for importer, importer_unit, bound, name, imported_from, looked_in in requests:
                if (importer, bound) in seen:
                    continue
                seen.add((importer, bound))
                found = chain_definition([file for file, _ in looked_in], name, imported_from,
                                         {file: defs(place_unit).get(file, {}) for file, place_unit in looked_in})
                if importer_unit not in links_of:
                    links_of[importer_unit] = load_shard(config, LINKS, importer_unit, strict=True).get("files", {})
                before = links_of[importer_unit].get(importer, {}).get("names", {}).get(bound)
                if not isinstance(before, list) or len(before) != 2 or _definer(before) != _definer(found):
                    return None
                before[1] = found[1]
    return [unit for unit, files in links_of.items() if save_shard(config, LINKS, unit, {"files": files})]


def _definer(found: list) -> str | None:
    """The file that defines a name as ``chain_definition`` found it (None: none does)."""
    return found[0] if found[1] is not None else None


def _anchors(links: dict, info: dict, defines_of: Callable[[str], dict], deps_of: Callable[[str], list],
             unit: str, unit_of: Mapping[str, str], anchored: dict[str, list], follows: dict) -> dict[str, list[str]]:
    """A file's ``definition_anchors``, noting in ``anchored`` (file -> [its unit, units whose
    anchors it may decide]) every file they were looked for in; ``follows``: their ``index``."""
    from kwdocs.extract.links import definition_anchors

    reached: set[str] = set()
    anchors = definition_anchors(links.get("deps", []), uses_and_mentions(info), defines_of, deps_of, reached, follows)
    for place in reached:
        if place in unit_of:
            anchored.setdefault(place, [unit_of[place], set()])[1].add(unit)
    return anchors


def _defines_digest(info: dict) -> str:
    """A short digest of a file's top-level definitions, to tell which files an edit moved them in."""
    return digest(info.get("defines"))[:16]


def _anchor_again(config: Config, moved: list[str], fresh_inputs: dict[str, dict],
                  anchored: dict[str, list]) -> list[str]:
    """After an edit that changed definitions but no import: the anchors of the units that look
    for definitions in a file whose definitions changed, in their link shards (``anchored``:
    file -> [its unit, those units, a digest of its definitions], brought up to date here);
    the units whose shards changed."""
    inputs = dict(fresh_inputs)
    links_of: dict[str, dict] = {}

    def unit_inputs(unit: str) -> dict:
        if unit not in inputs:
            inputs[unit] = _stored_link_inputs(config, unit)
        return inputs[unit]

    def unit_links(unit: str) -> dict:
        if unit not in links_of:
            links_of[unit] = load_shard(config, LINKS, unit, strict=True).get("files", {})
        return links_of[unit]

    def defines_of(rel: str) -> dict:
        owner = anchored.get(rel)
        return unit_inputs(owner[0]).get(rel, {}).get("defines", {}) if owner else {}

    def deps_of(rel: str) -> list:
        owner = anchored.get(rel)
        return unit_links(owner[0]).get(rel, {}).get("deps", []) if owner else []

    from kwdocs.extract.links import definition_anchors

    affected: set[str] = set()
    follows: dict = {}
    for unit in moved:
        for rel, info in inputs[unit].items():
            entry = anchored.get(rel)
            if entry is not None and entry[2] != (now := _defines_digest(info)):
                affected.update(entry[1])
                entry[2] = now
    for unit in sorted(affected):      # all worked out before any is saved: a damaged record saves none
        for rel, links in unit_links(unit).items():
            info = unit_inputs(unit).get(rel, {})
            links["anchors"] = definition_anchors(links.get("deps", []), uses_and_mentions(info),
                                                  defines_of, deps_of, set(), follows)
    return [unit for unit in sorted(affected) if save_shard(config, LINKS, unit, {"files": unit_links(unit)})]


def _indirect_tests(rel: str, resolved: dict[str, dict], tests: set[str], direct: set[str]) -> list[list[str]]:
    """``[test, package]`` for the tests that reach ``rel`` only through packages re-exporting
    it (a test imports ``pkg``, whose ``__init__.py`` imports ``pkg/core.py``), sorted."""
    from kwdocs.extract.links import REEXPORT_DEPTH
    found: dict[str, str] = {}
    seen = {rel}
    packages = [user for user in resolved.get(rel, {}).get("used_by", []) if user.endswith("__init__.py")]
    for _ in range(REEXPORT_DEPTH):
        following = []
        for package in packages:
            if package in seen:
                continue
            seen.add(package)
            for user in resolved.get(package, {}).get("used_by", []):
                if user in tests and user not in direct and user != rel:
                    found.setdefault(user, package)
                elif user.endswith("__init__.py"):
                    following.append(user)
        packages = following
    return [[test, package] for test, package in sorted(found.items())]


# ---------------------------------------------------------------- render

@recovering
@collector_paused()
def render_unit(config: Config, unit: str, folder_names: list[str], rels: list[str]) -> dict:
    """Render the pages of the unit's files whose inputs changed; remove pages of gone files."""
    plan = render_plan(config, unit, folder_names, rels)
    facts_by_file, links, related_of, new_manifest = plan.facts, plan.links, plan.related, plan.keys
    renderer = renderer_for(config)
    formats = formats_for(config)
    mask = rules_for(config).mask_secrets
    written = removed = html_written = html_removed = 0
    todo = plan.todo
    unsettled: list[str] = []      # changed since extracted: their pages are left as they are
    remote = cluster_pages(config, unit) if todo else None
    shared = SharedPages(config, {rel: new_manifest[rel] for rel in todo}) if config.cache and todo else None
    with _offering_tokens(config, unit, facts_by_file, todo):
        for rel in todo:
            facts = facts_by_file[rel]
            texts: Mapping[str, str | bytes] | None = remote.texts(config, rel, new_manifest[rel]) \
                if remote is not None else None
            if texts is None and shared is not None:
                texts = shared.found.get(rel)
            if texts is None:
                try:
                    data = page_source(config, facts)
                except ChangedSinceExtracted:
                    unsettled.append(rel)
                    continue
                view = pages.source_view(config, facts, data, mask)
                texts = pages.file_pages(config, renderer, facts, links.get(rel), related_of[rel], view, formats)
            if shared is not None and rel not in shared.found and facts.get("sha256"):
                shared.made[rel] = cast(dict[str, str], texts)     # rendered here or on the cluster: text
            for page, text in texts.items():
                markdown, other = _write_page(config, page, text)
                written += markdown
                html_written += other
    for rel in sorted(set(plan.manifest) - set(new_manifest)):
        gone = _remove_file_pages(config, rel)
        removed += gone[0]
        html_removed += gone[1]
    # the manifest names the key each file's pages on disk were rendered from: an unsettled file
    # keeps the key of its pages of before, if any (the tasks' ``rendered_all`` runs it again)
    recorded = dict(new_manifest)
    for rel in unsettled:
        if rel in plan.manifest:
            recorded[rel] = plan.manifest[rel]
        else:
            del recorded[rel]
    save_shard(config, PAGES, unit, {"files": recorded})
    counts = {"written": written, "removed": removed, "html_written": html_written, "html_removed": html_removed,
              "files": len(facts_by_file), UNSETTLED: len(unsettled)}
    if shared is None and not config.scheduler:
        return counts
    from kwdocs.store.cache import report
    return counts | {"cache_stored": shared.store() if shared else 0, **report(),
                     "cluster_rendered": remote.used if remote else 0}


UNSETTLED = "unsettled"     # render_unit's count of files whose pages wait for their next extraction


class RenderPlan(NamedTuple):
    """What ``render_unit`` needs of a unit: its facts, links, each file's related files, the key
    each file's pages are rendered from (``keys``), the keys of the last build (``manifest``),
    and the files whose key changed (``todo``)."""

    facts: dict[str, Facts]
    links: dict[str, dict]
    related: dict[str, dict]
    keys: dict[str, str]
    manifest: dict[str, str]
    todo: list[str]


def keyword_pages_key(config: Config) -> str:
    """What the keyword pages depend on besides the keyword entries: the other formats' keys
    too, so that turning the site on renders every keyword page (not made from its Markdown)."""
    return "".join([render_key(config, pages.KEYWORDS_TEMPLATE), *(each.key() for each in formats_for(config))])


def folder_pages_keys(config: Config) -> list[str]:
    """What every folder's pages depend on besides the folder's files (see ``keyword_pages_key``)."""
    return [render_key(config, name) for name in pages.FOLDER_TEMPLATES] + [each.key() for each in formats_for(config)]


def file_page_keys(config: Config) -> list[str]:
    """What every file page depends on besides its own inputs: templates, settings, code."""
    return [render_key(config, name) for name in pages.FILE_TEMPLATES] + [extraction_key(config)] + [
        output_format.key() for output_format in formats_for(config)]


def page_key(facts: Facts, links: dict | None, related: dict, keys: list[str]) -> str:
    """The key a file's pages are rendered from: they are the same whenever it is."""
    return digest(facts_identity(facts), links, related, keys)


def render_plan(config: Config, unit: str, folder_names: list[str], rels: list[str],
                facts: dict[str, Facts] | None = None) -> RenderPlan:
    """The unit's ``RenderPlan``, from its state (``facts``: the unit's, when the caller has them)."""
    facts_by_file = facts if facts is not None else unit_facts(config, unit, rels)
    links = load_shard(config, LINKS, unit, strict=True).get("files", {})
    if links.keys() != facts_by_file.keys():
        raise StateDamaged(f"the links of {unit or '.'} are not those of its files")
    manifest = load_shard(config, PAGES, unit, strict=True).get("files", {})
    keys = file_page_keys(config)
    siblings = model.siblings_of(tuple(folder_names))
    new_manifest: dict[str, str] = {}
    related_of: dict[str, dict] = {}
    for rel, file_facts in sorted(facts_by_file.items()):
        related_of[rel] = siblings.related(rel, links.get(rel))
        new_manifest[rel] = page_key(file_facts, links.get(rel), related_of[rel], keys)
    todo = sorted(rel for rel, key in new_manifest.items() if manifest.get(rel) != key)
    return RenderPlan(facts_by_file, links, related_of, new_manifest, manifest, todo)


class ChangedSinceExtracted(Exception):
    """A source that no longer holds the bytes its facts were made from (a checkout, a save
    between the extract and render steps): its pages wait for the build that extracts it again."""


def page_source(config: Config, facts: Facts) -> bytes | None:
    """As much of a file as its page shows, of the very content its facts describe; None for a
    binary or unreadable one.  Raises ``ChangedSinceExtracted`` when the file now holds other
    bytes or is gone: a page rendered from them beside those facts would be recorded as the
    page of the facts' content, and stay when the file goes back to it (issue 31)."""
    if not facts.get("sha256") or facts.get("binary"):
        return None
    try:    # the whole file, hashed: the facts' hash is of the whole file
        source = read_head(source_path(config, facts["path"]), pages.source_bytes_shown(config))
    except PermissionError:
        return None     # readable when extracted: its page says it is unreadable, as before
    except OSError as error:
        raise ChangedSinceExtracted(facts["path"]) from error
    if source.sha256 != facts["sha256"]:
        raise ChangedSinceExtracted(facts["path"])
    return source.head


def cluster_pages(config: Config, unit: str):
    """What a Dask worker rendered of the unit's files (``kwdocs.engine.cluster``), when this
    build runs on a cluster."""
    if not config.scheduler or remote_pages is None:
        return None
    return remote_pages(config, unit)


def _write_page(config: Config, page: str, text: str | bytes) -> tuple[int, int]:
    """Write a page (named from the output folder) unless it holds ``text`` already: the
    Markdown pages and the other formats' pages written (1 and 0, 0 and 1, or 0 and 0)."""
    # named as text: a Path for each of a cold build's pages took longer than checking it
    wrote = int(output.write_if_changed(config.out, os.path.join(config.out, page), text))
    return (wrote, 0) if page.endswith(".md") else (0, wrote)


def _remove_file_pages(config: Config, rel: str) -> tuple[int, int]:
    """Remove the pages of a file that went away, in every format: (Markdown pages, others) removed."""
    counts = [0, 0]
    for page in (layout.docs_page(rel), layout.kw_page(rel)):
        for form in written_forms(config, page):
            counts[form != page] += output.remove(config.out, config.out / form)
    return counts[0], counts[1]


class _SharedPageSets:
    """Sets of pages in the shared cache, an entry each (a file's pages, a folder's): fetched in
    one batch, each entry used only if it names exactly the pages it is for, and those made
    here stored in one batch.  ``what`` names an owner of pages in the line about a bad entry."""

    what, ignored, redone = "file", "ignored", "rendered again"

    def __init__(self, config: Config, claims: dict[str, dict[str, str]], expected: Callable[[str], set[str]]) -> None:
        from kwdocs.store import cache

        self.cache = cache.shared_cache(config)
        self.claims = claims
        self.found: dict[str, dict[str, bytes]] = {}      # each page's bytes, written as they are
        self.made: dict[str, dict[str, str]] = {}
        by_key = {claim["key"]: owner for owner, claim in claims.items()}
        assert self.cache is not None
        for key, data in self.cache.get_many(list(by_key)).items():
            owner = by_key[key]
            try:
                texts = cache.decode_parts(data, claims[owner], self.cache.key)
                if set(texts) != expected(owner):       # an entry never names a page elsewhere
                    raise ValueError(f"its pages are not this {self.what}'s")
                self.found[owner] = texts
            except ValueError as error:
                cache.ignored(error, f"{owner or '.'}: cache entry {key[:16]} {self.ignored} ({error}); {self.redone}")

    def store(self) -> int:
        from kwdocs.store import cache

        if self.cache is None:
            return 0
        return self.cache.put_many({self.claims[owner]["key"]: cache.encode_parts(
            self.claims[owner], {page: text.encode("utf-8") for page, text in texts.items()}, self.cache.key)
            for owner, texts in self.made.items()})


class SharedPages(_SharedPageSets):
    """A unit's file pages in the shared cache, by the key that decides whether they are rendered
    again (facts, links, neighbours, templates, settings) and the link from a page to its
    source (which depends on where the output folder is): fetched in one batch before
    rendering, and those rendered here stored in one batch after it."""

    def __init__(self, config: Config, keys: dict[str, str]) -> None:
        from kwdocs.store import cache

        claims = {}
        for rel, key in keys.items():
            source = pages.source_link(config, layout.kw_page(rel), rel)
            claims[rel] = {"kind": "pages", "key": cache.entry_key("pages", rel, key, source), "path": rel,
                           "render": key, "source": source}
        super().__init__(config, claims, lambda rel: file_page_paths(config, rel))


# ---------------------------------------------------------------- a whole tree's pages

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
    from kwdocs.store import cache

    return {"kind": "outputs", "key": cache.entry_key("outputs", inputs), "inputs": inputs}


def share_outputs(config: Config, files: dict[str, tuple[int, int]], problems: list) -> int:
    """After a full build: the SHA-256 of every Markdown page kwdocs wrote, stored in the shared
    cache under ``outputs_inputs``, so that ``kwdocs check`` on a fresh clone of the same tree
    compares the pages with them instead of building (``expected_outputs``).  ``files``: the
    scan's (size, modification time) of each file.  Nothing is stored unless every file's hash
    (from the build's ``SEEN`` records) and every page's (from the journal) is known."""
    from kwdocs.store import cache, journal

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
            cache.decode(stored, claims, shared.key)
            return 0
        except ValueError:
            pass    # damaged: made again below
    entries = journal.load(config)
    expected = written_pages(config)
    if not expected or not all(page in entries for page in expected):
        return 0
    return shared.put_many({claims["key"]: cache.encode(claims, {page: entries[page][0] for page in expected},
                                                        shared.key)})


def expected_outputs(config: Config, scanned_files: list[str], folders: list[str], problems: list,
                     hashes: dict[str, str]) -> dict[str, str] | None:
    """What ``share_outputs`` stored for this tree (``hashes``: each file's SHA-256): every Markdown
    page kwdocs writes -> its SHA-256; None when the cache has no such entry, or one that fails
    its checks (said in one line)."""
    from kwdocs.store import cache

    shared = cache.shared_cache(config)
    if shared is None:
        return None
    claims = _outputs_claims(outputs_inputs(config, hashes, problems))
    found = shared.get_many([claims["key"]]).get(claims["key"])
    if found is None:
        return None
    try:
        digests = cache.decode(found, claims, shared.key)
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


def owned_keyword_page(page: str) -> bool:
    """Whether ``page`` is named as a keyword page (at the top of the output)."""
    from kwdocs.store.owned import KEYWORD_PAGE

    return KEYWORD_PAGE.fullmatch(page) is not None


# ---------------------------------------------------------------- keywords

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
    updates: dict[str, dict[str, keywords.Entries]] = {}   # letter -> unit -> its entries (none: drop)
    for unit in units:
        if unit in known and unit not in changed_set:
            continue
        letters = _stored_keyword_entries(config, unit)
        digests = {letter: hashed for letter, (_, hashed, _) in letters.items()}
        for letter in set(digests) | set(known.get(unit, {})):
            if digests.get(letter) != known.get(unit, {}).get(letter):
                updates.setdefault(letter, {})[unit] = (
                    (letters[letter][0], letters[letter][2]) if letter in letters else (0, "[]"))
        known[unit] = digests
    for unit in sorted(set(known) - set(units)):
        for letter in known.pop(unit):
            updates.setdefault(letter, {})[unit] = (0, "[]")

    def table_of(letter: str) -> dict[str, keywords.Entries]:
        """A letter's table, unit -> its entries, as the last build left it."""
        if fresh:
            return {}
        path = keyword_table(config, letter)
        if letter in meta.get("counts", {}) and output.read_state(path) is None:
            raise StateDamaged(f"{path} is missing")
        return keywords.read_table(path, strict=True)

    kept: dict[str, dict[str, keywords.Entries]] = {}     # tables updated here that a page still needs
    for letter, changes in sorted(updates.items()):
        table = table_of(letter)
        for unit, entries in changes.items():
            if entries[0]:
                table[unit] = entries
            else:
                table.pop(unit, None)
        counts[letter] = sum(count for count, _ in table.values())
        if not counts[letter]:
            counts.pop(letter)
        output.write_sealed(config.out, keyword_table(config, letter), keywords.table_text(table).encode("utf-8"))
        kept[letter] = table
    updates.clear()
    all_letters = keywords.sorted_letters(set(counts))
    split = sum(counts.values()) > keywords.SPLIT_THRESHOLD
    everything_again = fresh or not split or meta.get("letters") != all_letters or meta.get("split") != split
    to_render = set(all_letters) if everything_again else set(kept) & set(all_letters)

    def entries_of(letter: str) -> list[list]:
        table = kept.pop(letter, None) or table_of(letter)
        return [entry for unit in sorted(table) for entry in orjson.loads(table[unit][1])]

    def cached_rows(page: str) -> pages.RowCache:
        """The rows a page had (each checked against its places before it is used again)."""
        stored = {} if fresh else output.read_json(_rows_path(config, page), {})
        return stored if isinstance(stored, dict) else {}

    written = html_written = 0
    if everything_again or kept:
        for page, text, rows in pages.keyword_pages(config, renderer, entries_of, counts, to_render, cached_rows,
                                                    formats):
            markdown, other = _write_page(config, page, text)
            written += markdown
            html_written += other
            if rows is not None:   # in page order, which is deterministic: no sorting 15,000 names
                output.write_json(config.out, _rows_path(config, page), rows, sort_keys=False)
    wanted = {layout.keywords_page()} | ({layout.keywords_page(letter) for letter in all_letters} if split else set())
    removed = html_removed = 0
    for page in sorted(set(meta.get("pages", [])) - wanted):
        removed += output.remove(config.out, config.out / page)
        html_removed += _remove_other_forms(config, page)
        for form in written_forms(config, page):
            output.remove(config.out, _rows_path(config, form))
    output.write_json(config.out, config.state / KEYWORDS_META, {"key": key, "units": known, "counts": counts,
                                                      "letters": all_letters, "split": split,
                                                      "pages": sorted(wanted)})
    return {"written": written, "removed": removed, "html_written": html_written, "html_removed": html_removed}


def _rows_path(config: Config, page: str) -> Path:
    """Where the rows of a keyword page (in any format: ``site/keywords-A.html``) are kept."""
    return keyword_rows(config, posixpath.basename(page))


def _remove_other_forms(config: Config, md_page: str) -> int:
    """Remove ``md_page``'s pages in the formats other than Markdown; returns how many went."""
    return sum(output.remove(config.out, config.out / page) for page in written_forms(config, md_page)
               if page != md_page)


def _stored_keyword_entries(config: Config, unit: str) -> dict[str, list]:
    """A unit's keyword entries as extraction left them (made again from its facts if lost or damaged)."""
    stored = load_shard(config, KEYWORD_ENTRIES, unit)
    if not keywords.valid_letters(stored.get("letters")):
        stored = {"letters": keywords.unit_letters(stored_facts(config, unit))}
        save_shard(config, KEYWORD_ENTRIES, unit, stored)
    return stored["letters"]


# ---------------------------------------------------------------- assemble

@recovering
@collector_paused()
def assemble(config: Config, folder_units: dict[str, list[str]], all_folders: list[str],
             changed: list[str]) -> dict:
    """Write the index.md and doc.md of folders whose content changed.

    Only folders whose files changed, or whose subfolders' counts changed, are
    looked at: the rest keep their pages without being read.  Folder pages come
    from what extraction saved, so this step runs beside the rendering of file
    pages; pruning what is gone waits for that (``prune``).
    """
    renderer = renderer_for(config)
    formats = formats_for(config)
    keys = folder_pages_keys(config)
    meta_path = config.state / FOLDERS_META
    meta = output.read_json(meta_path, {}, strict=True) or {}
    fresh = meta.get("keys") != keys
    page_keys: dict[str, str] = {} if fresh else meta.get("pages", {})
    shapes: dict[str, str] = {} if fresh else meta.get("shapes", {})
    known_units: dict[str, list[str]] = {} if fresh else meta.get("units", {})
    problems: dict[str, list] = {} if fresh else meta.get("problems", {})
    all_units = [unit for units in folder_units.values() for unit in units]
    changed_set = changed_units(config, all_units, changed)
    if changed:   # another file's new use of a name may reorder a folder's Main Definitions
        changed_paths = set(changed)
        changed_set.update(unit for unit in all_units if shard_path(config, IMPORTANCE, unit) in changed_paths)
    counts = dict(meta.get("counts", {})) if not fresh else {}
    stale = dict.fromkeys(folder for folder, units in folder_units.items()   # folders whose files changed
                          if fresh or known_units.get(folder) != units or any(unit in changed_set for unit in units))
    emptied = set(known_units) - set(folder_units)   # folders that lost all their own files
    parts_by_folder: dict[str, list[dict]] = {folder: [] for folder in emptied}
    for folder in stale:
        parts_by_folder[folder] = _folder_parts(config, folder_units[folder], problems)
        counts[folder] = sum(data["part"]["files"] for data in parts_by_folder[folder])
    counts = {folder: counts.get(folder, 0) for folder in folder_units}
    subfolders, totals = pages.folder_tree(counts, all_folders)
    # an edit that adds no file leaves every folder's shape as it was: skip hashing 650 of them
    same_tree = not fresh and counts == meta.get("counts") and shapes.keys() == set(all_folders)
    written = removed = html_written = html_removed = 0
    new_keys: dict[str, str] = {}
    new_shapes: dict[str, str] = {}
    todo: dict[str, tuple[list[str], list[dict], dict[str, dict]]] = {}    # folder -> units, parts, importance
    for folder in all_folders:
        shape = shapes[folder] if same_tree else digest(subfolders[folder], totals[folder])
        new_shapes[folder] = shape
        if folder not in stale and folder not in emptied and folder in page_keys and shapes.get(folder) == shape:
            new_keys[folder] = page_keys[folder]
            continue
        units = folder_units.get(folder, [])
        if folder not in parts_by_folder:
            parts_by_folder[folder] = _folder_parts(config, units, problems)
        parts = parts_by_folder[folder]
        importance = _importance(config, units)
        key = digest(folder, [data["digest"] for data in parts], importance, subfolders[folder], totals[folder], keys)
        new_keys[folder] = key
        if page_keys.get(folder) != key:
            todo[folder] = (units, parts, importance)
    # a first build (a fresh clone) asks the shared cache for every folder's pages at once
    shared = SharedFolders(config, {folder: new_keys[folder] for folder in todo}) if config.cache and fresh \
        and todo else None
    for folder, (units, parts, importance) in todo.items():
        texts: Mapping[str, str | bytes] | None = shared.found.get(folder) if shared is not None else None
        if texts is None:
            file_rows, row_items = _index_rows(config, renderer, units, parts, keys[0], keep=len(units) > 1,
                                               fresh=fresh)
            texts = pages.folder_pages(config, renderer, folder, file_rows, [data["part"] for data in parts],
                                       subfolders[folder], totals[folder], importance, formats, row_items)
            if shared is not None:
                shared.made[folder] = texts
        for page, text in texts.items():
            markdown, other = _write_page(config, page, text)
            written += markdown
            html_written += other
    for folder in sorted(set(page_keys) - set(new_keys)):
        for page in (layout.index_page(folder), layout.doc_page(folder)):
            removed += output.remove(config.out, config.out / page)
            html_removed += _remove_other_forms(config, page)
    live_units = {unit for units in folder_units.values() for unit in units}
    problems = {unit: found for unit, found in problems.items() if unit in live_units}
    output.write_json(config.out, meta_path, {"keys": keys, "pages": new_keys, "shapes": new_shapes,
                                              "units": folder_units, "counts": counts, "problems": problems})
    flat = sorted((entry for found in problems.values() for entry in found), key=lambda p: (p[0], p[1] or 0, p[2]))
    output.write_json(config.out, config.state / PROBLEMS, flat)
    counts = {"written": written, "removed": removed, "html_written": html_written, "html_removed": html_removed}
    if shared is None:
        return counts
    from kwdocs.store.cache import report
    return counts | {"cache_stored": shared.store(), **report()}


class SharedFolders(_SharedPageSets):
    """Folders' pages in the shared cache, each by the key that decides whether they are made
    again (its units' summary rows, the counts of uses, its subfolders, templates, settings and
    code): fetched in one batch by a first build, and those made here stored in one batch.
    (A folder split into units then keeps no rendered rows of its units: an edit there renders
    that folder's rows once.)"""

    what, ignored, redone = "folder", "of the folder's pages ignored", "made again"

    def __init__(self, config: Config, keys: dict[str, str]) -> None:
        from kwdocs.store import cache

        super().__init__(config, {folder: {"kind": "folder", "key": cache.entry_key("folder", folder, key),
                                           "path": folder, "render": key} for folder, key in keys.items()},
                         lambda folder: folder_page_paths(config, folder))


def folder_page_paths(config: Config, folder: str) -> set[str]:
    """Every page a build writes for ``folder`` (its index and doc pages), in every format."""
    own = (layout.index_page(folder), layout.doc_page(folder))
    return {*own, *(output_format.page_path(page) for output_format in formats_for(config) for page in own)}


def _folder_parts(config: Config, units: list[str], problems: dict[str, list]) -> list[dict]:
    """Each unit's digest of its summary rows, problems and ``model.folder_part``, as extraction
    left them (made again from the unit's facts if lost or damaged); notes each unit's problems.

    An edit in a large folder changes one unit's part: the folder's pages are
    remade from its units' small parts and the rows of one unit, not from every row.
    """
    found = []
    for unit in units:
        data = load_shard(config, FOLDER_PARTS, unit)
        part = data.get("part")
        if not (isinstance(data.get("digest"), str) and isinstance(data.get("problems"), list)
                and isinstance(part, dict) and model.is_folder_part(part)):
            data = _remade_rows(config, unit)[1]
        problems[unit] = data["problems"]
        found.append(data)
    return found


def _importance(config: Config, units: list[str]) -> dict[str, dict]:
    """What linking counted of the units' files (``{name: {"users": n, "names": {name: n}}}``).
    Only linking, which sees the whole tree, can count them again: a lost or damaged shard
    starts the state over."""
    found: dict[str, dict] = {}
    for unit in units:
        files = load_shard(config, IMPORTANCE, unit, strict=True).get("files")
        if not isinstance(files, dict) or not all(
                isinstance(counts, dict) and isinstance(counts.get("names"), dict)
                and isinstance(counts.get("users"), int) for counts in files.values()):
            raise StateDamaged(f"the counts of uses of {unit or '.'} are missing or damaged")
        for rel, counts in files.items():
            found[rel.rpartition("/")[2]] = counts
    return found


def _stored_rows(config: Config, unit: str) -> list[dict]:
    """A unit's summary rows (sorted by path), as extraction left them or made again."""
    rows = load_shard(config, ROWS, unit).get("rows")
    return rows if isinstance(rows, list) else _remade_rows(config, unit)[0]["rows"]


def _remade_rows(config: Config, unit: str) -> tuple[dict, dict]:
    rows, part = _unit_rows(stored_facts(config, unit))
    save_shard(config, ROWS, unit, rows)
    save_shard(config, FOLDER_PARTS, unit, part)
    return rows, part


def _index_rows(config: Config, renderer, units: list[str], parts: list[dict], key: str, keep: bool,
                fresh: bool) -> tuple[list[str], list[tuple[str, list]]]:
    """A folder index's file rows as rendered, in path order, and each row's file name and what
    it shows (``model.file_row_inputs``), which the other formats render their rows from.

    A folder split into units (``keep``) keeps each unit's rows as rendered
    (``FILE_ROWS``), good while the unit's summary rows (their digest) and the
    template (``key``) are unchanged: an edit in a large folder renders
    again the rows it changed and reads the others as text.
    """
    named: list[tuple[str, str, list]] = []
    for unit, data in zip(units, parts):
        stored = load_shard(config, FILE_ROWS, unit) if keep and not fresh else {}
        usable = _usable_file_rows(stored, key)
        if usable is not None and stored.get("digest") == data["digest"]:
            names, inputs, texts = usable
        else:
            cached = {name: [*shown, text] for name, shown, text in zip(*usable)
                      if isinstance(name, str) and isinstance(shown, list)} if usable is not None else {}
            names, inputs, texts = pages.folder_file_rows(renderer, _stored_rows(config, unit), cached)
            if keep:
                save_shard(config, FILE_ROWS, unit, {"key": key, "digest": data["digest"], "names": names,
                                                     "inputs": inputs, "rows": texts})
        named.extend(zip(names, texts, inputs))
    named.sort(key=lambda row: row[0])     # names are unique in a folder
    return [text for _, text, _ in named], [(name, shown) for name, _, shown in named]


def _usable_file_rows(stored: dict, key: str) -> tuple[list[str], list[list], list[str]] | None:
    """A ``FILE_ROWS`` shard's names, what each row shows and the rows, if it was made under
    ``key`` and has their shape (state can be damaged by hand), else None."""
    names, inputs, texts = stored.get("names"), stored.get("inputs"), stored.get("rows")
    if stored.get("key") == key and isinstance(names, list) and isinstance(inputs, list) \
            and isinstance(texts, list) and len(names) == len(inputs) == len(texts) \
            and all(isinstance(text, str) for text in names + texts):
        return names, inputs, texts
    return None


def _unit_rows(files: dict[str, Facts]) -> tuple[dict, dict]:
    """What folder pages need of a unit's files: the ``ROWS`` shard (its summary rows) and the
    ``FOLDER_PARTS`` shard (their digest, the unit's part of the folder's doc.md, its problems)."""
    ordered = sorted(files.items())
    rows = [pages.summary_row(facts) for _, facts in ordered]
    return {"rows": rows}, {"digest": digest(rows), "part": model.folder_part(rows),
                            "problems": [[rel, problem.get("line"), problem["message"]]
                                         for rel, facts in ordered for problem in facts.get("problems", [])]}


@recovering
def prune(config: Config, folder_units: dict[str, list[str]]) -> dict:
    """After rendering: remove the pages and state of units that went away.

    Pruning reads every state folder, so it runs only when the units differ
    from those of the last prune, or kwdocs' code changed (a new version may
    leave state files of an older one behind).
    """
    meta_path = config.state / PRUNED
    record = {"code": code_fingerprint(), "units": digest(folder_units)}
    if output.read_json(meta_path) == record:
        return {"removed": 0}
    removed = prune_units(config, folder_units)
    output.write_json(config.out, meta_path, record)
    return {"removed": removed}




def prune_units(config: Config, folder_units: dict[str, list[str]]) -> int:
    """Remove the pages and state of units that no longer hold files (and state files of
    earlier versions: a new kwdocs starts afresh, which always prunes).

    A file of a gone unit may live on in another unit of its folder (a folder split into
    buckets as it grew, or merged back into one unit): its pages stay.
    """
    for pattern in EARLIER:     # the whole tree's link inputs, a JSON document per keyword letter
        for path in sorted(config.state.glob(pattern)):
            output.remove(config.out, path)
    live_units = {unit for units in folder_units.values() for unit in units}
    held: dict[str, set[str]] = {}     # folder -> the files its live units hold, read when needed

    def still_held(rel: str) -> bool:
        folder = folder_of(rel)
        if folder not in held:
            held[folder] = {name for unit in folder_units.get(folder, [])
                            for name in load_shard(config, PAGES, unit, strict=True).get("files", {})}
        return rel in held[folder]

    removed = 0
    live_names = {layout.state_name(unit) for unit in live_units}   # read only the shards of no live unit
    for kind in (PAGES, FACTS, LINKS, LINK_INPUTS, KEYWORD_ENTRIES, ROWS, FOLDER_PARTS, FILE_ROWS, SEEN, IMPORTANCE,
                 LINK_REQUESTS):
        folder = config.state / kind
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            if path.name in live_names:
                continue
            data = output.read_json(path, {}, strict=kind == PAGES)
            unit = data.get("unit") if isinstance(data, dict) else None
            if unit in live_units:
                continue
            if kind == PAGES:
                for rel in sorted(rel for rel in data.get("files", {}) if not still_held(rel)):
                    removed += _remove_file_pages(config, rel)[0]
            output.remove(config.out, path)
    folder = config.state / TOKENS     # named by their unit: gone with it
    live_tokens = {tokens_shard(config, unit) for unit in live_units}
    for path in sorted(folder.glob("*" + TOKENS_SUFFIX)) if folder.is_dir() else ():
        if path not in live_tokens:
            output.remove(config.out, path)
    return removed

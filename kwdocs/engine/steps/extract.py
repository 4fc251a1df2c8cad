"""The extract step: each unit's facts (what its files define and import), read again only
when a file's content changed, from the shared cache or a Dask worker when there are."""
from __future__ import annotations

import contextlib
import time

from kwdocs import languages, sources
from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.build_session import LOCAL, BuildSession
from kwdocs.engine.steps.common import (
    SOURCES_STAMP,
    Lookup,
    Read,
    _stat,
    _unit_rows,
    extraction_key,
    recovering,
    sources_stamp,
)
from kwdocs.engine.steps.link_inputs import _link_inputs
from kwdocs.engine.steps.shared import SharedFacts
from kwdocs.extract import ctags, extract_bytes
from kwdocs.extract.decode import decode, is_binary
from kwdocs.facts import Facts, Problem
from kwdocs.pages import compose as pages, keywords
from kwdocs.rules.ruleset import rules_for
from kwdocs.sources import Source, source_path
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import (
    FACTS,
    FOLDER_PARTS,
    KEYWORD_ENTRIES,
    LINK_INPUTS,
    ROWS,
    SEEN,
    load_shard,
    save_shard,
    tokens_shard,
)


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
        source = read if read is not None else sources.read_head(source_path(config, rel), pages.ANALYSE_LIMIT,
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


def unit_facts(config: Config, unit: str, rels: list[str]) -> dict[str, Facts]:
    """The unit's facts, made again here when they are missing, damaged, of other files or of
    other code: doit's records only say when to extract, never that the facts are there."""
    shard = load_shard(config, FACTS, unit)
    files = shard.get("files")
    if shard.get("key") != extraction_key(config) or not isinstance(files, dict) or files.keys() != set(rels):
        extract_unit(config, unit, rels, [])
        files = load_shard(config, FACTS, unit, strict=True).get("files", {})
    return files



@recovering
@collector_paused()
def extract_unit(config: Config, unit: str, rels: list[str], changed: list[str],
                 session: BuildSession = LOCAL) -> dict:
    """Bring the unit's facts shard up to date (``session``: the build's, see ``build_session``).

    doit's ``changed`` is not trusted with what to keep (after a killed build doit
    knows nothing and says nothing changed): a file's facts are kept when its size
    and time stamp are those it had when they were made (``SEEN``); otherwise it
    is read, and its content hash decides whether it is extracted again.
    """
    key = extraction_key(config)
    previous, kept, now_seen = vouched_facts(config, unit, rels)
    redo = [rel for rel in rels if rel not in kept]
    remote = session.remote_facts(config, unit) if redo else None
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
    # what the extract task's ``uptodate`` compares the files with next time (``tasks.SourcesUnchanged``)
    stamp = {"files": len(rels), "extracted": extracted, SOURCES_STAMP: sources_stamp(config, rels, now_seen)}
    if shared is None and not config.scheduler:
        return stamp
    # the shared cache's module only for a build that has one (or a cluster)
    from kwdocs.store.cache import cache_report
    return {**stamp, "cache_hits": len(shared.used) if shared else 0,
            "cache_stored": stored, **cache_report(), "cluster_extracted": remote.used if remote else 0}


def _recording_tokens(config: Config, redo: list[str]) -> contextlib.AbstractContextManager:
    """``tokens.recording()`` in an HTML build with files to extract; else nothing (None)."""
    if not (config.html and redo):
        return contextlib.nullcontext()
    # the site's token store only for an --html build
    from kwdocs.site import tokens
    return tokens.recording(config.max_source_bytes)


def _save_tokens(config: Config, unit: str, files: dict[str, Facts], recorded: dict) -> None:
    """Keep the tokens just recorded of the unit's files that are highlighted as recorded (their
    fence's), beside those kept of its other files (each proves itself by its text's digest)."""
    # the site's token store only for an --html build
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
    # the site's token store only for an --html build
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


def _prefetch_tags(config: Config, rels: list[str]) -> None:
    """One ctags process for the unit's files of the languages ctags reads (by name; a file
    known by its ``#!`` line alone gets its own), instead of one per file."""
    wanted = [rel for rel in rels if languages.language_of(rel).module == languages.CTAGS]
    if not wanted or ctags.executable() is None:
        return
    heads = {}
    for rel in wanted:
        try:
            heads[rel] = sources.read_source(source_path(config, rel), pages.ANALYSE_LIMIT + 1)
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

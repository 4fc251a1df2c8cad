"""The steps' adapters to the shared cache (``kwdocs.store.cache``): facts, links, file pages and
folder pages, fetched and stored in batches."""
from __future__ import annotations

import time
from collections.abc import Callable

import orjson

from kwdocs import layout, sources
from kwdocs.config import Config
from kwdocs.engine.steps.common import Read, digest, extraction_key, folder_page_paths
from kwdocs.engine.steps.link_inputs import ANCHORED_PART
from kwdocs.facts import Facts, as_facts
from kwdocs.formats import file_page_paths
from kwdocs.pages import compose as pages
from kwdocs.sources import Source, source_path
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import IMPORTANCE, LINK_REQUESTS, LINKS


class SharedFacts:
    """A unit's files' facts in the shared cache (``kwdocs.store.cache``): fetched in one batch
    before extraction, and those extracted here stored in one batch after it."""

    def __init__(self, config: Config, rels: list[str]) -> None:
        # only a build with a shared cache makes an adapter
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
                source = sources.read_head(path, pages.ANALYSE_LIMIT)
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
                facts = as_facts(cache.decode_entry(data, self.claims(key, rel), self.cache.key))
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
        # only a build with a shared cache makes an adapter
        from kwdocs.store import cache

        if self.cache is None:
            return 0
        entries = {}
        for rel, sha256 in self.hashes.items():
            facts = files.get(rel)
            if rel in self.used or facts is None or facts.get("sha256") != sha256 or rel not in seen:
                continue
            key = cache.entry_key("facts", rel, sha256, self.key)
            entries[key] = cache.encode_entry(self.claims(key, rel), facts, self.cache.key)
        return self.cache.put_many(entries)


class SharedLinks:
    """The whole tree's links in the shared cache, keyed by every unit's link inputs, the include
    roots, kwdocs' code and the rules: a fresh clone of a tree linked before links nothing."""

    def __init__(self, config: Config, units: list[str], digests: dict[str, list[str]], rules: str) -> None:
        """``digests``: each unit's ``_import_digest`` and ``_definitions_digest`` (linking made them)."""
        # only a build with a shared cache makes an adapter
        from kwdocs.store import cache

        self.cache = cache.shared_cache(config)
        self.units = list(units)
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
        # only a build with a shared cache makes an adapter
        from kwdocs.store import cache

        if self.cache is None:
            return 0
        return self.cache.put_many({self.claims["key"]: cache.encode_parts(self.claims, bodies, self.cache.key)})


class _SharedPageSets:
    """Sets of pages in the shared cache, an entry each (a file's pages, a folder's): fetched in
    one batch, each entry used only if it names exactly the pages it is for, and those made
    here stored in one batch.  ``what`` names an owner of pages in the line about a bad entry."""

    what, ignored, redone = "file", "ignored", "rendered again"

    def __init__(self, config: Config, claims: dict[str, dict[str, str]], expected: Callable[[str], set[str]]) -> None:
        # only a build with a shared cache makes an adapter
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
        # only a build with a shared cache makes an adapter
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
        # only a build with a shared cache makes an adapter
        from kwdocs.store import cache

        claims = {}
        for rel, key in keys.items():
            source = pages.source_link(config, layout.kw_page(rel), rel)
            claims[rel] = {"kind": "pages", "key": cache.entry_key("pages", rel, key, source), "path": rel,
                           "render": key, "source": source}
        super().__init__(config, claims, lambda rel: file_page_paths(config, rel))


class SharedFolders(_SharedPageSets):
    """Folders' pages in the shared cache, each by the key that decides whether they are made
    again (its units' summary rows, the counts of uses, its subfolders, templates, settings and
    code): fetched in one batch by a first build, and those made here stored in one batch.
    (A folder split into units then keeps no rendered rows of its units: an edit there renders
    that folder's rows once.)"""

    what, ignored, redone = "folder", "of the folder's pages ignored", "made again"

    def __init__(self, config: Config, keys: dict[str, str]) -> None:
        # only a build with a shared cache makes an adapter
        from kwdocs.store import cache

        super().__init__(config, {folder: {"kind": "folder", "key": cache.entry_key("folder", folder, key),
                                           "path": folder, "render": key} for folder, key in keys.items()},
                         lambda folder: folder_page_paths(config, folder))

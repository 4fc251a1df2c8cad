"""The whole tree linked a unit at a time: what one file's links read of the others is kept for
every file in a slim form (languages, top-level names, the imports that reach a file of the
tree), while each unit's import records wait in a spill file until the whole tree's paths are
known, and each file's resolved imports, as the bytes its links shard holds, until its unit's
shards are made.  Holding every file's import records and inputs as read bounded the link
step's peak."""
from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import orjson

from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.steps.link_inputs import _definitions_digest, _import_digest, interned_inputs, interned_names
from kwdocs.engine.steps.relink import basis_digest
from kwdocs.extract.links import ImportResolver, definition_links, name_uses, reexports
from kwdocs.languages import RESOLVERS, resolver
from kwdocs.store import writer as output

# what other files' links read of a resolved import (``reexports``, ``name_uses``,
# ``definition_links``, the anchors' walk): an import that reaches no file of the tree is read by none
_SLIM = ("target", "module", "names", "name_targets", "package", "line")


SPILL = "link-spill"   # in the state folder while the whole tree is linked (``Spill``)
DEFINED = "\1"    # the spill's key of a unit's definitions, before the unit's name
OWN = "\0"    # the spill's key of a unit's part that only its own links read, before the unit's name
NAMES, USES = "names", "uses"    # the spill's parts of a file's ``definition_links`` names and uses


class TreeInputs:
    """Every unit's link inputs read once (``read``: a unit's inputs by file), keeping of each
    file what linking it or another file reads besides its imports, which wait in ``spill``;
    and each unit's digests for the link meta."""

    def __init__(self, units: list[str], read: Callable[[str], dict[str, dict]], spill: Spill) -> None:
        self.units, self.spill = units, spill
        self.languages: dict[str, str] = {}
        self.unit_of: dict[str, str] = {}
        self.files: dict[str, list[str]] = {}     # each unit's files
        self.defs: dict[str, dict] = {}
        self.defines: dict[str, dict] = {}
        self.binds: dict[str, dict] = {}
        self.uses: dict[str, list] = {}
        self.tests: set[str] = set()
        self.installs: dict[str, list] = {}
        # the imports of files a language's own resolver reads (a tsconfig's paths, a go.mod's module)
        self.resolver_imports: dict[str, list] = {}
        self.digests: dict[str, str] = {}
        self.definitions: dict[str, str] = {}
        how: dict[str, object] = {}
        for unit in units:
            inputs = read(unit)
            self.files[unit] = list(inputs)
            self.digests[unit], self.definitions[unit] = _import_digest(inputs), _definitions_digest(inputs)
            for rel, info in inputs.items():
                language = self.languages[rel] = sys.intern(info["language"])
                self.unit_of[rel] = unit
                if "binds" in info:     # kept for the whole tree: one string object per name, as ``torch.Tensor``
                    self.binds[rel] = interned_inputs({"binds": info["binds"]})["binds"]
                if info.get("uses"):
                    self.uses[rel] = interned_names(info["uses"])
                if info["test"]:
                    self.tests.add(rel)
                if info.get("installs"):
                    self.installs[rel] = info["installs"]
                if language not in how:
                    how[language] = resolver(language)
                if how[language] not in RESOLVERS and info["imports"]:
                    self.resolver_imports[rel] = info["imports"]
            spill.put(unit, orjson.dumps({rel: info["imports"] for rel, info in inputs.items()}))
            # its definitions: read back once the imports tell which files a walk may reach
            spill.put(DEFINED + unit, orjson.dumps({rel: [info.get("defs"), info.get("defines")] for rel, info
                                                    in inputs.items() if "defs" in info or "defines" in info}))
            # what only its own links read: read back at its turn (``own_inputs``)
            spill.put(OWN + unit, orjson.dumps({
                rel: [info.get("uses", []), info.get("mentions", []), basis_digest(info), info.get("binds", {}),
                      info.get("bases", []), info.get("defs", {}) if info.get("bases") else {}]
                for rel, info in inputs.items()}))

    def python(self) -> list[str]:
        """The tree's Python files, sorted (the link meta's ``python``)."""
        return sorted(rel for rel, language in self.languages.items() if resolver(language) == "python")


SIZE_BITS = 40     # a spilled body's size, below its start in ``Spill.places``
SIZE_MASK = (1 << SIZE_BITS) - 1


class Spill:
    """Bytes set aside by key, in a file of the state folder whose name is removed as soon as it
    is open (gone when closed, or when the process ends, even killed), or in memory during a dry
    run, which writes nothing."""

    def __init__(self, config: Config) -> None:
        self.file: IO[bytes] = io.BytesIO()
        # part -> key -> where its bytes are: start << SIZE_BITS | size, one int (a tuple of two
        # was a tenth of the link step's peak on a large tree)
        self.places: dict[str, dict[str, int]] = {}
        self.end: int | None = 0     # where the next bytes go, None after a read moved away from there
        self.path: Path | None = None      # a name the system kept while the file was open
        if not output.dry_running():
            path = config.state / SPILL
            try:
                self.file = open(path, "w+b")  # noqa: SIM115 - ``close`` closes it
            except OSError:
                return    # a state folder that takes no file: held in memory, as the dry run does
            try:
                path.unlink()
            except OSError:
                self.path = path     # a system that keeps an open file's name: removed when closed

    def put(self, key: str, body: bytes, part: str = "") -> None:
        """``body`` set aside under ``key`` of ``part`` (a file's path in several parts: no new key)."""
        if self.end is None:     # a seek flushes the writes waiting: only after a read
            self.end = self.file.seek(0, io.SEEK_END)
        self.places.setdefault(part, {})[key] = self.end << SIZE_BITS | len(body)
        self.end += self.file.write(body)

    def take(self, key: str, part: str = "") -> bytes:
        """The bytes set aside under ``key`` of ``part``, let go."""
        where = self.places[part].pop(key)
        self.end = None
        self.file.seek(where >> SIZE_BITS)
        return self.file.read(where & SIZE_MASK)

    def parts(self, key: str, parts: tuple[str, ...]) -> dict[str, bytes]:
        """The bytes set aside under ``key`` in each of ``parts`` that has some, let go."""
        return {part: self.take(key, part) for part in parts if key in self.places.get(part, ())}

    def close(self) -> None:
        self.file.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def resolve_tree(config: Config, tree: TreeInputs, spill: Spill) -> dict[str, dict]:
    """The whole tree's imports resolved a unit at a time from ``spill``, each file's resolved
    imports set aside there again (by its path) as its links shard writes them; what every
    file's links may read of the others: per file its imports that reach a file of the tree
    (``deps``, slim) and the files importing it (``used_by``), in path order as
    ``resolve_links`` gives them."""
    resolution = ImportResolver(tree.languages, tree.resolver_imports, config.include_roots, in_place=True)
    slim: dict[str, list[dict]] = {}
    same: dict[tuple[str, str], dict] = {}
    with collector_paused():  # the new records would set off full collections
        for unit in tree.units:
            for rel, imports in orjson.loads(spill.take(unit)).items():
                deps = resolution.deps(rel, imports) if imports and isinstance(imports, list) else []
                spill.put(rel, output.compact_json(deps, sort_keys=True))
                reaching = [_slim(dep, same) for dep in deps if dep.get("target")]
                if reaching:
                    slim[rel] = reaching
    tree.resolver_imports = {}
    used_by = resolution.used_by
    return {rel: {"deps": slim.get(rel, []), "used_by": sorted(used_by.get(rel, ()))}
            for rel in sorted(slim.keys() | used_by.keys())}


def _slim(dep: dict, same: dict[tuple[str, str], dict]) -> dict:
    """What other files' links read of a resolved import, its module and names as one string
    object each.  An import that names nothing (an include, ``import pkg``) is read for its
    module and target alone: one record for all the files that import the same (``same``)."""
    names = dep.get("names")
    if not names and "name_targets" not in dep and "package" not in dep and isinstance(dep.get("module"), str):
        key = (dep["target"], dep["module"])
        if key not in same:
            same[key] = {"target": sys.intern(key[0]), "module": sys.intern(key[1])}
        return same[key]
    slim = {key: dep[key] for key in _SLIM if key in dep}
    for field in ("target", "module"):    # a file's path, as many times as it is imported: one object
        if isinstance(slim.get(field), str):
            slim[field] = sys.intern(slim[field])
    if isinstance(names, list):
        slim["names"] = interned_names(names)
    return slim


def shared_links(tree: TreeInputs, resolved: dict[str, dict]) -> tuple[dict, dict]:
    """What each file's links take from the whole tree's: counts of the names it may define used
    (``name_uses``), and ``definition_links``' requests; its names and uses go to the spill (parts
    ``NAMES`` and ``USES``, as the links shard writes them) as they are made.  Of the tree's
    definitions only those of files an import reaches are read back from the spill: no walk reads
    the others'."""
    reached = set(_reached(resolved))
    for unit in tree.units:
        for rel, (defs, defines) in orjson.loads(tree.spill.take(DEFINED + unit)).items():
            if rel in reached:
                if defs is not None:
                    tree.defs[rel] = defs
                if defines is not None:
                    tree.defines[rel] = defines
    shared = reexports(resolved)
    uses = name_uses(resolved, tree.uses, shared)
    tree.uses = {}
    _, _, requests = definition_links(resolved, tree.defs, tree.binds, shared,
                                      lambda part, rel, value: tree.spill.put(rel, _sorted_json(value), part))
    tree.defs, tree.binds = {}, {}
    return uses, requests


def _sorted_json(value: object) -> bytes:
    """``value`` as ``compact_json`` writes it with sorted keys."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:    # what orjson refuses (an integer past 64 bits)
        return output.compact_json(value, sort_keys=True)


def _reached(resolved: dict[str, dict]) -> Iterator[str]:
    """Every file an import of the tree reaches: the only ones whose definitions a walk reads."""
    for links in resolved.values():
        for dep in links["deps"]:
            yield dep["target"]
            if "package" in dep:
                yield dep["package"]
            yield from (dep.get("name_targets") or {}).values()


def links_body(unit: str, files: dict[str, dict], spilled: dict[str, dict[str, bytes]]) -> bytes:
    """A unit's links shard as ``compact_json`` makes it, each file's parts in ``spilled`` (its
    resolved imports, names and uses, as the spill holds them: file -> key -> bytes) written in
    as they are, never read back as data."""
    for rel, parts in spilled.items():
        files[rel].update((key, orjson.Fragment(body)) for key, body in parts.items())
    try:
        return orjson.dumps({"files": files, "unit": unit}, option=orjson.OPT_SORT_KEYS)
    except TypeError:   # what orjson refuses (an integer past 64 bits) goes through ``json``, as compact_json does
        for rel, parts in spilled.items():
            files[rel].update((key, json.loads(body)) for key, body in parts.items())
        return output.compact_json({"files": files, "unit": unit}, sort_keys=True)

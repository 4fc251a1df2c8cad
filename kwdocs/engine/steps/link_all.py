"""The whole tree linked a unit at a time: what one file's links read of the others is kept for
every file in a slim form (languages, top-level names, the imports that reach a file of the
tree), while each unit's own inputs and resolved imports wait in a spill file until its shards
are made.  Holding every file's import records and inputs as read bounded the link step's peak."""
from __future__ import annotations

import io
import sys
import tempfile
from collections.abc import Callable
from typing import IO

import orjson

from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.steps.link_inputs import _definitions_digest, _import_digest, interned_inputs, interned_names
from kwdocs.extract.links import ImportResolver, definition_links, name_uses, reexports
from kwdocs.languages import RESOLVERS, resolver
from kwdocs.store import writer as output

# what other files' links read of a resolved import (``reexports``, ``name_uses``,
# ``definition_links``, the anchors' walk): an import that reaches no file of the tree is read by none
_SLIM = ("target", "module", "names", "name_targets", "package", "line")


class TreeInputs:
    """Every unit's link inputs read once (``read``: a unit's inputs by file), keeping of each
    file what linking another file may read of it, and each unit's digests for the link meta."""

    def __init__(self, units: list[str], read: Callable[[str], dict[str, dict]]) -> None:
        self.units, self.read = units, read
        self.languages: dict[str, str] = {}
        self.unit_of: dict[str, str] = {}
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
            self.digests[unit], self.definitions[unit] = _import_digest(inputs), _definitions_digest(inputs)
            for rel, info in inputs.items():
                language = self.languages[rel] = info["language"]
                self.unit_of[rel] = unit
                if "defs" in info:
                    self.defs[rel] = info["defs"]
                if "defines" in info:
                    self.defines[rel] = info["defines"]
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

    def python(self) -> list[str]:
        """The tree's Python files, sorted (the link meta's ``python``)."""
        return sorted(rel for rel, language in self.languages.items() if resolver(language) == "python")


class Spill:
    """Each unit's part as bytes, in an unnamed file of the state folder (gone when closed, or
    when the process ends), or in memory during a dry run, which writes nothing."""

    def __init__(self, config: Config) -> None:
        self.file: IO[bytes] = io.BytesIO()
        if not output.dry_running():
            try:
                self.file = tempfile.TemporaryFile(dir=config.state)  # noqa: SIM115 - ``close`` closes it
            except OSError:
                pass    # a state folder that takes no file: held in memory, as the dry run does
        self.places: dict[str, tuple[int, int]] = {}

    def put(self, key: str, data: object) -> None:
        body = orjson.dumps(data)
        self.places[key] = (self.file.seek(0, io.SEEK_END), len(body))
        self.file.write(body)

    def take(self, key: str) -> object:
        start, size = self.places.pop(key)
        self.file.seek(start)
        return orjson.loads(self.file.read(size))

    def close(self) -> None:
        self.file.close()


def resolve_tree(config: Config, tree: TreeInputs, spill: Spill) -> dict[str, dict]:
    """The whole tree's imports resolved a unit at a time, each unit's inputs with its files'
    resolved imports (as ``imports``) set aside in ``spill``; what every file's links may read
    of the others: per file its imports that reach a file of the tree (``deps``, slim) and the
    files importing it (``used_by``), in path order as ``resolve_links`` gives them."""
    resolution = ImportResolver(tree.languages, tree.resolver_imports, config.include_roots, in_place=True)
    slim: dict[str, list[dict]] = {}
    same: dict[tuple[str, str], dict] = {}
    with collector_paused():  # the new records would set off full collections
        for unit in tree.units:
            inputs = tree.read(unit)
            for rel, info in inputs.items():
                imports = info["imports"]
                deps = resolution.deps(rel, imports) if imports and isinstance(imports, list) else []
                info["imports"] = deps
                reaching = [_slim(dep, same) for dep in deps if dep.get("target")]
                if reaching:
                    slim[rel] = reaching
            spill.put(unit, inputs)
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
            same[key] = {"target": key[0], "module": sys.intern(key[1])}
        return same[key]
    slim = {key: dep[key] for key in _SLIM if key in dep}
    if isinstance(slim.get("module"), str):
        slim["module"] = sys.intern(slim["module"])
    if isinstance(names, list):
        slim["names"] = interned_names(names)
    return slim


def shared_links(tree: TreeInputs, resolved: dict[str, dict]) -> tuple[dict, dict, dict, dict]:
    """What each file's links take from the whole tree's: counts of the names it may define used
    (``name_uses``), and ``definition_links``' names, uses and requests; the tree's names
    and definitions ``definition_links`` alone reads are let go."""
    shared = reexports(resolved)
    uses = name_uses(resolved, tree.uses, shared)
    tree.uses = {}
    names, places, requests = definition_links(resolved, tree.defs, tree.binds, shared)
    tree.defs, tree.binds = {}, {}
    return uses, names, places, requests

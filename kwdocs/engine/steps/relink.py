"""The link step's incremental path for an edit that changed imports: only the edited files'
import records are resolved again, and a change that leaves every resolved import where it was
(an import of the standard library added, lines moved) rewrites only what holds their lines.
For an edit that changed definitions: which files' look-ups for them are made again."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from kwdocs.config import Config
from kwdocs.engine.steps.common import digest
from kwdocs.extract.links import resolve_links, uses_and_mentions
from kwdocs.languages import RESOLVERS, resolver
from kwdocs.store.state import LINK_REQUESTS, LINKS, load_shard, save_shard

# what a file's resolved imports answer for apart from its imports and definitions: with these
# the same and its imports reaching the same files, no other file's links read it differently
_NOT_BASIS = ("imports", "defs", "defines", "binds")


def link_basis(info: dict, deps: list[dict]) -> list:
    """What a file's stored links were made from besides its import lines, to prove them again:
    a digest of its link inputs but imports and definitions, and the names its imports of files
    of the tree bind (``binds`` restricted to what ``definition_links`` asks of them)."""
    return [basis_digest(info), bound_names(info.get("binds", {}), deps)]


def basis_digest(info: dict) -> str:
    """The first part of ``link_basis``: a digest of a file's link inputs but imports and definitions."""
    return digest({key: value for key, value in info.items() if key not in _NOT_BASIS})[:24]


def bound_names(binds: Mapping[str, str], deps: list[dict]) -> dict[str, str]:
    """The second part of ``link_basis``: the names ``binds`` gives the imports of files of the tree."""
    asked: set[str] = set()
    for dep in deps:
        if dep.get("target"):
            module = dep.get("module") or ""
            asked.add(module)
            asked.update(f"{module}.{name}" for name in dep.get("names") or () if isinstance(name, str))
    return {key: binds[key] for key in sorted(asked) if key in binds}


_RESOLVED = ("target", "category", "name_targets", "package")     # what resolving adds to an import record


def _record(dep: dict) -> dict:
    """The import record a resolved import was made from."""
    return {key: value for key, value in dep.items() if key not in _RESOLVED}


def _shape(dep: dict) -> dict:
    """A resolved import but its line: what other files' links read of it."""
    return {key: value for key, value in dep.items() if key != "line"}


def relink_imports(config: Config, changed: Sequence[str], inputs: Mapping[str, dict],
                   unit_files: Mapping[str, Sequence[str]], python: Sequence[str]) -> list[str] | None:
    """Link again only the files of the ``changed`` units (their fresh ``inputs``) whose import
    records changed, when every import of theirs that reaches a file of the tree still reaches
    the same one in the same order (imports of files outside the tree may come and go) and
    nothing else their links were made from changed (``link_basis``, kept in the units' link
    requests shards): then their own ``deps`` are made again and the lines of their imports in
    the ``uses`` of the files defining what they import are moved.  ``unit_files``: the tree's
    files by unit, ``python``: its Python files (the file list the imports are resolved
    against).  The units whose links shards changed; None when the whole tree must be linked."""
    unit_of = {rel: unit for unit, rels in unit_files.items() for rel in rels}
    links_of: dict[str, dict] = {}

    def unit_links(unit: str) -> dict:
        if unit not in links_of:
            files = load_shard(config, LINKS, unit, strict=True).get("files")
            links_of[unit] = files if isinstance(files, dict) else {}
        return links_of[unit]

    todo: dict[str, dict] = {}
    for unit in changed:
        old, basis = unit_links(unit), load_shard(config, LINK_REQUESTS, unit).get("basis")
        if not isinstance(basis, dict) or old.keys() != inputs[unit].keys():
            return None
        for rel, info in inputs[unit].items():
            deps = old[rel].get("deps")
            if not isinstance(deps, list) or not isinstance(stored := basis.get(rel), list) or len(stored) != 2:
                return None
            if stored[0] != link_basis(info, [])[0] or resolver(info["language"]) not in RESOLVERS:
                return None
            if [_record(dep) for dep in deps] != info["imports"]:
                todo[rel] = info
            elif bound_names(info.get("binds", {}), deps) != stored[1]:
                return None
    if not todo:
        return []
    languages = dict.fromkeys(unit_of, "")      # only whether a file is Python decides another's import
    languages.update(dict.fromkeys(python, "python"))
    languages.update((rel, info["language"]) for rel, info in todo.items())
    resolved = resolve_links(languages, {rel: info["imports"] for rel, info in todo.items()}, config.include_roots)
    touched: set[str] = set()
    for rel, info in todo.items():
        unit = unit_of[rel]
        links = unit_links(unit)[rel]
        new = resolved[rel]["deps"]
        before = [dep for dep in links["deps"] if dep.get("target")]
        after = [dep for dep in new if dep.get("target")]
        if [_shape(dep) for dep in before] != [_shape(dep) for dep in after] or \
                bound_names(info.get("binds", {}), after) != load_shard(config, LINK_REQUESTS, unit)["basis"][rel][1]:
            return None
        moved = _line_map(before, after)
        if moved is None:
            return None
        links["deps"] = new
        touched.add(unit)
        if any(old != now for old, now in moved.items()) and not _move_uses(rel, links, moved, unit_of, unit_links,
                                                                           touched):
            return None
    return [unit for unit in sorted(touched) if save_shard(config, LINKS, unit, {"files": links_of[unit]})]


def _line_map(before: list[dict], after: list[dict]) -> dict[int, int] | None:
    """Each import line of ``before`` -> its line in ``after`` (as ``uses`` records them, 1 for
    none), when the lines keep their order; else None (a ``uses`` list cut at its limit could
    then list other imports)."""
    moved: dict[int, int] = {}
    for old, new in zip(before, after):
        if moved.setdefault(old.get("line") or 1, new.get("line") or 1) != (new.get("line") or 1):
            return None
    pairs = sorted(moved.items())
    if any(a[1] >= b[1] for a, b in pairwise(pairs)):
        return None
    return moved


def _move_uses(rel: str, links: dict, moved: dict[int, int], unit_of: Mapping[str, str], unit_links,
               touched: set[str]) -> bool:
    """In the ``uses`` of the files defining what ``rel`` imports, its import lines moved;
    False when one is not found where the links say (then the whole tree is linked)."""
    for place in sorted({found[0] for found in links.get("names", {}).values()
                         if isinstance(found, list) and len(found) == 2 and found[1] is not None and found[0] != rel}):
        if place not in unit_of:
            return False
        uses = unit_links(unit_of[place]).get(place, {}).get("uses", {})
        for entry in uses.values():
            at = entry["at"]
            for index, (user, line) in enumerate(at):
                if user == rel:
                    if line not in moved:
                        return False
                    at[index] = [user, moved[line]]
            at.sort()
        touched.add(unit_of[place])
    return True


def lost_anchor(anchors: dict[str, list], changed: dict[str, dict]) -> bool:
    """Whether an anchor of a file is into one of the ``changed`` files (file -> its definitions
    now) under a name it no longer defines: its walk must be made again."""
    return any(found[0] in changed and name.rpartition(".")[2] not in changed[found[0]]
               for name, found in anchors.items())


def may_find_anew(anchors: dict[str, list], deps: list[dict], info: dict, renamed: dict[str, set[str]]) -> bool:
    """Whether a name a file imports or mentions has a part that a file whose names changed
    (``renamed``: name -> those of them defining it) defines, where the file did not find it:
    a name added there may be where its walk ends now.  Otherwise its anchors only move with
    their definitions."""
    names = [*uses_and_mentions(info), *(f"{dep.get('module', '')}.{name}" for dep in deps
                                        for name in dep.get("names", ()) if name != "*")]
    for name in names:
        for part in name.split("."):
            if (owners := renamed.get(part)) is not None and (name not in anchors or owners != {anchors[name][0]}):
                return True
    return False

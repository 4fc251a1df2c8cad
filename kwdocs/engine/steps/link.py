"""The link step: which file each import names and its users, with the anchors cross-references
link to, redone for the whole tree from each unit's link inputs."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson

from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.steps.common import changed_units, digest, recovering, stored_facts
from kwdocs.engine.steps.link_all import NAMES, OWN, USES, Spill, TreeInputs, links_body, resolve_tree, shared_links
from kwdocs.engine.steps.link_inputs import (
    ANCHORED_PART,
    _definitions_digest,
    _import_digest,
    _link_inputs,
    interned_inputs,
)
from kwdocs.engine.steps.relink import bound_names, lost_anchor, may_find_anew, relink_imports
from kwdocs.engine.steps.shared import SharedLinks
from kwdocs.extract.links import (
    chain_definition,
    definer,
    definition_anchors,
    indirect_test_users,
    uses_and_mentions,
)
from kwdocs.pages.diagrams import resolved_bases
from kwdocs.rules.ruleset import RuleSet, rules_for
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import (
    IMPORTANCE,
    LINK_INPUTS,
    LINK_META,
    LINK_REQUESTS,
    LINKS,
    load_shard,
    save_shard,
    shard_path,
)


def _stored_link_inputs(config: Config, unit: str, intern: bool = True) -> dict[str, dict]:
    """A unit's link inputs as extraction left them (made again from its facts if lost or damaged);
    ``intern``: their shared names as one string object each (``interned_inputs``), for a caller
    that keeps them; linking the whole tree interns what it keeps of them itself."""
    stored = load_shard(config, LINK_INPUTS, unit)
    if not isinstance(stored.get("files"), dict):
        stored = {"files": _link_inputs(stored_facts(config, unit))}
        save_shard(config, LINK_INPUTS, unit, stored)
    if intern:
        for info in stored["files"].values():
            interned_inputs(info)
    return stored["files"]


@recovering
@collector_paused()
def link_tree(config: Config, units: list[str], changed: list[str],
              unit_files: Mapping[str, list[str]] | None = None) -> dict:
    """Resolve imports and includes across the tree; write the link shards that changed.

    Most edits change no import: then the digests of the changed units' link
    inputs match and nothing is recomputed, and an edit that only moves definitions
    sends the names other files import from them to their new lines
    (``_moved_definitions``).  An edit whose imports still reach the files they did
    relinks only the edited files (``relink_imports``; ``unit_files``: the tree's files
    by unit, without which the whole tree is linked).  Each unit's inputs are kept in a shard of their own,
    written only when they change (one file for the whole tree meant holding it twice
    over as text on every relink).
    """
    meta_path = config.state / LINK_META
    meta = output.read_json(meta_path, {}) or {}
    digests: dict[str, str] = meta.get("digests", {})
    definitions: dict[str, str] = meta.get("definitions", {})
    changed_set = changed_units(config, units, changed)
    rules = rules_for(config)
    fresh_inputs: dict[str, dict] = {}
    new_digests: dict[str, str] = {}
    new_definitions: dict[str, str] = {}
    imported: list[str] = []
    relinked: list[str] | None = None     # the units whose links ``relink_imports`` rewrote, None: link all
    if (set(digests) == set(units)
            and meta.get("roots") == list(config.include_roots) and meta.get("code") == code_fingerprint()
            and meta.get("rules") == rules.fingerprint()
            and isinstance(meta.get("anchored"), dict) and set(definitions) == set(units)
            and all(os.path.isfile(shard_path(config, kind, unit)) for unit in units
                    for kind in (LINKS, IMPORTANCE, LINK_REQUESTS))):
        # only the changed units' inputs are read here: linking the whole tree reads each unit's in turn
        fresh_inputs = {unit: _stored_link_inputs(config, unit) for unit in units if unit in changed_set}
        new_digests = {unit: _import_digest(inputs) for unit, inputs in fresh_inputs.items()}
        new_definitions = {unit: _definitions_digest(inputs) for unit, inputs in fresh_inputs.items()}
        imported = [unit for unit, value in new_digests.items() if digests[unit] != value]
        relinked = [] if not imported else relink_imports(config, imported, fresh_inputs, unit_files, meta["python"]) \
            if unit_files is not None and isinstance(meta.get("python"), list) else None
    if relinked is not None:
        meta["digests"] = digests | new_digests
        moved = [unit for unit, value in new_definitions.items() if definitions[unit] != value]
        if not moved:
            if imported:
                output.write_json(config.out, meta_path, dict(meta, rewritten=relinked))
            return {"link_shards": len(relinked)}
        # the imports are as they were: only where names from the moved units' files are defined changes
        rewritten = _moved_definitions(config, moved, fresh_inputs)
        anchored_again = set(moved)     # the units whose classes' bases may be found elsewhere now
        if rewritten is not None:
            try:
                rewritten = sorted(set(rewritten) | set(_anchor_again(config, moved, fresh_inputs, meta["anchored"],
                                                                      anchored_again)) | set(relinked))
            except (TypeError, IndexError, KeyError, AttributeError):
                rewritten = None     # a damaged record of where anchors were looked for: link it all
        if rewritten is not None:
            _refresh_classes(config, [unit for unit in rewritten if unit in anchored_again], fresh_inputs)
            output.write_json(config.out, meta_path, dict(meta, definitions=definitions | new_definitions,
                                                          rewritten=rewritten))
            return {"link_shards": len(rewritten)}
    spill = Spill(config)     # each unit's imports, then each file's resolved imports, until its shards are made
    tree = TreeInputs(units, lambda unit: fresh_inputs.pop(unit, None) or _stored_link_inputs(config, unit, False),
                      spill)
    # an unchanged unit keeps the digests its inputs had; a changed one's are made again
    new_digests = {unit: digests[unit] if unit in digests and unit not in changed_set else tree.digests[unit]
                   for unit in units}
    new_definitions = tree.definitions
    # the whole tree's links from the cache only without links of an earlier build (a fresh clone):
    # an edit that relinks would add an entry the size of all links for each tree it links
    shared = SharedLinks(config, units,
                         {unit: [new_digests[unit], new_definitions[unit]] for unit in units},
                         rules.fingerprint()) if config.cache and not digests else None
    made: Iterator[tuple[str, bytes]]
    if shared is not None and shared.found is not None:
        bodies, anchored = shared.found, shared.anchored
        spill.close()
        made = ((name, bodies[name]) for name in bodies if name != ANCHORED_PART)
    else:
        anchored = {}
        made = _link_all(config, tree, spill, rules, anchored)
        bodies = {ANCHORED_PART: b""} if shared is not None else {}     # its place first, its bytes once all are linked
    storing = shared is not None and shared.found is None
    rewritten = []
    for name, body in made:     # each written as it is made: all of them at once raised the step's peak
        kind, _, unit = name.partition("/")
        if (output.write_sealed(config.out, shard_path(config, kind, unit), body) or unit in (relinked or ())) \
                and kind == LINKS:     # the units ``relink_imports`` wrote before giving up are rewritten too
            rewritten.append(unit)
        if storing:
            bodies[name] = body
    if storing and shared is not None:
        bodies[ANCHORED_PART] = output.compact_json(anchored, sort_keys=True)
        shared.store(bodies)
    output.write_json(config.out, meta_path, {     # "rewritten": the units whose pages may need rendering again
        "digests": new_digests, "definitions": new_definitions, "anchored": anchored, "python": tree.python(),
        "roots": list(config.include_roots), "code": code_fingerprint(), "rules": rules.fingerprint(),
        "rewritten": rewritten})
    if shared is None:
        return {"link_shards": len(rewritten)}
    # the shared cache's module only for a build that has one
    from kwdocs.store.cache import cache_report
    return {"link_shards": len(rewritten), **cache_report()}


def _link_all(config: Config, tree: TreeInputs, spill: Spill, rules: RuleSet,
              anchored_out: dict) -> Iterator[tuple[str, bytes]]:
    """The whole tree linked, each unit's link shards (``_link_bodies``) as soon as they are made;
    once all are, ``anchored_out`` holds which files each unit's anchors were looked for in (as
    the link meta keeps it).  What a file's links read of the tree is kept for every file in a
    slim form, its resolved imports wait in ``spill`` (``link_all``)."""
    # only when the whole tree is linked: an edit's build links its own units
    from kwdocs.extract.cmake import installed_files

    try:   # the spill file is closed when the last unit is linked, or the step stops
        resolved = resolve_tree(config, tree, spill)
        uses, requests = shared_links(tree, resolved)
        unit_of = tree.unit_of
        anchored: dict[str, list] = {}
        installed = installed_files(tree.installs, tree.languages) if tree.installs else {}
        follows: dict = {}      # each file's imports by name, for every file's anchors
        defines, tests = tree.defines, tree.tests
        no_links: dict[str, list] = {"deps": [], "used_by": []}
        for unit in tree.units:
            rels = tree.files.pop(unit)
            files, importance, basis = {}, {}, {}
            spilled: dict[str, dict[str, bytes]] = {}    # what the links shard writes in as set aside
            own_inputs = orjson.loads(spill.take(OWN + unit))
            for rel in rels:
                own = resolved.get(rel, no_links)
                links: dict[str, Any] = {"used_by": own["used_by"]}
                # the page links what its source names, and lists where its definitions are used
                spilled[rel] = spill.parts(rel, (NAMES, USES))
                spilled[rel]["deps"] = spill.take(rel)
                links["test_users"] = [user for user in links["used_by"] if user in tests]
                links["indirect_test_users"] = indirect_test_users(rel, resolved, tests, set(links["test_users"]))
                uses_of, mentions, digested, binds, bases, defs = own_inputs[rel]
                if bases and NAMES in spilled[rel]:    # its classes' bases are found through its names
                    links["names"] = orjson.loads(spilled[rel].pop(NAMES))
                links["anchors"] = _anchors(own["deps"], [*uses_of, *mentions],
                                            lambda path: defines.get(path, {}),
                                            lambda path: resolved.get(path, no_links)["deps"], unit, unit_of,
                                            anchored, follows)
                if rel in installed:   # the rules that need the build files' word: ``installed = true``
                    build, line = installed[rel]
                    links["installed_by"] = [build, line]
                    links["findings"] = rules.installed_findings(rel, tree.languages[rel], build, line)
                files[rel] = links
                # Main Definitions' ranking, apart from the links so that a new use re-renders no file page
                importance[rel] = {"users": len(own["used_by"]), "names": uses.pop(rel, {}),
                                   **_diagram_facts(rel, dict(links, deps=own["deps"]),
                                                    {"bases": bases, "defs": defs})}
                basis[rel] = [digested, bound_names(binds, own["deps"])]
            # the names looked for in its files, with the units of the files named: made at its turn, as
            # a copy per file looked in (made for the whole tree at once, they raised the step's peak)
            asked = {place: [[importer, unit_of[importer], bound, name, imported_from,
                              [[file, unit_of[file]] for file in looked_in]]
                             for importer, bound, name, imported_from, looked_in in requests.pop(place)]
                     for place in rels if place in requests}
            yield f"{LINKS}/{unit}", links_body(unit, files, spilled)
            yield from _link_bodies(unit, importance, asked, basis)
    finally:
        spill.close()
    anchored_out.update((rel, [owner, sorted(users), *_defines_digest({"defines": defines.get(rel)})])
                        for rel, (owner, users) in sorted(anchored.items()))


def _diagram_facts(rel: str, links: dict, info: dict) -> dict[str, list]:
    """What a folder page's diagrams need of a file beside its counts of uses: the files of the
    tree it imports (``deps``) and its classes with each base's defining file, or None where
    no file of the tree defines it (``classes``); neither key when empty."""
    found: dict[str, list] = {}
    deps = sorted({dep["target"] for dep in links.get("deps", []) if dep.get("target") and dep["target"] != rel})
    if deps:
        found["deps"] = deps
    if info.get("bases"):
        found["classes"] = resolved_bases(rel, info["bases"], info.get("defs", {}), links)
    return found


def _refresh_classes(config: Config, units: list[str], fresh_inputs: dict[str, dict]) -> None:
    """After anchors moved without an import changing (``_anchor_again``), the classes' bases
    of ``units`` found again in their importance shards: a base re-exported from another file.
    Only the files bases are found in count, not their lines: anchors that only moved a line
    (and names found again in the same file) change none."""
    for unit in units:
        stored = load_shard(config, IMPORTANCE, unit)
        files, links = stored.get("files"), load_shard(config, LINKS, unit).get("files") or {}
        if not isinstance(files, dict):
            continue
        inputs = fresh_inputs.get(unit) or _stored_link_inputs(config, unit, False)   # read once, not kept
        for rel, counts in files.items():
            if inputs.get(rel, {}).get("bases") and isinstance(counts, dict):
                counts["classes"] = resolved_bases(rel, inputs[rel]["bases"], inputs[rel].get("defs", {}),
                                                   links.get(rel, {}))
        save_shard(config, IMPORTANCE, unit, stored)


def _link_bodies(unit: str, importance: dict, requests: dict, basis: dict) -> Iterator[tuple[str, bytes]]:
    """A unit's importance and link requests shards as (``kind/unit``, the bytes ``save_shard``
    writes before its seal), after its links shard (``links_body``)."""
    yield f"{IMPORTANCE}/{unit}", output.compact_json({"files": importance, "unit": unit}, sort_keys=True)
    # what each file's links were made from besides its imports, for ``relink_imports`` to prove them
    yield f"{LINK_REQUESTS}/{unit}", output.compact_json({"basis": basis, "files": requests, "unit": unit},
                                                         sort_keys=True)


def _moved_definitions(config: Config, moved: list[str], fresh_inputs: dict[str, dict]) -> list[str] | None:
    """After an edit that changed no import, only definitions: the names other files import
    from the ``moved`` units' files, looked for again; the units whose link shards changed.
    None when a name is now found in another file than before (or in none, or now in one):
    then where each definition is used changes too, and the whole tree is linked again."""
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
                if not isinstance(before, list) or len(before) != 2 or definer(before) != definer(found):
                    return None
                before[1] = found[1]
    return [unit for unit, files in links_of.items() if save_shard(config, LINKS, unit, {"files": files})]


def _anchors(deps: list[dict], uses: list[str], defines_of: Callable[[str], dict], deps_of: Callable[[str], list],
             unit: str, unit_of: Mapping[str, str], anchored: dict[str, list], follows: dict) -> dict[str, list[str]]:
    """A file's ``definition_anchors`` (``uses``: ``uses_and_mentions``), noting in ``anchored`` (file ->
    [its unit, units whose anchors it may decide]) every file they were looked for in; ``follows``: their
    ``index``."""
    reached: set[str] = set()
    anchors = definition_anchors(deps, uses, defines_of, deps_of, reached, follows)
    for place in reached:
        if place in unit_of:
            anchored.setdefault(place, [unit_of[place], set()])[1].add(unit)
    return anchors


def _defines_digest(info: dict) -> list[str]:
    """Short digests of a file's top-level definitions and of their names alone, to tell which
    files an edit moved them in, and whether it only moved them (``_anchor_again``)."""
    defines = info.get("defines") or {}
    return [digest(defines)[:16], digest(sorted(defines))[:16]]


def _anchor_again(config: Config, moved: list[str], fresh_inputs: dict[str, dict],
                  anchored: dict[str, list], worked_out: set[str]) -> list[str]:
    """After an edit that changed definitions but no import: the anchors of the units that look
    for definitions in a file whose definitions changed, in their link shards (``anchored``:
    file -> [its unit, those units, digests of its definitions and of their names], brought up to
    date here).  A file of those units whose walk may end elsewhere (an anchor of it names what is
    no longer defined there, or ``may_find_anew``) is walked again; the others' anchors into the changed
    files move with their definitions, the files they name staying the same.  Returns the units
    whose shards changed; ``worked_out`` gets the units with a file walked again (it may name
    other files now)."""
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


    follows: dict = {}
    changed: dict[str, dict] = {}      # files whose definitions changed -> their definitions now (name -> anchor)
    renamed: dict[str, set[str]] = {}  # each name of those whose names changed too -> those defining it
    users: set[str] = set()            # the units that look for definitions in them
    for unit in moved:
        for rel, info in inputs[unit].items():
            entry = anchored.get(rel)
            if entry is not None and entry[2:] != (now := _defines_digest(info)):
                changed[rel] = info.get("defines", {})
                if entry[3] != now[1]:     # a name added or removed
                    for name in changed[rel]:
                        renamed.setdefault(name, set()).add(rel)
                users.update(entry[1])
                entry[2:] = now
    # a definition without an anchor: its users' walks are all made again, as before any shortcut
    whole = not all(anchor for defines in changed.values() for anchor in defines.values())
    walked: dict[str, list[str]] = {}      # unit -> its files whose anchors are worked out again
    for unit in sorted(users):
        for rel, links in unit_links(unit).items():
            anchors = links.get("anchors", {})
            # a file's names are read only when a file it looks in gained or lost a name
            if whole or lost_anchor(anchors, changed) or (renamed and may_find_anew(
                    anchors, links.get("deps", []), unit_inputs(unit).get(rel, {}), renamed)):
                walked.setdefault(unit, []).append(rel)
                continue
            # the same names in the same files: each walk finds its name where it did, only the anchors moved
            for name, found in anchors.items():
                if found[0] in changed:
                    found[1] = changed[found[0]][name.rpartition(".")[2]]
    worked_out.update(walked)
    for unit in sorted(walked):      # all worked out before any is saved: a damaged record saves none
        files = unit_links(unit)
        for rel in walked[unit]:
            links, info = files[rel], unit_inputs(unit).get(rel, {})
            links["anchors"] = definition_anchors(links.get("deps", []), uses_and_mentions(info),
                                                  defines_of, deps_of, set(), follows)
    return [unit for unit in sorted(links_of) if save_shard(config, LINKS, unit, {"files": links_of[unit]})]

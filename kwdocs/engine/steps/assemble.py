"""The assemble step: every folder's index.md and doc.md, from its units' summary rows and parts."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kwdocs import layout
from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.steps.common import (
    StateDamaged,
    _unit_rows,
    _write_page,
    changed_units,
    digest,
    folder_pages_keys,
    recovering,
    remove_forms,
    step_counts,
    stored_facts,
)
from kwdocs.engine.steps.shared import SharedFolders
from kwdocs.formats import formats_for
from kwdocs.pages import compose as pages, diagrams, model
from kwdocs.pages.render import renderer_for
from kwdocs.store import writer as output
from kwdocs.store.state import (
    FILE_ROWS,
    FOLDER_DIAGRAMS,
    FOLDER_PARTS,
    FOLDERS_META,
    IMPORTANCE,
    PROBLEMS,
    ROWS,
    load_shard,
    save_shard,
    shard_path,
)


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
    for folder in stale:    # the parts are read again when the folder's pages are made: not all held at once
        counts[folder] = sum(data["part"]["files"] for data in _folder_parts(config, folder_units[folder], problems))
    counts = {folder: counts.get(folder, 0) for folder in folder_units}
    subfolders, totals = pages.folder_tree(counts, all_folders)
    # an edit that adds no file leaves every folder's shape as it was: skip hashing 650 of them
    same_tree = not fresh and counts == meta.get("counts") and shapes.keys() == set(all_folders)
    tally = step_counts(config)
    new_keys: dict[str, str] = {}
    new_shapes: dict[str, str] = {}
    # a first build (a fresh clone) asks the shared cache for every folder's pages at once: it holds them
    batched = bool(config.cache and fresh)
    todo: dict[str, tuple[list[str], list[dict], dict[str, dict]]] = {}    # folder -> units, parts, importance

    def write(texts: Mapping[str, str | bytes]) -> None:
        for page, text in texts.items():
            _write_page(config, page, text, tally)

    def make(folder: str, units: list[str], parts: list[dict], importance: dict[str, dict]) -> dict[str, str]:
        """The folder's pages, written."""
        file_rows, row_items = _index_rows(config, renderer, units, parts, keys[0], keep=len(units) > 1, fresh=fresh)
        texts = pages.folder_pages(config, renderer, folder, file_rows, [data["part"] for data in parts],
                                   subfolders[folder], totals[folder], importance, formats, row_items,
                                   _diagrams(config, folder, importance, keys))
        write(texts)
        return texts

    for folder in all_folders:
        shape = shapes[folder] if same_tree else digest(subfolders[folder], totals[folder])
        new_shapes[folder] = shape
        if folder not in stale and folder not in emptied and folder in page_keys and shapes.get(folder) == shape:
            new_keys[folder] = page_keys[folder]
            continue
        units = folder_units.get(folder, [])
        parts = _folder_parts(config, units, problems)
        importance = _importance(config, units)
        key = digest(folder, [data["digest"] for data in parts], importance, subfolders[folder], totals[folder], keys)
        new_keys[folder] = key
        if page_keys.get(folder) == key:
            continue
        if batched:
            todo[folder] = (units, parts, importance)
        else:   # one folder's parts and counts of uses in memory at a time
            make(folder, units, parts, importance)
    shared = SharedFolders(config, {folder: new_keys[folder] for folder in todo}) if todo else None
    for folder, (units, parts, importance) in todo.items():
        assert shared is not None
        found = shared.found.get(folder)
        if found is not None:
            write(found)
        else:
            shared.made[folder] = make(folder, units, parts, importance)
    for folder in sorted(set(page_keys) - set(new_keys)):
        for page in (layout.index_page(folder), layout.doc_page(folder)):
            remove_forms(config, page, tally)
        output.remove(config.out, Path(shard_path(config, FOLDER_DIAGRAMS, folder)))
    live_units = {unit for units in folder_units.values() for unit in units}
    problems = {unit: found for unit, found in problems.items() if unit in live_units}
    output.write_json(config.out, meta_path, {"keys": keys, "pages": new_keys, "shapes": new_shapes,
                                              "units": folder_units, "counts": counts, "problems": problems})
    flat = sorted((entry for found in problems.values() for entry in found), key=lambda p: (p[0], p[1] or 0, p[2]))
    output.write_json(config.out, config.state / PROBLEMS, flat)
    counts = tally
    if shared is None:
        return counts
    # the shared cache's module only for a build that has one
    from kwdocs.store.cache import cache_report
    return counts | {"cache_stored": shared.store(), **cache_report()}


DIAGRAMS_KEPT_FILES = 1000   # a folder of this many files keeps its diagrams in the state


def _diagrams(config: Config, folder: str, importance: dict[str, dict], keys: list[str]) -> dict | None:
    """The folder's diagrams (``diagrams.folder_diagrams``).  A large folder's are kept in the
    state with a digest of what they are made from (each file's ``deps`` and ``classes``, the
    code and templates' keys) and made again when it differs: in ATen's ``ops`` (7,048 headers)
    the import graph was most of a header edit's build, whose edits rarely change an include."""
    if len(importance) < DIAGRAMS_KEPT_FILES:
        return diagrams.folder_diagrams(folder, importance)
    made_from = digest(keys, [[name, counts.get("deps"), counts.get("classes")] for name, counts in importance.items()])
    kept = load_shard(config, FOLDER_DIAGRAMS, folder)
    if kept.get("made_from") == made_from and "diagrams" in kept:
        return kept["diagrams"]
    made = diagrams.folder_diagrams(folder, importance)
    save_shard(config, FOLDER_DIAGRAMS, folder, {"made_from": made_from, "diagrams": made})
    return made


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

"""The prune step: the pages and state of files and folders that are gone, removed."""
from __future__ import annotations

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.engine.steps.common import digest, recovering
from kwdocs.engine.steps.render import _remove_file_pages
from kwdocs.scan import folder_of
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import (
    EARLIER,
    FACTS,
    FILE_ROWS,
    FOLDER_PARTS,
    IMPORTANCE,
    KEYWORD_ENTRIES,
    LINK_INPUTS,
    LINK_REQUESTS,
    LINKS,
    PAGES,
    PRUNED,
    ROWS,
    SEEN,
    TOKENS,
    TOKENS_SUFFIX,
    load_shard,
    tokens_shard,
)


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
                    gone: dict[str, int] = {}
                    _remove_file_pages(config, rel, gone)
                    removed += gone.get("removed", 0)
            output.remove(config.out, path)
    folder = config.state / TOKENS     # named by their unit: gone with it
    live_tokens = {tokens_shard(config, unit) for unit in live_units}
    for path in sorted(folder.glob("*" + TOKENS_SUFFIX)) if folder.is_dir() else ():
        if path not in live_tokens:
            output.remove(config.out, path)
    return removed

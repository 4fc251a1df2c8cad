"""What a rebuild looks at again: the folders events point to, rescanned, merged into the last
scan and compared with it (``kwdocs.engine.incremental.Rebuilder`` runs the tasks of what changed)."""
from __future__ import annotations

import bisect
import os
import stat
from dataclasses import dataclass, field

from kwdocs.config import Config
from kwdocs.scan import ScanResult, SourceFile, folder_of, scan_folder
from kwdocs.store import state

RESCAN_LIMIT = 256      # more folders to rescan than this: one full scan is cheaper


@dataclass
class Changes:
    """What events said may have changed (paths relative to the source root)."""

    written: set[str] = field(default_factory=set)    # written to: stat it again
    files: set[str] = field(default_factory=set)      # created, deleted or moved: rescan its folder
    folders: set[str] = field(default_factory=set)    # rescan the folder and all below it
    everything: bool = False                          # rescan the whole tree


def rescan_targets(changes: Changes) -> dict[str, bool] | None:
    """Folder -> rescan recursively?; None for a full scan."""
    if changes.everything:
        return None
    targets: dict[str, bool] = {}
    for rel in changes.folders:
        targets[rel] = True
    for rel in changes.files | {rel for rel in changes.written if rel.rpartition("/")[2] == ".gitignore"}:
        folder = folder_of(rel)
        recursive = rel.rpartition("/")[2] == ".gitignore"   # its rules reach every folder below
        targets[folder] = targets.get(folder, False) or recursive
    if targets.get("") or len(targets) > RESCAN_LIMIT:
        return None
    recursive_roots = sorted(folder for folder, deep in targets.items() if deep)
    return {folder: deep for folder, deep in targets.items()
            if not any(_below(folder, root) and folder != root for root in recursive_roots)}


def _below(rel: str, folder: str) -> bool:
    return not folder or rel == folder or rel.startswith(folder + "/")


def _slice(rels: list[str], folder: str) -> range:
    """Indices of the sorted ``rels`` inside ``folder`` (at any depth)."""
    if not folder:
        return range(len(rels))
    prefix = folder + "/"
    return range(bisect.bisect_left(rels, prefix), bisect.bisect_left(rels, prefix[:-1] + "0"))


def merge(old: ScanResult, targets: dict[str, bool], written: set[str], config: Config
          ) -> tuple[ScanResult, list[SourceFile], list[SourceFile]]:
    """The scan after rescanning ``targets`` and statting the ``written`` files again (a large
    folder is slow to rescan); also the old and new entries that were looked at."""
    rels = [source.rel for source in old.files]
    dropped: set[int] = set()
    found: list[SourceFile] = []
    problems = list(old.problems)
    for rel in sorted(written):
        folder = folder_of(rel)
        index = bisect.bisect_left(rels, rel)
        if index == len(rels) or rels[index] != rel or folder in targets or any(
                deep and _below(folder, root) for root, deep in targets.items()):
            continue    # not documented (writing cannot change that), or rescanned anyway
        try:
            info = os.stat(config.src / rel)
        except OSError:
            info = None
        if info is None or not stat.S_ISREG(info.st_mode):
            targets = dict(targets, **{folder: targets.get(folder, False)})
            continue
        dropped.add(index)
        found.append(SourceFile(rel, info.st_size, info.st_mtime_ns))
    for folder, recursive in targets.items():
        inside = _slice(rels, folder)
        dropped.update(inside if recursive else (i for i in inside if folder_of(rels[i]) == folder))
        # B023: ``own`` is used in this iteration only
        own = (lambda rel: _below(rel, folder)) if recursive else (  # noqa: B023
            lambda rel: folder_of(rel) == folder or rel == (folder or "."))  # noqa: B023
        problems = [problem for problem in problems if not own(problem[0])]
        result = scan_folder(config, folder, recursive)
        if result is not None:
            found.extend(result.files)
            problems.extend(result.problems)
    before = [old.files[i] for i in sorted(dropped)]
    kept = [source for i, source in enumerate(old.files) if i not in dropped]
    merged = ScanResult(files=sorted(kept + found, key=lambda source: source.rel),
                        problems=sorted(set(problems)), skipped=old.skipped)
    return merged, before, found


def diff(before: list[SourceFile], after: list[SourceFile]) -> tuple[list[str], list[str], list[str]]:
    """(added, deleted, modified) documented files."""
    if len(before) == len(after):   # edits only: the sorted lists pair up, compared in a third of the time
        unequal = [(old, new) for old, new in zip(before, after) if old != new]
        if all(old.rel == new.rel for old, new in unequal):
            return [], [], sorted(new.rel for _, new in unequal)
    old_keys, new_keys = set(before), set(after)
    old = {key[0] for key in old_keys - new_keys}
    new = {key[0] for key in new_keys - old_keys}
    return sorted(new - old), sorted(old - new), sorted(old & new)


def tree_units(scanned: ScanResult, folders: set[str] | None = None) -> dict[str, dict[str, list[str]]]:
    """Folder -> unit -> its files (relative paths), split as ``kwdocs.engine.tasks`` splits them;
    only the given folders when ``folders`` is given."""
    names: dict[str, list[str]] = {}
    for source in scanned.files:
        folder, _, name = source.rel.rpartition("/")
        if folders is None or folder in folders:
            names.setdefault(folder, []).append(name)
    return {folder: {unit: [f"{folder}/{name}" if folder else name for name in members]
                     for unit, members in state.units_of(folder, members_all).items()}
            for folder, members_all in names.items()}

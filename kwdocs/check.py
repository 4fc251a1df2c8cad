"""``kwdocs check``: are the pages on disk exactly what kwdocs would write now?  Writes nothing.

A page is *stale* when it exists with other content, *missing* when it does
not exist, and *orphaned* when kwdocs would not write it at all (the page of
a deleted file, left behind or committed).  Content decides, never
timestamps: pre-commit stashes files and a checkout rewrites them.

How, without writing anything (no page, no state, no lock file):

1. Unless the snapshot of the last successful build (``kwdocs.snapshot``)
   matches the tree, the build's own steps (``kwdocs.build``) run under
   ``output.dry_run()``: sources whose content differs from their facts are
   extracted again, every unit's pages are rendered where their inputs
   changed, and each would-be write is compared with the disk.  With no state
   at all (a fresh clone in CI) that is every file.
2. Every other page the state lists must be what kwdocs last wrote there, by
   content hash (``kwdocs.ledger``).  Pages that are not are rendered and
   compared too.
3. Pages under the output folder that kwdocs would not write are orphans.

On an up-to-date tree only steps 2 and 3 run, by ``stat`` mostly.

``kwdocs check --fix`` (the pre-commit hook) does the same for real after a
build, so it restores pages edited by hand and removes orphans, and exits 1
whenever it wrote or removed a page: the user stages them and commits again.
"""
from __future__ import annotations

import os
import posixpath
import re
import sys
import time
from dataclasses import dataclass, field

from kwdocs import layout, ledger, output, snapshot, state
from kwdocs.config import STATE_FOLDER, Config
from kwdocs.incremental import tree_units
from kwdocs.lock import locked, shared
from kwdocs.scan import ScanResult, scan

PAGE_NAME = re.compile(r".+_docs\.md|.+_kw\.md|index\.md|doc\.md")      # in any folder
ROOT_PAGE_NAME = re.compile(r"keywords(-.+)?\.md")                        # at the top only


@dataclass
class Findings:
    """Pages out of date (paths relative to the output folder)."""

    stale: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    orphaned: set[str] = field(default_factory=set)
    expected: int = 0          # pages kwdocs writes for this tree
    written: int = 0           # --fix: pages written or removed besides the build's
    removed: int = 0

    def __bool__(self) -> bool:
        return bool(self.stale or self.missing or self.orphaned)


def _folder_names(split: dict[str, list[str]]) -> list[str]:
    return sorted(posixpath.basename(rel) for rels in split.values() for rel in rels)


# ---------------------------------------------------------------- the build's steps, in order

def refresh_state(config: Config, scanned: ScanResult, units: dict[str, dict[str, list[str]]],
                  dry: output.DryRun) -> None:
    """What a build would do to the state and pages, under ``dry`` (sources judged by content)."""
    from kwdocs import build  # parsers and templates: only when something must be redone
    key = build.extraction_key(config)
    all_units = [unit for split in units.values() for unit in split]
    for split in units.values():
        for unit, rels in split.items():
            shard = build.load_shard(config, build.FACTS, unit)
            known = shard.get("files", {}) if shard.get("key") == key else {}
            changed = [build.source_path(config, rel) for rel in rels
                       if rel not in known or ledger.file_sha256(config.src / rel) != known[rel].get("sha256")]
            if changed or set(known) != set(rels):
                build.extract_unit(config, unit, rels, changed)
    changed_facts = [str(path) for path in dry.changed_state if path.parent == config.state / state.FACTS]
    build.link_tree(config, all_units, changed_facts)
    for split in units.values():
        names = _folder_names(split)
        for unit, rels in split.items():
            build.render_unit(config, unit, names, rels)
    build.index_keywords(config, all_units, changed_facts)
    unit_map = {folder: list(split) for folder, split in units.items()}
    build.assemble(config, unit_map, scanned.folders(), changed_facts)
    build.prune(config, unit_map)


def expected_pages(config: Config, dry: output.DryRun | None) -> set[str]:
    """Every page the state (as it stands, dry run included) says kwdocs writes."""
    pages = state.written_pages(config, strict=True)
    for path, data in (dry.overlay.items() if dry else ()):
        if data is not None and path.parent == config.state / state.PAGES:   # units new in this dry run
            for rel in (output.read_json(path, {}) or {}).get("files", {}):
                pages.update((layout.docs_page(rel), layout.kw_page(rel)))
    return pages


def render_again(config: Config, scanned: ScanResult, units: dict[str, dict[str, list[str]]],
                 pages: set[str]) -> tuple[int, int]:
    """Forget that these pages are up to date and run their steps again; (written, removed)."""
    from kwdocs import build  # parsers and templates: only when something must be redone
    # pages back to their sources, through the layout itself (it escapes some folder names)
    file_of = {page: (rel, folder, unit) for folder, split in units.items() for unit, rels in split.items()
               for rel in rels for page in (layout.docs_page(rel), layout.kw_page(rel))}
    folder_of = {page: folder for folder in scanned.folders()
                 for page in (layout.index_page(folder), layout.doc_page(folder))}
    by_unit: dict[tuple[str, str], set[str]] = {}
    folders: set[str] = set()
    keywords = False
    for page in pages:
        if page in file_of:
            rel, folder, unit = file_of[page]
            by_unit.setdefault((folder, unit), set()).add(rel)
        elif page in folder_of:
            folders.add(folder_of[page])
        elif "/" not in page and page.startswith("keywords"):
            keywords = True
    written = removed = 0
    for (folder, unit), rels in sorted(by_unit.items()):
        manifest = build.load_shard(config, build.PAGES, unit).get("files", {})
        build.save_shard(config, build.PAGES, unit, {"files": {rel: k for rel, k in manifest.items() if rel not in rels}})
        counts = build.render_unit(config, unit, _folder_names(units[folder]), units[folder][unit])
        written, removed = written + counts["written"], removed + counts["removed"]
    all_units = [unit for split in units.values() for unit in split]
    if keywords:
        meta_path = config.state / state.KEYWORDS_META
        output.write_json(config.out, meta_path, dict(output.read_json(meta_path, {}) or {}, key=None))
        counts = build.index_keywords(config, all_units, [])
        written, removed = written + counts["written"], removed + counts["removed"]
    if folders:
        meta_path = config.state / state.FOLDERS_META
        meta = output.read_json(meta_path, {}) or {}
        meta["pages"] = {folder: k for folder, k in meta.get("pages", {}).items() if folder not in folders}
        output.write_json(config.out, meta_path, meta)
        counts = build.assemble(config, {folder: list(split) for folder, split in units.items()},
                                scanned.folders(), [])
        written, removed = written + counts["written"], removed + counts["removed"]
    return written, removed


def pages_on_disk(config: Config) -> set[str]:
    """Files under the output folder named as kwdocs names pages (its state folder aside)."""
    found: set[str] = set()
    root = str(config.out)
    for folder, subfolders, names in os.walk(root):
        if folder == root:
            subfolders[:] = [name for name in subfolders if name != STATE_FOLDER]
        prefix = folder[len(root) + 1:].replace(os.sep, "/") + "/" if folder != root else ""
        found.update(prefix + name for name in names
                     if PAGE_NAME.fullmatch(name) or not prefix and ROOT_PAGE_NAME.fullmatch(name))
    return found


def _stamp(config: Config, page: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(config.out / page)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def examine(config: Config, fix: bool) -> Findings:
    """Find (and with ``fix``, repair) every stale, missing and orphaned page.

    State that is damaged is not judged by: check then runs the build's steps as if
    there were no state at all, so it answers as it would on a fresh clone."""
    scanned = scan(config)
    if fix:
        return _examine(config, scanned, True, None)
    up_to_date = snapshot.unchanged(config, snapshot.tree_snapshot(config, scanned))
    with output.dry_run(config.state) as dry:
        try:
            findings = _examine(config, scanned, up_to_date, dry)
            if state.damaged(config) is None:
                return findings
        except output.StateDamaged:
            pass
    with output.dry_run(config.state, blank=True) as dry:
        return _examine(config, scanned, False, dry)


def _examine(config: Config, scanned: ScanResult, up_to_date: bool, dry: output.DryRun | None) -> Findings:
    findings = Findings()
    fix = dry is None
    if not up_to_date and not fix:
        refresh_state(config, scanned, tree_units(scanned), dry)
    expected = expected_pages(config, dry)
    compared = {path.relative_to(config.out).as_posix() for path in dry.pages} if dry else set()
    _, doubtful = ledger.vouched(config, expected - compared, ledger.load(config) if not (dry and dry.blank) else {})
    if doubtful:
        before = {page: _stamp(config, page) for page in doubtful}
        findings.written, findings.removed = render_again(config, scanned, tree_units(scanned), doubtful)
        if fix:     # what was restored (the ledger may merely not have known a page that was right)
            findings.stale |= {page for page in doubtful if _stamp(config, page) != before[page]}
        expected = expected_pages(config, dry)
    orphans = pages_on_disk(config) - expected
    if dry:
        for path, verdict in dry.pages.items():
            page = path.relative_to(config.out).as_posix()
            if verdict == output.DryRun.DIFFERENT:
                findings.stale.add(page)
            elif verdict == output.DryRun.ABSENT:
                findings.missing.add(page)
        orphans |= {path.relative_to(config.out).as_posix() for path in dry.removed}
        unjudged = doubtful - {path.relative_to(config.out).as_posix() for path in dry.pages}
        findings.stale |= {page for page in unjudged if (config.out / page).is_file()}
        findings.missing |= {page for page in unjudged if not (config.out / page).is_file()}
    elif orphans:
        findings.removed += sum(output.remove(config.out, config.out / page) for page in sorted(orphans))
    findings.orphaned = orphans
    findings.expected = len(expected)
    return findings


# ---------------------------------------------------------------- the command

def run_check(config: Config, fix: bool = False, jobs: int | None = None, stream=None) -> int:
    """``kwdocs check`` (exit 1 when a page is out of date) and ``--fix`` (exit 1 when it changed any)."""
    stream = stream or sys.stdout
    started = time.monotonic()
    if fix:
        return _fix(config, jobs, stream, started)
    with shared(config.state):
        findings = examine(config, fix=False)
    for label, pages in (("stale", findings.stale), ("missing", findings.missing), ("orphaned", findings.orphaned)):
        for page in sorted(pages):
            stream.write(f"{label}: {page}\n")
    seconds = time.monotonic() - started
    if not findings:
        stream.write(f"kwdocs check: all {findings.expected:,} pages are up to date ({seconds:.2f} s)\n")
        return 0
    count = len(findings.stale) + len(findings.missing) + len(findings.orphaned)
    stream.write(f"kwdocs check: {count:,} pages out of date ({len(findings.stale):,} stale, "
                 f"{len(findings.missing):,} missing, {len(findings.orphaned):,} orphaned); "
                 f"`kwdocs check --fix` brings them up to date ({seconds:.2f} s)\n")
    return 1


def _fix(config: Config, jobs: int | None, stream, started: float) -> int:
    from kwdocs.incremental import run_build

    counts: dict[str, int] = {}
    with locked(config.state):
        code = run_build(config, jobs=jobs, quiet=False, stream=stream, counts=counts)
        if code != 0:
            stream.write("kwdocs check --fix: the build failed\n")
            return 1
        findings = examine(config, fix=True)
        ledger.compact(config)
    for page in sorted(findings.orphaned):
        stream.write(f"removed orphan: {page}\n")
    for page in sorted(findings.stale):
        stream.write(f"restored: {page}\n")
    written = counts.get("written", 0) + findings.written
    removed = counts.get("removed", 0) + findings.removed
    seconds = time.monotonic() - started
    if written or removed:
        stream.write(f"kwdocs check --fix: {written:,} pages written, {removed:,} removed: "
                     f"stage them and commit again ({seconds:.2f} s)\n")
        return 1
    stream.write(f"kwdocs check --fix: all {findings.expected:,} pages are up to date ({seconds:.2f} s)\n")
    return 0

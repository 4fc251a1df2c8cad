"""``kwdocs check``: are the pages on disk exactly what kwdocs would write now?  Writes nothing.

A page is *stale* when it exists with other content, *missing* when it does
not exist, and *orphaned* when kwdocs would not write it at all (the page of
a deleted file, left behind or committed).  Content decides: pre-commit
stashes files and a checkout rewrites them.  Every format the output holds is
judged, whatever the settings say (``owned.built_formats``): with the HTML site,
its pages, search scripts, ``tree.js`` and assets are pages too.

How, without writing anything (no page, no state, no lock file):

1. Unless the snapshot of the last completed build (``kwdocs.store.snapshot``)
   matches the tree, the build itself runs as a dry run (``kwdocs.engine.runner.run_dry``:
   the same doit tasks in the same order, under ``output.dry_run()``, doit's
   records read from a scratch copy), and each would-be write is compared
   with the disk.  With no state at all (a fresh clone in CI) that is every file.
2. Every other page the state lists must be what kwdocs last wrote there, by
   content hash (``kwdocs.store.journal``).
3. Pages under the output folder that kwdocs would not write are orphans.

With a shared cache (``kwdocs.store.cache``) holding the page hashes of a full build of this
very tree, a tree that is not up to date is judged by them instead: every page on disk
hashed and compared (``steps.outputs.expected_outputs``), no step run.

When the state is damaged, or a page is not what kwdocs wrote, the dry run
is made again as if there were no state at all, so check answers as it does
on a fresh clone.  On an up-to-date tree only steps 2 and 3 run, by ``stat``
mostly.

``kwdocs check --fix`` (the pre-commit hook) builds, then writes the pages
that are not what kwdocs wrote (from a dry run without state) and removes
orphans, and exits 1 whenever it wrote or removed a page: the user stages
them and commits again.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time

from kwdocs.config import Config
from kwdocs.engine.restore import Findings, expected_pages, repair
from kwdocs.engine.runner import run_dry
from kwdocs.formats import formats_for
from kwdocs.scan import ScanResult, scan
from kwdocs.store import journal as ledger, owned, snapshot, state, writer as output
from kwdocs.store.lock import locked, shared


def examine(config: Config) -> Findings:
    """Find every stale, missing and orphaned page, writing nothing."""
    scanned = scan(config, snapshot.last_scan(config))
    up_to_date = snapshot.unchanged(config, snapshot.tree_snapshot(config, scanned))
    if not up_to_date and config.cache and not formats_for(config):     # the tree's hashes are of its Markdown pages
        found = _against_shared(config, scanned)
        if found is not None:
            return found
    with output.dry_run(config.state) as dry:
        try:
            if not up_to_date:
                run_dry(config, scanned)
            if state.damaged(config) is None:
                expected = expected_pages(config, dry)
                compared = {path.relative_to(config.out).as_posix() for path in dry.pages}
                entries = ledger.load(config)    # a dry run journals nothing: read once (50,000 entries with a site)
                _, doubtful = ledger.vouched(config, expected - compared, entries)
                if not doubtful:
                    return _dry_findings(config, dry, expected, entries)
        except output.StateDamaged:
            pass
    with output.dry_run(config.state, blank=True) as dry:     # judge by the sources alone
        run_dry(config, scanned)
        return _dry_findings(config, dry, expected_pages(config, dry))


def _dry_findings(config: Config, dry: output.DryRun, expected: set[str],
                  entries: dict[str, ledger.Entry] | None = None) -> Findings:
    def page(path) -> str:
        return path.relative_to(config.out).as_posix()
    return _findings(config, {page(path): verdict for path, verdict in dry.pages.items()},
                     {page(path) for path in dry.removed}, expected, entries)


def _against_shared(config: Config, scanned: ScanResult) -> Findings | None:
    """With a shared cache: the pages judged by the hashes a full build of this very tree stored
    there (``steps.outputs.expected_outputs``), without building; None when it has none."""
    # only with a shared cache: a check of a current tree reads no source
    from kwdocs import sources
    from kwdocs.engine.steps import outputs
    from kwdocs.store.cache import cache_report, check_store, unsigned_line

    check_store(config)
    rels = [source.rel for source in scanned.files]
    hashes = sources.file_hashes([sources.source_path(config, rel) for rel in rels])
    if None in hashes.values():
        return None     # an unreadable file: its page says why, which only building tells
    digests = outputs.expected_outputs(config, rels, scanned.folders(), scanned.problems,
                                       {rel: hashes[sources.source_path(config, rel)] or "" for rel in rels})
    said = cache_report()
    for line in said["cache_said"]:
        sys.stderr.write(line + "\n")
    if said["cache_unsigned"]:
        sys.stderr.write(unsigned_line(config.cache, said["cache_unsigned"]) + "\n")
    if digests is None:
        return None
    entries = ledger.load(config)
    same = {page for page in ledger.vouched(config, digests, entries)[0] if entries[page][0] == digests[page]} \
        if entries else set()
    root = str(config.out) + os.sep
    unknown = sorted(set(digests) - same)
    on_disk = sources.file_hashes([root + page for page in unknown])
    verdicts = {page: output.DryRun.ABSENT if on_disk[root + page] is None and not os.path.lexists(root + page)
                else output.DryRun.SAME if on_disk[root + page] == digests[page] else output.DryRun.DIFFERENT
                for page in unknown}
    findings = _findings(config, verdicts, set(), set(digests))
    findings.by_cache = True
    return findings


def _findings(config: Config, verdicts: dict[str, str], removed: set[str], expected: set[str],
              entries: dict[str, ledger.Entry] | None = None) -> Findings:
    """Findings from each page's verdict (``output.DryRun``'s), the pages a build would remove,
    and the pages it writes (``entries``: the ledger, when already loaded)."""
    findings = Findings(expected=len(expected))
    for page, verdict in verdicts.items():
        if verdict == output.DryRun.DIFFERENT:
            findings.stale.add(page)
        elif verdict == output.DryRun.ABSENT:
            findings.missing.add(page)
    entries = ledger.load(config) if entries is None else entries
    # a file kwdocs did not write is the user's: never an orphan, whatever its name
    findings.orphaned = {page for page in owned.pages_on_disk(config, formats_for(config)) - expected
                         if owned.is_ours(config, page, entries)}
    findings.orphaned |= removed
    users = owned.foreign(config, findings.stale, entries)
    if users:   # what a build would refuse to replace, check reports as the build would
        raise owned.ForeignFiles(config, users)
    return findings


# ---------------------------------------------------------------- the command

def with_formats(config: Config) -> Config:
    """``config`` with every format the output holds: the site (or any format) is checked (and
    fixed) when the output has it, whatever the settings say (``owned.built_formats``)."""
    held = [name for name in owned.built_formats(config) if name not in config.formats]
    if not held:
        return config
    formats = (*config.formats, *held)
    return dataclasses.replace(config, formats=formats)     # ``html`` follows (``Config``)


def run_check(config: Config, fix: bool = False, jobs: int | None = None, stream=None) -> int:
    """``kwdocs check`` (exit 1 when a page is out of date) and ``--fix`` (exit 1 when it changed any)."""
    stream = stream or sys.stdout
    started = time.monotonic()
    config = with_formats(config)
    if fix:
        return _fix(config, jobs, stream, started)
    with shared(config.state):
        findings = examine(config)
    for label, pages in (("stale", findings.stale), ("missing", findings.missing), ("orphaned", findings.orphaned)):
        for page in sorted(pages):
            stream.write(f"{label}: {page}\n")
    seconds = time.monotonic() - started
    how = "by the page hashes in the shared cache, " if findings.by_cache else ""
    if not findings:
        stream.write(f"kwdocs check: all {findings.expected:,} pages are up to date ({how}{seconds:.2f} s)\n")
        return 0
    count = len(findings.stale) + len(findings.missing) + len(findings.orphaned)
    stream.write(f"kwdocs check: {count:,} pages out of date ({len(findings.stale):,} stale, "
                 f"{len(findings.missing):,} missing, {len(findings.orphaned):,} orphaned); "
                 f"`kwdocs check --fix` brings them up to date ({how}{seconds:.2f} s)\n")
    return 1


def _fix(config: Config, jobs: int | None, stream, started: float) -> int:
    # the build's engine only for check --fix
    from kwdocs.engine.incremental import check_first_build, run_build

    counts: dict[str, int] = {}
    scanned = check_first_build(config)
    with locked(config.state):
        code = run_build(config, jobs=jobs, quiet=False, stream=stream, counts=counts, scanned=scanned,
                         restore=False)
        if code != 0:
            stream.write("kwdocs check --fix: the build failed\n")
            return 1
        findings = repair(config)
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

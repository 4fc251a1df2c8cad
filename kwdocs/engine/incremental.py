"""Rebuilding after edits: rescan only where events came from, run only the tasks they need.

``kwdocs watch`` must show a save in its pages within a few hundred
milliseconds, and on a large tree a full scan and doit's check of every task
cost more than that.  So a rebuild here stats again the files events
said were written, rescans only the folders where files appeared or went
(``kwdocs.engine.rescan``), diffs that against the previous scan, and hands doit
the ``extract`` and ``render`` tasks of the changed files' units only
(``tasks.namespace(only=...)``; every unit of a folder that gained or lost a
file, as each page lists its neighbours), with ``link``, ``keywords``,
``assemble`` and ``prune`` as in every build.  ``link`` can rewrite other units' used-by
lists, so a second doit run renders the units whose link shards changed.

``run_build`` (``kwdocs build``) is the whole flow: the no-op snapshot, a few
changed files through ``Rebuilder``, else every task (``runner.run_all``).
The same doit rules and state as ``kwdocs build``, so the output equals a
clean build.  When this process cannot vouch for the state (no successful
build yet, another process built or cleaned in between, events were lost) it
runs a full build instead.
"""
from __future__ import annotations

import gc
import io
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kwdocs.config import Config
from kwdocs.engine import summary, symbol_index
from kwdocs.formats import formats_for
from kwdocs.scan import ScanResult, SourceFile, folder_of, scan, settle, with_ancestors
from kwdocs.store import journal as ledger, owned, snapshot, state, writer as output

if TYPE_CHECKING:   # a type only: a no-op build stops before any rescan (see run_build)
    from kwdocs.engine.rescan import Changes

PARALLEL_UNITS = 8      # this many units to redo or more: doit's worker processes are worth their start


def format_counts(counts: dict[str, int]) -> dict[str, int]:
    """The other formats' counts of a build's (``<format>_written``, ``<format>_removed``)."""
    return {key: value for key, value in counts.items()
            if key.endswith(("_written", "_removed")) and key not in ("written", "removed")}


@dataclass
class Outcome:
    """One rebuild, for the status line."""

    added: list[str]
    deleted: list[str]
    modified: list[str]
    written: int = 0
    removed: int = 0
    html_written: int = 0
    html_removed: int = 0
    formats: dict[str, int] = field(default_factory=dict)    # every other format's, as ``<format>_written``
    seconds: float = 0.0
    code: int = 0
    full: bool = False
    problems: list[str] = field(default_factory=list)
    left: int = 0   # files whose pages the build left as they were: changed again after extraction
    unsettled: list[str] = field(default_factory=list)  # those of them a rebuild of changed units names

    @property
    def changed(self) -> list[str]:
        return sorted(self.added + self.deleted + self.modified)


def _link_meta_stamp(config: Config) -> tuple[int, int, int] | None:
    """Linking rewrites its meta file, naming the units whose link shards changed, whenever it
    relinks: a new stamp (inode, time, size) says to read it."""
    try:
        info = os.stat(config.state / state.LINK_META)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


class Rebuilder:
    """Keeps one tree's pages current across many small rebuilds in one process."""

    def __init__(self, config: Config, parallel: bool = False):
        self.config = config
        self.parallel = parallel    # may fork doit workers: not from a process with watchdog's threads
        self.scanned: ScanResult | None = None
        self.saved_snapshot: str | None = None     # what this process last saved after a successful build
        self._tasks: dict | None = None            # the doit namespace of the current files
        self._extract: set[str] = set()            # the units whose extract / render tasks doit gets
        self._render: set[str] = set()

    def full(self, jobs: int | None = None, quiet: bool = False, stream=None) -> Outcome:
        """A whole build through ``run_build`` (the first one, and after anything unusual)."""
        started = time.monotonic()
        scanned = scan(self.config)
        counts: dict[str, int] = {}
        code = run_build(self.config, jobs=jobs, quiet=quiet, stream=stream, scanned=scanned, counts=counts)
        self._settled(scanned, code)
        self._tasks = self._namespace(scanned)     # ready for the first save, which need not make it
        return Outcome([], [], [], counts.get("written", 0), counts.get("removed", 0),
                       counts.get("html_written", 0), counts.get("html_removed", 0), format_counts(counts),
                       seconds=time.monotonic() - started, code=code, full=True)

    def update(self, changes: Changes, rescanned: ScanResult | None = None,
               differences: tuple[list[str], list[str], list[str]] | None = None,
               rescanned_snapshot: str | None = None) -> Outcome | None:
        """Rebuild what the changes need; None when no documented file changed.

        ``rescanned``: a full scan the caller already made (with ``everything``), and
        ``differences`` what ``diff`` gave between the last scan and it, and
        ``rescanned_snapshot`` its ``snapshot.tree_snapshot``, if the caller has them."""
        # a no-op build never gets here: it stops at the snapshot, before the rescan's module
        from kwdocs.engine.rescan import Changes, diff, merge, rescan_targets

        started = time.monotonic()
        old = self.scanned or ScanResult(files=[])
        if self.scanned is None:
            changes = Changes(everything=True)
        targets = rescan_targets(changes)
        if targets is None:
            new = rescanned if rescanned is not None else scan(self.config)
            if rescanned is None or differences is None:
                differences = diff(old.files, new.files)
        else:
            new, before, after = merge(old, targets, changes.written, self.config)
            differences = diff(before, after)
        added, deleted, modified = differences
        trusted = self.saved_snapshot is not None and snapshot.unchanged(self.config, self.saved_snapshot)
        quiet_change = not (added or deleted or modified) and new.problems == old.problems
        if trusted and quiet_change:
            self.scanned = new
            return None
        outcome = Outcome(added, deleted, modified)
        output = io.StringIO()
        if trusted:
            if added:   # pages of other files were checked when they were first written
                known = set(old.folders())
                folders = [folder for folder in with_ancestors(folder_of(rel) for rel in added) if folder not in known]
                owned.check_tree(self.config, added, folders)
            if added or deleted or self._tasks is None:
                self._tasks = self._namespace(new)
            self._run_units(new, self._units_to_run(new, outcome), outcome, output)
        if not trusted or (state.damaged(self.config) is not None and outcome.code == 0):
            # a whole build; it starts damaged state over
            counts: dict[str, int] = {}
            outcome.code = run_build(self.config, jobs=1, quiet=True, stream=output, scanned=new, counts=counts)
            outcome.written, outcome.removed, outcome.full = counts.get("written", 0), counts.get("removed", 0), True
            outcome.html_written, outcome.html_removed = counts.get("html_written", 0), counts.get("html_removed", 0)
            outcome.formats = format_counts(counts)
            outcome.left += counts.get("unsettled", 0)
            self._tasks = None
        self._settled(new, outcome.code, rescanned_snapshot if new is rescanned else None)
        if outcome.code != 0:
            sys.stderr.write(output.getvalue())
        elif outcome.left:     # a page left as it was vouches for nothing: read again, then vouch
            self.saved_snapshot = None
        elif trusted and self.saved_snapshot is not None:    # _settled made it of ``new``
            vouch(self.config, self.saved_snapshot, new)
        if outcome.code == 0 and quiet_change and not (outcome.written or outcome.removed):
            return None
        touched = set(added + modified)
        outcome.problems = [line for path, line in summary.problems(self.config, new) if path in touched]
        outcome.seconds = time.monotonic() - started
        return outcome

    @staticmethod
    def _units_to_run(scanned: ScanResult, outcome: Outcome) -> set[str]:
        """The units of the changed files, and every unit of a folder that gained or lost a file
        (each page lists the files next to it)."""
        # a no-op build never gets here: it stops at the snapshot, before the rescan's module
        from kwdocs.engine.rescan import tree_units

        regrouped = {folder_of(rel) for rel in outcome.added + outcome.deleted}
        modified = set(outcome.modified)
        return {unit for folder, split in tree_units(scanned, regrouped | {folder_of(rel) for rel in modified}).items()
                for unit, rels in split.items() if folder in regrouped or not modified.isdisjoint(rels)}

    def _namespace(self, scanned: ScanResult) -> dict:
        """The doit namespace of these files, its extract and render tasks limited to the units
        in ``self._extract`` and ``self._render`` when doit loads them."""
        # the runner (doit's worker set-up) only when there is something to build: not on a no-op
        from kwdocs.engine.runner import build_namespace

        return build_namespace(self.config, scanned, only=lambda kind, unit: unit in (
            self._extract if kind == "extract" else self._render))

    def _run_units(self, scanned: ScanResult, units: set[str], outcome: Outcome, stream) -> None:
        """doit over the given units, then over the units link gave new used-by lists."""
        # doit and the task rules only when something changed: a no-op build stops before
        from kwdocs.engine.tasks import task_order

        assert self._tasks is not None, "update makes the namespace before it runs units"
        self._extract = self._render = units
        reporter = summary.BuildReporter(stream, {}, config=self.config, scanned=scanned, quiet=True)
        tasks = dict(self._tasks, DOIT_CONFIG=dict(self._tasks["DOIT_CONFIG"], reporter=reporter,
                                                   default_tasks=task_order(self.config, rebuild=True)))
        snapshot.forget(self.config)
        link_meta = _link_meta_stamp(self.config)
        outcome.code = self._doit(tasks, len(units))
        if outcome.code == 0:
            relinked: list[str] = []
            if _link_meta_stamp(self.config) != link_meta:
                meta = output.read_json(self.config.state / state.LINK_META, {})
                relinked = meta.get("rewritten", []) if isinstance(meta, dict) else []
            self._render = set(relinked) - units
            if self._render:
                outcome.code = self._doit(tasks, len(self._render))
        outcome.written, outcome.removed = reporter.counts["written"], reporter.counts["removed"]
        outcome.html_written, outcome.html_removed = reporter.counts["html_written"], reporter.counts["html_removed"]
        outcome.formats = format_counts(reporter.counts)
        outcome.unsettled = sorted(reporter.unsettled)
        outcome.left = len(outcome.unsettled)

    def _doit(self, tasks: dict, units: int) -> int:
        """One doit run over the namespace; in worker processes when there is enough to share."""
        # the runner (doit's worker set-up) only when there is something to build: not on a no-op
        from kwdocs.engine.runner import run_doit

        return run_doit(tasks, self.config.jobs if self.parallel and units >= PARALLEL_UNITS else 1, self.config)

    def _settled(self, scanned: ScanResult, code: int, known: str | None = None) -> None:
        """Remember the tree as built; only a successful build's snapshot vouches for the state
        (``known``: the snapshot of ``scanned``, when the caller already hashed it)."""
        self.scanned = scanned
        self.saved_snapshot = (known or snapshot.tree_snapshot(self.config, scanned)) if code == 0 else None
        if code == 0:
            ledger.compact(self.config)


# ---------------------------------------------------------------- a build

def vouch(config: Config, current: str, scanned: ScanResult) -> None:
    """The end of every build that succeeded: its snapshot saved, vouching for the state, and
    the symbol index of find, refs and show, once a query made one, brought up to date with it."""
    settle(scanned)     # the folders changed just before the scan vouched for, now that time has passed
    snapshot.save(config, current, scanned)
    symbol_index.keep(config, current, scanned)


def run_build(config: Config, jobs: int | None = None, quiet: bool = False, stream=None,
              scanned: ScanResult | None = None, counts: dict[str, int] | None = None, restore: bool = True) -> int:
    """One build (of ``scanned``, else a fresh scan); returns doit's exit code (0 ok, 1 a task
    failed, 2+ doit errors) and adds pages written and removed to ``counts`` when given.
    ``restore``: also write again the pages changed by hand (``check --fix`` does that itself,
    naming each)."""
    gc.freeze()  # the collector would walk every long-lived object of the build again and again
    started = time.monotonic()
    stream = stream or sys.stdout
    last = snapshot.last_scan(config)
    scanned = scanned if scanned is not None else scan(config, last)
    current = snapshot.tree_snapshot(config, scanned)
    # a page deleted or added by hand (none in an output folder this build starts)
    by_hand = restore and not state.first_build(config) and not snapshot.outputs_unchanged(config, scanned)
    if snapshot.unchanged(config, current):
        if scanned.stamps is not None and (last is None or scanned.stamps is not last.get("stamps")):
            settle(scanned)
            if scanned.stamps is not None:      # a walk's new stamps: the next build lists no folder
                snapshot.save_scan(config, current, scanned)
        restored = _restore(config, current, scanned) if by_hand else {}
        symbol_index.ensure(config, current, scanned)
        summary.report(stream.write, config, scanned, restored.get("written", 0), restored.get("removed", 0),
                       time.monotonic() - started, quiet, {"html_written": 0, "html_removed": 0})
        return 0
    # the runner (doit's worker set-up) only past the no-op return above
    from kwdocs.engine.runner import run_all

    if config.cache:
        # the shared cache's module only for a build that has one
        from kwdocs.store.cache import check_store
        check_store(config)
    state.check_complete(config)
    # what the build did: pages written and removed, and ``unsettled``, pages it left as they were
    tally: dict[str, int] = {} if counts is None else counts
    if state.damaged(config) is None:
        code = _run_changed_units(config, scanned, current, last, quiet, stream, tally, started)
        if code is not None and state.damaged(config) is None:
            return _restored_after(config, current, scanned, code, by_hand, quiet, stream, tally)
    # before anything is written: no file of the user's is replaced
    owned.check_tree(config, (source.rel for source in scanned.files), scanned.folders())
    if config.scheduler:
        # Dask only for a build with --scheduler
        from kwdocs.engine.build_session import BuildSession
        from kwdocs.engine.cluster import OnCluster
        from kwdocs.engine.cluster_connection import connected
        with connected(config) as cluster:
            code = run_all(config, scanned, jobs or config.jobs, quiet, stream, tally,
                           BuildSession(remote=OnCluster(cluster)))
    else:
        code = run_all(config, scanned, jobs or config.jobs, quiet, stream, tally)
    if code == 0 and not tally.get("unsettled"):    # a page left as it was vouches for nothing
        vouch(config, current, scanned)
        ledger.compact(config)      # fold the journals of pages written into the ledger, once they grow
        # the pages' hashes, for ``kwdocs check`` on a fresh clone (of Markdown pages only, as it reads them)
        if config.cache and not formats_for(config):
            # the shared cache's module only for a build that has one
            from kwdocs.engine.steps.outputs import share_outputs
            share_outputs(config, {source.rel: (source.size, source.mtime_ns) for source in scanned.files},
                          scanned.problems)
    return _restored_after(config, current, scanned, code, by_hand, quiet, stream, tally)


def _restore(config: Config, current: str, scanned: ScanResult) -> dict[str, int]:
    """Write again the pages that are not what kwdocs wrote (as ``check --fix`` does), then
    vouch for the output as it now is; the pages written and removed."""
    # only when pages were changed by hand: a no-op build with its pages as written never needs it
    from kwdocs.engine.restore import repair

    findings = repair(config)
    vouch(config, current, scanned)
    return {"written": findings.written, "removed": findings.removed}


def _restored_after(config: Config, current: str, scanned: ScanResult, code: int, by_hand: bool, quiet: bool,
                    stream, counts: dict[str, int]) -> int:
    """After a build that succeeded, the pages changed by hand before it (``by_hand``) restored:
    the build itself rewrites only the pages of what changed in the sources.  Not after one that
    left pages as they were (``counts["unsettled"]``): restoring vouches for the output."""
    if code != 0 or not by_hand or counts.get("unsettled"):
        return code
    restored = _restore(config, current, scanned)
    for key, value in restored.items():
        counts[key] = counts.get(key, 0) + value
    if not quiet and (restored["written"] or restored["removed"]):
        stream.write(f"kwdocs: {restored['written']:,} pages written again and {restored['removed']:,} removed: "
                     "they were not what kwdocs wrote\n")
    return code


DIRTY_LIMIT = 200   # more changed files than this: a full doit run, which uses every core


def _run_changed_units(config: Config, scanned: ScanResult, current: str, last: dict | None, quiet: bool, stream,
                       counts: dict[str, int], started: float) -> int | None:
    """When only a few sources changed since the last successful build (``last``, under the
    same code and settings: ``snapshot.last_scan``), hand doit just their units, as watch mode
    does: doit's check of every file is most of an edit's cost.  None: not applicable, build
    as usual."""
    # past the no-op return of run_build: a no-op build stops before the rescan's module
    from kwdocs.engine.rescan import Changes, diff

    if not last or not last.get("snapshot"):
        return None
    before = ScanResult(files=[SourceFile(*entry) for entry in last["files"]],
                        problems=[tuple(problem) for problem in last.get("problems", [])])
    differences = diff(before.files, scanned.files)
    if sum(map(len, differences)) > DIRTY_LIMIT:
        return None
    rebuilder = Rebuilder(config, parallel=True)
    rebuilder.scanned, rebuilder.saved_snapshot = before, last.get("snapshot")
    outcome = rebuilder.update(Changes(everything=True), rescanned=scanned, differences=differences,
                               rescanned_snapshot=current)
    code = outcome.code if outcome is not None else 0
    written, removed = (outcome.written, outcome.removed) if outcome is not None else (0, 0)
    site = {"html_written": 0, "html_removed": 0, **(outcome.formats if outcome is not None else {})}
    counts["written"] = counts.get("written", 0) + written
    counts["removed"] = counts.get("removed", 0) + removed
    counts["unsettled"] = outcome.left if outcome is not None else 0
    if code == 0:
        summary.report(stream.write, config, scanned, written, removed, time.monotonic() - started, quiet, site)
    return code


def check_first_build(config: Config) -> ScanResult | None:
    """Before the first build into an existing folder takes its lock (which makes the state
    folder): scan and ``owned.check_tree``, so that a refused build writes nothing at all.  The
    scan, for the build to use; None when there is no such folder or it has state already."""
    if not config.out.is_dir() or os.path.lexists(config.state):
        return None
    scanned = scan(config)
    owned.check_tree(config, (source.rel for source in scanned.files), scanned.folders())
    return scanned

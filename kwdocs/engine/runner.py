"""Run the doit rule set for a configuration, in this process.

``kwdocs build`` and friends come through here; ``doit`` at the repository
root loads the same namespace from ``dodo.py``.  A build whose snapshot (see
``kwdocs.store.snapshot``) matches the last successful one stops after the scan.
"""
from __future__ import annotations

import gc
import sys
import time

from kwdocs import mistakes
from kwdocs.engine import summary, workers
from kwdocs.store import journal as ledger, owned, snapshot
from kwdocs.config import Config
from kwdocs.scan import ScanResult, scan


def build_namespace(config: Config, scanned: ScanResult | None = None, quiet: bool = False,
                    stream=None, only=None) -> dict:
    """The dodo namespace with kwdocs' reporter attached (``only``: see ``tasks.namespace``)."""
    from kwdocs.engine.summary import BuildReporter
    from kwdocs.engine.tasks import namespace

    scanned = scanned if scanned is not None else scan(config)
    tasks = namespace(config, scanned, only)
    tasks["DOIT_CONFIG"]["reporter"] = BuildReporter(stream or sys.stdout, {}, config=config,
                                                    scanned=scanned, quiet=quiet)
    return tasks


def run_build(config: Config, jobs: int | None = None, quiet: bool = False, stream=None,
              scanned: ScanResult | None = None, counts: dict[str, int] | None = None) -> int:
    """One build (of ``scanned``, else a fresh scan); returns doit's exit code (0 ok, 1 a task
    failed, 2+ doit errors) and adds pages written and removed to ``counts`` when given."""
    gc.freeze()  # FINDINGS: the collector costs a third of a no-op build
    started = time.monotonic()
    stream = stream or sys.stdout
    scanned = scanned if scanned is not None else scan(config)
    current = snapshot.tree_snapshot(config, scanned)
    if snapshot.unchanged(config, current):
        summary.report(stream.write, config, scanned, 0, 0, time.monotonic() - started, quiet)
        return 0
    code = _run_changed_units(config, scanned, current, quiet, stream, counts, started)
    if code is not None:
        return code
    owned.check_tree(config, scanned)   # before anything is written: no file of the user's is replaced
    snapshot.forget(config)
    tasks = build_namespace(config, scanned, quiet=quiet, stream=stream)
    code = run_doit(tasks, jobs or config.jobs)
    if counts is not None:
        for key in ("written", "removed"):
            counts[key] = counts.get(key, 0) + tasks["DOIT_CONFIG"]["reporter"].counts[key]
    if code == 0:
        snapshot.save(config, current, scanned)
        ledger.compact(config)      # fold the journals of pages written into the ledger, once they grow
    return code


def run_doit(tasks: dict, jobs: int) -> int:
    """doit's ``run`` over a namespace, in ``jobs`` worker processes when more than one."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    from kwdocs.engine.dispatch import looking_ahead

    argv = ["run"] + (["-n", str(jobs), "-P", "process"] if jobs > 1 else [])
    # a killed build must not leave workers holding the lock; a worker's next task waits for it
    with workers.dying_with_builder(), looking_ahead(), mistakes.doit_database_kept():
        # no config_filenames: the shell's folder's pyproject.toml or doit.cfg is no business of this build
        code = DoitMain(ModuleTaskLoader(tasks), config_filenames=()).run(argv)
    mistakes.raise_kept(getattr(tasks["DOIT_CONFIG"].get("reporter"), "mistakes", []))
    return code


DIRTY_LIMIT = 200   # more changed files than this: a full doit run, which uses every core


def _run_changed_units(config: Config, scanned: ScanResult, current: str, quiet: bool, stream,
                       counts: dict[str, int] | None, started: float) -> int | None:
    """When only a few sources changed since the last successful build (same code and
    settings), hand doit just their units, as watch mode does: doit's check of all
    12,000 files is most of an edit's cost.  None: not applicable, build as usual."""
    from kwdocs.engine.incremental import Changes, Rebuilder, diff
    from kwdocs.scan import SourceFile

    last = snapshot.previous(config)
    if not last.get("files") or not last.get("snapshot") or last.get("settings") != snapshot.settings_digest(config):
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
    if counts is not None:
        counts["written"] = counts.get("written", 0) + written
        counts["removed"] = counts.get("removed", 0) + removed
    if code == 0:
        summary.report(stream.write, config, scanned, written, removed, time.monotonic() - started, quiet)
    return code

"""Run the doit rule set for a configuration, in this process.

``kwdocs build`` and friends come through here; ``doit`` at the repository
root loads the same namespace from ``dodo.py``.  A build whose snapshot (see
``kwdocs.snapshot``) matches the last successful one stops after the scan.
"""
from __future__ import annotations

import gc
import sys
import time

from kwdocs import ledger, output, snapshot, state, summary, workers
from kwdocs.config import Config
from kwdocs.scan import ScanResult, scan


def build_namespace(config: Config, scanned: ScanResult | None = None, quiet: bool = False,
                    stream=None, only=None) -> dict:
    """The dodo namespace with kwdocs' reporter attached (``only``: see ``tasks.namespace``)."""
    from kwdocs.reporter import BuildReporter
    from kwdocs.tasks import namespace

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
    state.check_complete(config)
    if state.damaged(config) is None:
        code = _run_changed_units(config, scanned, current, quiet, stream, counts, started)
        if code is not None and state.damaged(config) is None:
            return code
    snapshot.forget(config)
    code = _run_all(config, scanned, jobs or config.jobs, quiet, stream, counts)
    if code == 0:
        snapshot.save(config, current, scanned)
        ledger.compact(config)      # fold the journals of pages written into the ledger, once they grow
    return code


def _run_all(config: Config, scanned: ScanResult, jobs: int, quiet: bool, stream,
             counts: dict[str, int] | None) -> int:
    """doit over every task; when a step met damaged state (``state.damaged``), the state
    starts over and doit runs again: damage costs time, never correctness."""
    code = 1
    for _ in range(2):
        damage = state.damaged(config)
        if damage is not None:
            sys.stderr.write(f"kwdocs: {damage}; building the state again\n")
            written_before = set(ledger.load(config))
            state.start_over(config)
        tasks = build_namespace(config, scanned, quiet=quiet, stream=stream)
        code = run_doit(tasks, jobs, config)
        reporter = tasks["DOIT_CONFIG"]["reporter"]
        if damage is not None and code == 0 and state.damaged(config) is None:
            reporter.counts["removed"] += _remove_unlisted(config, written_before)
        if counts is not None:
            for key in ("written", "removed"):
                counts[key] = counts.get(key, 0) + reporter.counts[key]
        if state.damaged(config) is None:
            return code
    sys.stderr.write(f"kwdocs: {state.damaged(config)} again after building the state again\n")
    return code or 1


def _remove_unlisted(config: Config, written_before: set[str]) -> int:
    """After the state started over: the pages kwdocs wrote before that it no longer writes
    (their records were lost with the state), if they still hold what kwdocs wrote."""
    gone = written_before - state.written_pages(config)
    vouched, _ = ledger.vouched(config, gone, ledger.load(config))
    return sum(output.remove(config.out, config.out / page) for page in sorted(vouched))


def run_doit(tasks: dict, jobs: int, config: Config | None = None) -> int:
    """doit's ``run`` over a namespace, in ``jobs`` worker processes when more than one (a
    damaged record file of doit's is removed first: it only schedules, see ``state``)."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    from kwdocs.dispatch import looking_ahead

    if config is not None:
        state.check_doit_records(config)
    argv = ["run"] + (["-n", str(jobs), "-P", "process"] if jobs > 1 else [])
    # a killed build must not leave workers holding the lock; a worker's next task waits for it
    with workers.dying_with_builder(), looking_ahead():
        # no config_filenames: the shell's folder's pyproject.toml or doit.cfg is no business of this build
        code = DoitMain(ModuleTaskLoader(tasks), config_filenames=()).run(argv)
    if config is not None and code in (0, 1):     # doit saved its records: they are whole
        state.doit_records_verified(config)
    return code


DIRTY_LIMIT = 200   # more changed files than this: a full doit run, which uses every core


def _run_changed_units(config: Config, scanned: ScanResult, current: str, quiet: bool, stream,
                       counts: dict[str, int] | None, started: float) -> int | None:
    """When only a few sources changed since the last successful build (same code and
    settings), hand doit just their units, as watch mode does: doit's check of all
    12,000 files is most of an edit's cost.  None: not applicable, build as usual."""
    from kwdocs.incremental import Changes, Rebuilder, diff
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

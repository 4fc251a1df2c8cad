"""Run the doit rule set for a configuration, in this process.

``kwdocs build`` and friends come through here; ``doit`` at the repository
root loads the same namespace from ``dodo.py``.  A build whose snapshot (see
``kwdocs.snapshot``) matches the last successful one stops after the scan.
"""
from __future__ import annotations

import gc
import sys
import time

from kwdocs import ledger, snapshot, summary, workers
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
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    snapshot.forget(config)
    tasks = build_namespace(config, scanned, quiet=quiet, stream=stream)
    jobs = jobs or config.jobs
    argv = ["run"] + (["-n", str(jobs), "-P", "process"] if jobs > 1 else [])
    with workers.dying_with_builder():  # a killed build must not leave workers holding the lock
        code = DoitMain(ModuleTaskLoader(tasks)).run(argv)
    if counts is not None:
        for key in ("written", "removed"):
            counts[key] = counts.get(key, 0) + tasks["DOIT_CONFIG"]["reporter"].counts[key]
    if code == 0:
        snapshot.save(config, current)
        ledger.compact(config)      # fold the journals of pages written into the ledger, once they grow
    return code

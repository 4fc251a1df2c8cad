"""Run the doit rule set for a configuration, in this process.

``kwdocs build`` and friends come through here; ``doit`` at the repository
root loads the same namespace from ``dodo.py``.
"""
from __future__ import annotations

import gc
import sys

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain

from kwdocs.config import Config
from kwdocs.reporter import BuildReporter
from kwdocs.scan import ScanResult, scan
from kwdocs.tasks import namespace


def build_namespace(config: Config, scanned: ScanResult | None = None, quiet: bool = False,
                    stream=None) -> dict:
    """The dodo namespace with kwdocs' reporter attached."""
    scanned = scanned if scanned is not None else scan(config)
    tasks = namespace(config, scanned)
    tasks["DOIT_CONFIG"]["reporter"] = BuildReporter(stream or sys.stdout, {}, config=config,
                                                    scanned=scanned, quiet=quiet)
    return tasks


def run_build(config: Config, jobs: int | None = None, quiet: bool = False, stream=None) -> int:
    """One build; returns doit's exit code (0 ok, 1 a task failed, 2+ doit errors)."""
    gc.freeze()  # FINDINGS: the collector costs a third of a no-op build
    tasks = build_namespace(config, quiet=quiet, stream=stream)
    jobs = jobs or config.jobs
    argv = ["run"]
    if jobs > 1:
        argv += ["-n", str(jobs), "-P", "process"]
    return DoitMain(ModuleTaskLoader(tasks)).run(argv)

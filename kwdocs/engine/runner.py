"""Run the doit rule set for a configuration, in this process.

``kwdocs.engine.incremental.run_build`` (``kwdocs build`` and friends) comes through
here for doit; ``doit`` at the repository root loads the same namespace from
``dodo.py``.
"""
from __future__ import annotations

import io
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kwdocs import mistakes
from kwdocs.config import Config
from kwdocs.engine import workers
from kwdocs.engine.build_session import LOCAL, BuildSession
from kwdocs.formats import format_of
from kwdocs.scan import ScanResult, scan
from kwdocs.store import journal as ledger, owned, snapshot, state, writer as output


def build_namespace(config: Config, scanned: ScanResult | None = None, quiet: bool = False,
                    stream=None, only=None, session: BuildSession = LOCAL) -> dict:
    """The dodo namespace with kwdocs' reporter attached (``only``, ``session``: see ``tasks.namespace``)."""
    # doit and the task rules only when tasks run: a no-op build and a current check stop before
    from kwdocs.engine.summary import BuildReporter
    from kwdocs.engine.tasks import namespace

    scanned = scanned if scanned is not None else scan(config)
    tasks = namespace(config, scanned, only, session)
    tasks["DOIT_CONFIG"]["reporter"] = BuildReporter(stream or sys.stdout, {}, config=config,
                                                    scanned=scanned, quiet=quiet)
    return tasks


def run_all(config: Config, scanned: ScanResult, jobs: int, quiet: bool, stream,
            counts: dict[str, int] | None, session: BuildSession = LOCAL) -> int:
    """doit over every task, in the build's ``session``; when a step met damaged state
    (``state.damaged``), the state starts over and doit runs again: damage costs time, never
    correctness."""
    snapshot.forget(config)     # until this build succeeds, no snapshot vouches for the output
    code = 1
    for _ in range(2):
        damage = state.damaged(config)
        if damage is not None:
            sys.stderr.write(f"kwdocs: {damage}; building the state again\n")
            written_before = set(ledger.load(config))
            state.start_over(config)
        state.mark_format(config)
        tasks = build_namespace(config, scanned, quiet=quiet, stream=stream, session=session)
        reporter = tasks["DOIT_CONFIG"]["reporter"]
        if damage is not None:
            reporter.tidy = lambda: _remove_unlisted(config, written_before)  # noqa: B023 - run within this attempt
        code = _run_tasks(tasks, jobs, config, session)
        if counts is not None:
            for key in ("written", "removed"):
                counts[key] = counts.get(key, 0) + reporter.counts[key]
            counts["unsettled"] = len(reporter.unsettled)   # pages left as they were: nothing to vouch for
        if state.damaged(config) is None:
            return code
    sys.stderr.write(f"kwdocs: {state.damaged(config)} again after building the state again\n")
    return code or 1


def _run_tasks(tasks: dict, jobs: int, config: Config, session: BuildSession) -> int:
    """doit over a build's tasks: on the build's Dask cluster when it has one (``cluster``)."""
    if session.remote is not None:
        return session.remote.run(tasks, config, run_doit)
    return run_doit(tasks, jobs, config)


def _remove_unlisted(config: Config, written_before: set[str]) -> int:
    """After the state started over: the pages kwdocs wrote before that it no longer writes
    (their records were lost with the state), if they still hold what kwdocs wrote."""
    now = state.written_pages(config)
    # the site's files by the pages they are of: a search script's record went with the state
    gone = {page for page in written_before if format_of(config, page) is None} - now
    gone |= owned.other_forms(config, gone)
    vouched, _ = ledger.vouched(config, gone, ledger.load(config))
    return sum(output.remove(config.out, config.out / page) for page in sorted(vouched))


def run_dry(config: Config, scanned: ScanResult) -> int:
    """The build's own tasks, in this process, under the caller's ``output.dry_run``: doit reads
    its records from a copy in memory (none when the dry run is blank), so no file is written,
    in the output folder or anywhere else."""
    if config.cache:
        # the shared cache's module only for a build that has one
        from kwdocs.store.cache import check_store
        check_store(config)
    records = None
    if not output.dry_blank() and state.doit_records_readable(config.state / state.DOIT_DB):
        records = config.state / state.DOIT_DB
    tasks = build_namespace(config, scanned, quiet=True, stream=io.StringIO())
    # every step, the site's search data and tree too (html = true): check judges every file a build writes
    tasks["DOIT_CONFIG"] = dict(tasks["DOIT_CONFIG"], dep_file=":memory:")
    with _records_in_memory(records):
        return run_doit(tasks, 1)


@contextmanager
def _records_in_memory(records: Path | None) -> Iterator[None]:
    """While doit runs: its database in memory, a copy of ``records`` (read-only) when given."""
    # doit only when tasks run: a no-op build and a current check stop before
    from doit.dependency import SqliteDB

    connect = SqliteDB._sqlite3

    def in_memory(self, name: str) -> sqlite3.Connection:
        connection = connect(self, ":memory:")
        if records is not None:
            source = sqlite3.connect(f"file:{records}?mode=ro", uri=True)
            try:
                source.backup(connection)
            finally:
                source.close()
        return connection

    SqliteDB._sqlite3 = in_memory
    try:
        yield
    finally:
        SqliteDB._sqlite3 = connect


@contextmanager
def _without_plugins() -> Iterator[None]:
    """While doit runs: its plug-in look-ups (commands, loaders, backends, reporters) find none.
    kwdocs runs doit's own ``run`` with its own loader, backend, checker and reporter, so no
    package's plug-in has a part in it, and reading every package's entry points was a
    fiftieth of an edit's build."""
    # doit only when tasks run: a no-op build and a current check stop before
    import doit.plugin

    read = doit.plugin.entry_points_impl
    doit.plugin.entry_points_impl = lambda: _no_entry_points
    try:
        yield
    finally:
        doit.plugin.entry_points_impl = read


def _no_entry_points(group: str) -> tuple:
    return ()


def run_doit(tasks: dict, jobs: int, config: Config | None = None) -> int:
    """doit's ``run`` over a namespace, in ``jobs`` worker processes when more than one (a
    damaged record file of doit's is removed first: it only schedules, see ``state``)."""
    # doit only when tasks run: a no-op build and a current check stop before
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    from kwdocs.engine.dispatch import looking_ahead

    if config is not None:
        state.check_doit_records(config)
    argv = ["run"] + (["-n", str(jobs), "-P", "process"] if jobs > 1 else [])
    # a killed build must not leave workers holding the lock; a worker's next task waits for it
    with workers.dying_with_builder(), looking_ahead(), mistakes.doit_database_kept() as kept, \
            _without_plugins():
        # no config_filenames: the shell's folder's pyproject.toml or doit.cfg is no business of this build
        try:
            code = DoitMain(ModuleTaskLoader(tasks), config_filenames=()).run(argv)
        except mistakes.DoitStopped:
            code = 3    # doit's code for an error of its own; the line is kept, raised below
    if config is not None and code in (0, 1):     # doit saved its records: they are whole
        state.doit_records_verified(config)
    mistakes.raise_kept(getattr(tasks["DOIT_CONFIG"].get("reporter"), "mistakes", []) + kept)
    return code

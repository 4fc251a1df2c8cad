"""What a build tells the user: one line per problem, one summary line, and progress.

The summary is printed by the no-op build too, which never loads doit; the doit
reporter (``BuildReporter``, so that ``doit`` at the repository root and
``kwdocs build`` print the same thing) is made on first use.  Progress is one
self-overwriting line on a terminal and nothing at all when output is piped or
in CI.
"""
from __future__ import annotations

import functools
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from kwdocs.config import Config
from kwdocs.formats import formats_for
from kwdocs.scan import ScanResult
from kwdocs.store import state, writer as output


def problems(config: Config, scanned: ScanResult) -> list[tuple[str, str]]:
    """(path, line to print) for the scan's problems and those extraction recorded."""
    found = [(path, f"{path}: {message}") for path, message in scanned.problems]
    for path, line, message in output.read_json(config.state / "problems.json", []) or []:
        found.append((path, f"{path}:{line}: {message}" if line else f"{path}: {message}"))
    return found


def report(write, config: Config, scanned: ScanResult, written: int, removed: int, seconds: float,
           quiet: bool = False, counts: dict[str, int] | None = None) -> None:
    """The summary line; ``counts``: the build's counts, for each other format's pages written and
    removed (``<format>_written``, ``<format>_removed``) and what a shared cache gave and took
    (when one is set)."""
    found = problems(config, scanned)
    if not quiet:
        for _, line in found:
            write(f"problem: {line}\n")
    counts = counts or {}
    site = "".join(f"{each.label}: {counts.get(f'{each.name}_written', 0):,} written, "
                   f"{counts.get(f'{each.name}_removed', 0):,} removed, " for each in formats_for(config)) \
        if counts else ""
    write(f"kwdocs: {len(scanned.files):,} files scanned, {written:,} pages written, {removed:,} removed, {site}"
          f"{len({path for path, _ in found}):,} files with problems{_cache_note(config, counts)}"
          f"{_cluster_note(config, counts)} "
          f"({seconds:.2f} s)\n")


def _cache_note(config: Config, counts: dict[str, int]) -> str:
    """With a shared cache, what it gave and took: whether a build extracted anything is plain."""
    if not config.cache or not counts:
        return ""
    return (f", {counts.get('extracted', 0):,} files extracted, {counts.get('cache_hits', 0):,} from the cache, "
            f"{counts.get('cache_stored', 0):,} entries stored in it")


def _cluster_note(config: Config, counts: dict[str, int]) -> str:
    """With a Dask scheduler, how much of the work its workers did (the rest was done here)."""
    if not config.scheduler or "cluster_extracted" not in counts:     # no doit run: no cluster either
        return ""
    return (f", on the cluster: {counts.get('cluster_extracted', 0):,} files extracted, "
            f"{counts.get('cluster_rendered', 0):,} rendered")


def progress_wanted(stream) -> bool:
    return stream.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


if TYPE_CHECKING:
    class _Reporter:
        """What ``_Counting`` uses of doit's ``ConsoleReporter`` (untyped), which it is mixed into."""

        def __init__(self, outstream: Any, options: dict) -> None: ...
        def add_failure(self, task: Any, fail: Any) -> None: ...
        def complete_run(self) -> None: ...
        def write(self, text: str) -> None: ...
else:
    _Reporter = object      # doit is imported only when a build runs tasks (``_reporter_class``)


class _Counting(_Reporter):
    """``BuildReporter`` but for doit's ``ConsoleReporter`` below it: counts what the tasks
    report and prints problems and the summary at the end."""

    desc = "kwdocs summary"

    def __init__(self, outstream, options, *, config: Config, scanned: ScanResult, quiet: bool = False):
        super().__init__(outstream, options)
        self.config = config
        self.scanned = scanned
        self.quiet = quiet
        self.counts = {"written": 0, "removed": 0, "extracted": 0, "cache_hits": 0, "cache_stored": 0,
                       "html_written": 0, "html_removed": 0, "cluster_extracted": 0, "cluster_rendered": 0,
                       "cache_unsigned": 0, **{f"{each.name}_{what}": 0 for each in formats_for(config)
                                               for what in ("written", "removed")}}
        self.files_total = len(scanned.files)
        self.files_done = 0
        self.files_rendered = 0
        self.render_started: float | None = None
        self.started = time.monotonic()
        self.progress = progress_wanted(sys.stderr) and not quiet
        self.last_draw = 0.0
        self.failed = False
        self.mistakes: list[str] = []
        self.cache_said: set[str] = set()
        self.tidy = None    # called before the summary of a build that went well: pages it removed
        self.unsettled: set[str] = set()    # files whose pages wait: changed since they were extracted

    def execute_task(self, task):
        pass

    def skip_uptodate(self, task):
        pass

    def add_success(self, task):
        values = task.values or {}
        for key in self.counts:
            self.counts[key] += int(values.get(key, 0) or 0)
        self.unsettled.update(values.get("unsettled_files") or ())     # ``steps.render.UNSETTLED_FILES``
        for line in values.get("cache_said") or ():
            if line not in self.cache_said:     # each worker process says its store is down once
                self.cache_said.add(line)
                self._clear()
                sys.stderr.write(f"{line}\n")
        step = task.name.removeprefix("kwdocs:")     # a dodo.py's ``kwdocs_tasks`` (kwdocs.doit)
        if step.startswith("extract:"):
            self.files_done += int(values.get("files", 0) or 0)
            self._draw()
        elif step.startswith("render:"):    # the pages, the site's too with --html
            self.files_rendered += int(values.get("files", 0) or 0)
            self._draw("pages of", self.files_rendered, self.render_started)

    def add_failure(self, task, fail):
        from kwdocs.engine.tasks import Mistake  # doit's; this class exists only once doit runs

        self.failed = True
        if isinstance(fail, Mistake):     # the user's set-up: one line, after doit (see kwdocs.mistakes)
            self.mistakes.append(fail.message)
            return
        self._clear()
        super().add_failure(task, fail)

    def _draw(self, what: str = "", done: int | None = None, since: float | None = None) -> None:
        """The progress line: files extracted, or (``what``) the files whose pages are made."""
        now = time.monotonic()
        if what and self.render_started is None:
            self.render_started = since = now
        if not self.progress or now - self.last_draw < 0.1:
            return
        self.last_draw = now
        done = self.files_done if done is None else done
        elapsed = now - (self.started if since is None else since)
        rate = done / elapsed if elapsed else 0.0
        left = (self.files_total - done) / rate if rate else 0.0
        label = f"{what} " if what else ""
        sys.stderr.write(f"\rkwdocs: {label}{done:,}/{self.files_total:,} files, "
                         f"{rate:,.0f}/s, {left:,.0f}s left \x1b[K")
        sys.stderr.flush()

    def _clear(self) -> None:
        if self.progress and self.last_draw:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    def complete_run(self):
        self._clear()
        super().complete_run()
        if self.mistakes:       # the one line the command ends with says it all
            return
        if state.damaged(self.config) is not None:
            return      # the build starts the state over and runs again: its summary will tell
        if self.tidy is not None and not self.failed:
            self.counts["removed"] += self.tidy()
        if self.counts["cache_unsigned"]:     # one line for all of them, from every task and worker
            # the shared cache's module only for a build that used one
            from kwdocs.store.cache import unsigned_line
            sys.stderr.write(unsigned_line(self.config.cache, self.counts["cache_unsigned"]) + "\n")
        report(self.write, self.config, self.scanned, self.counts["written"], self.counts["removed"],
               time.monotonic() - self.started, self.quiet, self.counts)
        if self.config.cache and self.counts["cache_stored"]:
            # the shared cache's module only for a build that used one
            from kwdocs.store.cache import shared_cache
            cache = shared_cache(self.config)
            if cache is not None:
                cache.evict()


@functools.cache
def _reporter_class() -> type:
    # doit only when a build runs tasks (see ``__getattr__``)
    from doit.reporter import ConsoleReporter
    return type("BuildReporter", (_Counting, ConsoleReporter), {"__module__": __name__})


def __getattr__(name: str) -> Any:
    """``BuildReporter`` imports doit: only when a build runs tasks (PEP 562)."""
    if name == "BuildReporter":
        return _reporter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

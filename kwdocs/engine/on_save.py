"""``kwdocs watch``: rebuild the pages of what was just saved, as it is saved.

Editors save in many ways (in place; a temporary file renamed over the old
one, as VS Code and ``sed -i`` do; JetBrains' and vim's renaming dances), so
an event here only says "this path may have changed": watchdog's thread
records the path and nothing else, and after a quiet window the loop rescans
those folders and rebuilds what changed on disk (``kwdocs.engine.incremental``).

What is not watched, so that kwdocs never wakes itself up: the output and
state folders and version control (their events are dropped, and where they
sit at the top of the tree they get no watches at all), editors' temporary
files, and events that read without writing (an ``event_filter``).  What
goes wrong in watchers is handled: a handler that raises cannot kill the
observer, a dead observer is restarted, a kernel queue overflow (watchdog
only logs it) and anything else that may lose events rescan the whole tree,
and a tree with more folders than free inotify watches is reported at start.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable

from watchdog.events import (
    FileClosedEvent,
    FileModifiedEvent,
    FileSystemEventHandler,
)

from kwdocs.config import Config, ConfigError
from kwdocs.context import drop_contexts
from kwdocs.engine.incremental import Outcome, Rebuilder
from kwdocs.engine.rescan import Changes
from kwdocs.engine.watches import TreeObserver, count_folders, inotify_watches, watch_limit_warning
from kwdocs.mistakes import describe
from kwdocs.scan import EDITOR_TEMP_FILES, VCS_FOLDERS
from kwdocs.store.lock import locked

QUIET_SECONDS = 0.05        # a save's events arrive within a few ms of each other; a checkout's keep coming
MAX_WAIT_SECONDS = 2.0      # a burst that never pauses still gets a rebuild this often
UNSETTLED_RETRIES = 3       # rebuilds in a row a file changed since extraction is read again without an event
IDLE_SECONDS = 0.5          # how often the idle loop looks at the observer's health
LIST_LIMIT = 3              # changed files named on a status line


# ---------------------------------------------------------------- what changed, debounced

class Pending:
    """Paths events named since the last rebuild; filled by watchdog's thread, taken by the loop."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._changes = Changes()
        self._settings = False
        self._first = self._last = 0.0

    def _touch(self) -> None:
        now = time.monotonic()
        if not self:
            self._first = now
            self._condition.notify()
        self._last = now

    def __bool__(self) -> bool:
        changes = self._changes
        return bool(changes.written or changes.files or changes.folders or changes.everything or self._settings)

    def add(self, rel: str, kind: str) -> None:
        """``kind``: "written" (a file's content), "files" (a file appeared, went or moved),
        "folders" (the same for a folder)."""
        with self._condition:
            self._touch()
            getattr(self._changes, kind).add(rel)

    def everything(self) -> bool:
        """Events may have been lost: the next rebuild rescans the whole tree; False if already so."""
        with self._condition:
            self._touch()
            already, self._changes.everything = self._changes.everything, True
            return not already

    def settings(self) -> None:
        with self._condition:
            self._touch()
            self._settings = True

    def take(self, quiet: float, max_wait: float, timeout: float) -> tuple[Changes, bool] | None:
        """Wait for changes, then for ``quiet`` seconds without any (at most ``max_wait``
        after the first); return them and whether settings changed, or None after ``timeout``."""
        with self._condition:
            if not self and not self._condition.wait(timeout) and not self:
                return None
            while True:
                due = min(self._last + quiet, self._first + max_wait)
                now = time.monotonic()
                if now >= due:
                    taken, settings = self._changes, self._settings
                    self._changes, self._settings = Changes(), False
                    return taken, settings
                self._condition.wait(due - now)


class EventPaths:
    """Which paths an event names that can matter, relative to the source root."""

    def __init__(self, config: Config) -> None:
        self.configure(config)

    def configure(self, config: Config) -> None:
        self.src = str(config.src)
        self.out = str(config.out)
        self.settings = {str(path) for path in (config.config_file, *config.rules) if path}
        self.templates = str(config.templates) if config.templates else None

    def relevant(self, path: str) -> str | None:
        if path == self.out or path.startswith(self.out + os.sep) or not path.startswith(self.src + os.sep):
            return None
        rel = path[len(self.src) + 1:].replace(os.sep, "/")
        parts = rel.split("/")
        if any(part in VCS_FOLDERS for part in parts) or EDITOR_TEMP_FILES.match(parts[-1]):
            return None
        return rel

    def is_setting(self, path: str) -> bool:
        return path in self.settings or bool(self.templates and path.startswith(self.templates + os.sep))


def make_handler(paths: EventPaths, pending: Pending):
    """A watchdog handler that only records paths (and can never raise into watchdog's thread)."""
    class RecordingHandler(FileSystemEventHandler):
        def dispatch(self, event) -> None:
            try:
                kind = ("folders" if event.is_directory else
                        "written" if isinstance(event, (FileModifiedEvent, FileClosedEvent)) else "files")
                for path in (event.src_path, getattr(event, "dest_path", "")):
                    path = os.fsdecode(path)
                    if not path:
                        continue
                    if paths.is_setting(path):
                        pending.settings()
                    rel = paths.relevant(path)
                    if rel is not None:
                        pending.add(rel, kind)
            except Exception as error:   # noqa: BLE001 -- an exception here would stop watchdog's thread
                print(f"kwdocs: could not handle an event ({error}); rescanning everything", file=sys.stderr)
                pending.everything()

    return RecordingHandler()


class LostEvents(logging.Handler):
    """watchdog only logs a kernel queue overflow: turn that into a full rescan, and say so."""

    def __init__(self, pending: Pending) -> None:
        super().__init__(logging.WARNING)
        self.pending = pending

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "overflow" in message.lower():
            if self.pending.everything():
                print("kwdocs: events were lost (inotify queue overflow); rescanning everything", file=sys.stderr)
        else:
            print(f"kwdocs: watchdog: {message}", file=sys.stderr)


# ---------------------------------------------------------------- the loop

def status_line(outcome: Outcome) -> str:
    """What changed, pages written and removed, milliseconds: one line per rebuild."""
    changed = outcome.changed
    if not changed:
        what = "tree rescanned"
    elif len(changed) == 1:
        rel = changed[0]
        what = f"{rel} {'added' if rel in outcome.added else 'deleted' if rel in outcome.deleted else 'changed'}"
    else:
        kinds = [f"{len(items):,} {name}" for items, name in ((outcome.added, "added"), (outcome.modified, "changed"),
                                                              (outcome.deleted, "deleted")) if items]
        shown = ", ".join(changed[:LIST_LIMIT]) + (", ..." if len(changed) > LIST_LIMIT else "")
        what = f"{len(changed):,} files ({', '.join(kinds)}: {shown})"
    result = "build FAILED, " if outcome.code else ""
    return (f"kwdocs: {time.strftime('%H:%M:%S')} {what}: {result}{outcome.written:,} pages written, "
            f"{outcome.removed:,} removed ({outcome.seconds * 1000:,.0f} ms)")


def watch(config: Config, jobs: int | None = None, poll: bool = False, quiet: bool = False,
          reload: Callable[[], Config] | None = None,
          after_build: Callable[[Config, Outcome], None] | None = None,
          started: Callable[[Config], int | None] | None = None) -> int:
    """Build, then rebuild on every change until interrupted (Ctrl-C, SIGTERM).

    ``kwdocs serve`` runs on this loop: ``after_build`` runs under the lock after every build
    that ran (it makes the site), and ``started`` once after the first build instead of the
    "watching" line (it starts the web server); an exit code from it ends the loop."""
    pending = Pending()
    paths = EventPaths(config)
    tree = TreeObserver(config, make_handler(paths, pending), poll)
    lost = LostEvents(pending)
    watchdog_log = logging.getLogger("watchdog")
    watchdog_log.addHandler(lost)
    rebuilder = Rebuilder(config)
    try:
        tree.start()    # before the first build: an edit made during it is not lost
        if not poll and (counts := inotify_watches()) is not None:
            warning = watch_limit_warning(count_folders(tree.plan), *counts)
            if warning:
                print(warning, file=sys.stderr)
        with locked(config.state):
            first = rebuilder.full(jobs=jobs, quiet=quiet)
            if after_build is not None:
                after_build(config, first)
        if started is None:
            print(f"kwdocs: watching {config.src} ({'polling' if poll else 'inotify'}); Ctrl-C to stop", flush=True)
        elif (code := started(config)) is not None:
            return code
        retries: dict[str, int] = {}    # unsettled file -> rebuilds in a row that left it so
        while True:
            taken = pending.take(QUIET_SECONDS, MAX_WAIT_SECONDS, IDLE_SECONDS)
            changes, settings = taken or (None, False)
            if settings and reload is not None and changes is not None:
                config, rebuilder = _reloaded(config, rebuilder, reload)
                paths.configure(config)
                changes.everything = True
            if changes is not None and tree.reaches_plan(changes):
                tree.replan()       # first: a folder watched on its own that went has a dead thread
            if not tree.healthy():
                print("kwdocs: the file watcher stopped; restarting it and rescanning everything", file=sys.stderr)
                tree.stop()
                tree.start()
                changes = Changes(everything=True)
            if changes is None:
                continue
            try:
                with locked(config.state):
                    outcome = rebuilder.update(changes)
                    if outcome is not None:
                        for line in outcome.problems:
                            print(f"problem: {line}")
                        print(status_line(outcome), flush=True)
                        if after_build is not None:
                            after_build(config, outcome)
                        # their last change may have come before the build read them: no event follows
                        retries = {rel: retries.get(rel, 0) + 1 for rel in outcome.unsettled}
                        for rel in outcome.unsettled:
                            if retries[rel] <= UNSETTLED_RETRIES:
                                pending.add(rel, "written")
            except Exception as error:   # noqa: BLE001 -- keep watching; the next change builds in full
                print(describe(error) or f"kwdocs: rebuild failed: {type(error).__name__}: {error}", file=sys.stderr)
                rebuilder.saved_snapshot = None
    except KeyboardInterrupt:
        print("kwdocs: stopped watching", flush=True)
        return 0
    finally:
        watchdog_log.removeHandler(lost)
        tree.stop()


def _reloaded(config: Config, rebuilder: Rebuilder, reload: Callable[[], Config]) -> tuple[Config, Rebuilder]:
    """The settings changed: read them again (bad ones keep the old settings)."""
    try:
        new = reload()
    except ConfigError as error:
        for problem in error.problems:
            print(f"kwdocs: {problem}", file=sys.stderr)
        print("kwdocs: keeping the previous settings", file=sys.stderr)
        return config, rebuilder
    if new.out != config.out:
        print("kwdocs: the output folder changed: restart kwdocs watch to use it", file=sys.stderr)
        return config, rebuilder
    print("kwdocs: settings changed; rebuilding everything", flush=True)
    drop_contexts()
    fresh = Rebuilder(new)
    fresh.scanned = rebuilder.scanned
    return new, fresh

"""Which folders of a tree ``kwdocs watch`` watches, and the watchdog observer that holds those
watches in step with the tree; the inotify watches a tree needs, against those free.

Recursive watches cannot leave a folder out, so the output folder, version control and the
top-level folders the scan never enters get no watches where they sit at the top of the tree
(``kwdocs.engine.on_save`` drops their events anywhere else)."""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
)
from watchdog.observers import Observer

from kwdocs.config import Config
from kwdocs.engine.rescan import Changes
from kwdocs.scan import scan_folder


def watched_events() -> list:
    """Writes, creations, deletions and moves; not opened / closed-without-writing, which a
    build that only reads sources would otherwise wake itself up with."""
    return [FileModifiedEvent, FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


def watch_plan(config: Config) -> dict[str, bool]:
    """Folder -> watched recursively?  Recursive watches cannot leave a folder out, so the
    folders above a left-out one (the output folder, version control, top-level folders the scan
    never enters such as an ignored ``node_modules``) are watched alone and their other
    subfolders recursively."""
    src = str(config.src)
    left_out = {str(config.out)}
    for entry in _subfolders(src):
        if scan_folder(config, entry.name, recursive=False) is None:
            left_out.add(entry.path)

    def plan(folder: str) -> Iterator[tuple[str, bool]]:
        if not any(path.startswith(folder + os.sep) for path in left_out):
            yield folder, True
            return
        yield folder, False
        for entry in _subfolders(folder):
            if entry.path not in left_out:
                yield from plan(entry.path)

    return dict(plan(src))


def _subfolders(folder: str) -> list[os.DirEntry]:
    try:
        return sorted((entry for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)),
                      key=lambda entry: entry.name)
    except OSError:
        return []


def count_folders(plan: dict[str, bool]) -> int:
    """The inotify watches a plan needs: one per folder."""
    total = 0
    for folder, recursive in plan.items():
        if recursive:
            total += sum(1 for _ in os.walk(folder))
        else:
            total += 1
    return total


def inotify_watches(proc: Path = Path("/proc")) -> tuple[int, int] | None:
    """(the per-user limit, watches this user's other processes hold now); None off Linux."""
    try:
        limit = int((proc / "sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return None
    used = 0
    uid, own = os.getuid(), str(os.getpid())
    for process in proc.glob("[0-9]*"):
        try:
            if process.name == own or process.stat().st_uid != uid:
                continue
            for fd in (process / "fd").iterdir():
                if os.readlink(fd) == "anon_inode:inotify":
                    used += (process / "fdinfo" / fd.name).read_text().count("inotify wd:")
        except OSError:
            continue
    return limit, used


def watch_limit_warning(needed: int, limit: int, used: int) -> str | None:
    available = max(limit - used, 0)
    if needed <= available:
        return None
    return (f"kwdocs: warning: this tree has {needed:,} folders to watch but only {available:,} of this user's "
            f"{limit:,} inotify watches are free (fs.inotify.max_user_watches): changes in some folders would "
            f"go unnoticed. Use `kwdocs watch --poll`, or raise the limit "
            f"(sudo sysctl fs.inotify.max_user_watches={max(limit * 2, used + needed * 2)}).")


class TreeObserver:
    """A watchdog observer over the plan, kept in step with the tree's top-level folders."""

    def __init__(self, config: Config, handler, poll: bool) -> None:
        self.config = config
        self.handler = handler
        self.poll = poll
        self.observer: Any = None   # a watchdog observer, once started
        self.scheduled: dict[tuple[str, bool], object] = {}
        self.plan: dict[str, bool] = {}

    def _new_observer(self):
        if self.poll:
            # only with --poll
            from watchdog.observers.polling import PollingObserver
            return PollingObserver()
        return Observer()

    def start(self) -> None:
        self.observer = self._new_observer()
        self.scheduled = {}
        self.replan()
        self.observer.start()

    def replan(self) -> None:
        """Schedule and unschedule watches to match the current plan."""
        self.plan = watch_plan(self.config)
        wanted = set(self.plan.items())
        for key in set(self.scheduled) - wanted:
            try:
                self.observer.unschedule(self.scheduled.pop(key))
            except (KeyError, OSError):
                pass
        for key in sorted(wanted - set(self.scheduled)):
            folder, recursive = key
            try:
                self.scheduled[key] = self.observer.schedule(self.handler, folder, recursive=recursive,
                                                             event_filter=watched_events())
            except OSError as error:
                print(f"kwdocs: cannot watch {folder}: {error.strerror or error}"
                      + ("" if self.poll else "; try `kwdocs watch --poll`"), file=sys.stderr)

    def reaches_plan(self, changes: Changes) -> bool:
        """Whether the changes can alter the plan: folders appearing or going where only some are watched."""
        if changes.everything:
            return True
        alone = {os.path.relpath(folder, self.config.src).replace(os.sep, "/")
                 for folder, recursive in self.plan.items() if not recursive}
        alone = {"" if folder == "." else folder for folder in alone}
        return (any(rel.rpartition("/")[0] in alone for rel in changes.folders)
                or any(rel.rpartition("/")[0] in alone and rel.endswith(".gitignore") for rel in changes.files))

    def healthy(self) -> bool:
        """watchdog's threads die silently (an exception in an emitter, a failed read)."""
        observer = self.observer
        return observer is not None and observer.is_alive() and all(e.is_alive() for e in observer.emitters)

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=1.0)
            self.observer = None

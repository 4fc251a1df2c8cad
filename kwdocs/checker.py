"""doit's file checker, made safe for a source tree that changes under a running build.

doit's ``md5`` checker assumes every ``file_dep`` is a readable regular file
that holds still: a source deleted after the scan fails the build ("Dependent
file does not exist"), an unreadable one raises, and one replaced by a named
pipe blocks the build forever in ``open()``.  This checker keeps doit's rule
(timestamp, then size, then md5) for files that behave and, for the rest:

- a missing, unreadable or special file counts as changed, so its task runs
  and reports it as a problem, and its state is not saved (nothing is ever
  opened without ``O_NONBLOCK``);
- a source modified after the build started is "racily clean" (git's term):
  the facts may come from the content before the change while the md5 would
  be taken after it, so its state is not saved and the next build reads it again.

kwdocs' own state files (under the output folder) are written atomically by
the tasks themselves before doit checks them, and only when their content
changes (``kwdocs.output``): for them a new modification time means new
content, and they are never hashed.  Hashing them cost the process that
hands out doit's tasks about a second of a cold build, on a core the workers
need.
"""
from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from doit.dependency import MD5Checker

# The kernel stamps files from a clock that may lag time.time() by a tick.
CLOCK_TICK = 0.02
_GONE = os.stat_result((0,) * 10)   # st_mode 0: not a regular file


def regular_file_md5(path: str) -> str | None:
    """The md5 of a regular file's content; None if it is not one or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.md5()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


class SourceChecker(MD5Checker):
    """See the module docstring; ``own_folder`` is set per build by ``checker_for``."""

    own_folder = ""

    def __init__(self) -> None:
        self.build_started = time.time()

    def info(self, file_path: str) -> os.stat_result:
        try:
            return os.stat(file_path)
        except OSError:
            return _GONE

    def check_modified(self, file_path: str, file_stat: os.stat_result, state) -> bool:
        if not stat.S_ISREG(file_stat.st_mode):
            return True
        timestamp, size, md5 = state
        if file_stat.st_mtime == timestamp:
            return False
        if file_stat.st_size != size or file_path.startswith(self.own_folder):
            return True
        return md5 != regular_file_md5(file_path)

    def get_state(self, dep: str, current_state):
        try:
            info = os.stat(dep)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        own = dep.startswith(self.own_folder)
        if info.st_mtime >= self.build_started - CLOCK_TICK and not own:
            return None
        if current_state and current_state[0] == info.st_mtime:
            return None
        if own:
            return info.st_mtime, info.st_size, ""
        md5 = regular_file_md5(dep)
        return None if md5 is None else (info.st_mtime, info.st_size, md5)


def checker_for(out: Path) -> type[SourceChecker]:
    """The checker class for one output folder (doit instantiates it without arguments).

    It keeps the name ``SourceChecker``: doit stores the checker's class name
    and rebuilds everything when it changes.
    """
    return type("SourceChecker", (SourceChecker,), {"own_folder": str(out) + os.sep})

"""doit's file checker, made safe for a source tree that changes under a running build.

doit's ``md5`` checker assumes every ``file_dep`` is a readable regular file
that holds still: a source deleted after the scan fails the build ("Dependent
file does not exist"), an unreadable one raises, and one replaced by a named
pipe blocks the build forever in ``open()``.  This checker decides by time stamp
and size alone, and never opens a file:

- a file with a new time stamp or size counts as changed, and its unit's
  extract task reads it; there the file's content hash (SHA-256, kept in its
  facts) decides whether it is extracted again (``build.extract_file``), so a
  file touched or checked out again costs one read, and nothing downstream;
- a missing, unreadable or special file counts as changed, so its task runs
  and reports it as a problem, and its state is not saved;
- a source modified after the build started is "racily clean" (git's term):
  the facts may come from the content before the change while the time stamp
  would be taken after it, so its state is not saved and the next build reads
  it again.

doit's own rule hashed every source with md5 in the process that hands out
the tasks, after extraction had hashed it already, on a core the workers need.
The sources themselves are no longer ``file_dep``s: an extract task compares one
stamp of its unit's files (``tasks.SourcesUnchanged``, by the same rules); the
checker now judges the state shards the later steps depend on.
"""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from doit.dependency import FileChangedChecker

from kwdocs.store import writer as output

# The kernel stamps files from a clock that may lag time.time() by a tick.
CLOCK_TICK = 0.02
_GONE = os.stat_result((0,) * 10)   # st_mode 0: not a regular file


class SourceChecker(FileChangedChecker):
    """See the module docstring; ``own_folder`` is set per build by ``checker_for``.

    The state doit saves per file stays ``(mtime, size, digest)``, with an empty
    digest, so that states saved by earlier versions (with md5s) still read."""

    own_folder = ""

    def __init__(self) -> None:
        self.build_started = time.time()

    def info(self, file_path: str) -> os.stat_result:
        try:
            return os.stat(file_path)
        except OSError:
            return _GONE

    def check_modified(self, file_path: str, file_stat: os.stat_result, state) -> bool:
        if not stat.S_ISREG(file_stat.st_mode) or output.dry_changed(file_path):
            return True
        timestamp, size, _digest = state
        return file_stat.st_mtime != timestamp or file_stat.st_size != size

    def get_state(self, dep: str, current_state):
        try:
            info = os.stat(dep)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_mtime >= self.build_started - CLOCK_TICK and not dep.startswith(self.own_folder):
            return None
        if current_state and current_state[0] == info.st_mtime and current_state[1] == info.st_size:
            return None
        return info.st_mtime, info.st_size, ""


def checker_for(out: Path) -> type[SourceChecker]:
    """The checker class for one output folder (doit instantiates it without arguments).

    It keeps the name ``SourceChecker``: doit stores the checker's class name
    and rebuilds everything when it changes.
    """
    return type("SourceChecker", (SourceChecker,), {"own_folder": str(out) + os.sep})

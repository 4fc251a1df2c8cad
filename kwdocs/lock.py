"""One kwdocs process at a time per output folder.

A hook may run while ``kwdocs watch`` is building: the second process waits
for the first (saying so) instead of interleaving writes.  ``flock`` is
released by the kernel when a process dies, so a killed build leaves no stale
lock behind.
"""
from __future__ import annotations

import fcntl
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


class Busy(Exception):
    """Another kwdocs process holds the output folder."""


@contextmanager
def locked(state: Path, wait: float | None = None, announce=sys.stderr) -> Iterator[None]:
    """Hold the state folder's lock; wait up to ``wait`` seconds (None: forever)."""
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# kwdocs' own state: never commit it\n*\n", encoding="utf-8")
    handle = open(state / "lock", "a+")
    try:
        deadline = None if wait is None else time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise Busy(f"another kwdocs process is using {state.parent}") from None
                if not told and announce is not None:
                    announce.write(f"kwdocs: waiting for another kwdocs process using {state.parent} ...\n")
                    told = True
                time.sleep(0.05)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        handle.close()


def hold_for_process(state: Path) -> None:
    """Take the lock until this process exits (for ``doit`` runs through ``dodo.py``)."""
    global _HELD
    _HELD = locked(state)
    _HELD.__enter__()


_HELD = None

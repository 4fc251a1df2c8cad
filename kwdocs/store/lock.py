"""One kwdocs process at a time per output folder.

A hook may run while ``kwdocs watch`` is building: the second process waits
for the first (saying so) instead of interleaving writes.  ``flock`` is
released by the kernel when a process dies, so a killed build leaves no stale
lock behind; it does leave its pid in the lock file (a holder that lets go in
good order empties it; one interrupted or failing with an error does not), and
the next holder then sweeps away the temporary files of the writes it never
finished.
"""
from __future__ import annotations

import atexit
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kwdocs.store import writer as output
from kwdocs.store.owned import STATE_GITIGNORE
from kwdocs.store.state import LOCK


class Busy(Exception):
    """Another kwdocs process holds the output folder."""


@contextmanager
def locked(state: Path, wait: float | None = None, announce=sys.stderr) -> Iterator[None]:
    """Hold the state folder's lock; wait up to ``wait`` seconds (None: forever)."""
    state.mkdir(parents=True, exist_ok=True)
    output.write_if_changed(state, state / ".gitignore", STATE_GITIGNORE)
    handle = open(state / LOCK, "a+")  # noqa: SIM115 - held until the build ends
    held = finished = False
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
        held = True
        handle.seek(0)
        if handle.read().strip():  # the last holder died holding the lock (SIGKILL, power cut)
            output.sweep_temporaries(state.parent)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
        finished = True
    finally:
        if held and finished:
            handle.truncate(0)  # released in good order: nothing for the next holder to sweep
        # else (Ctrl-C, an error): workers may have died mid-write.  The pid stays, and the next
        # holder sweeps, once the kernel lets it in, that is once every worker is gone
        handle.close()


@contextmanager
def shared(state: Path, announce=sys.stderr) -> Iterator[None]:
    """For a reader that must write nothing (``kwdocs check``): wait while a build holds the
    lock, creating nothing; without a lock file no kwdocs process ever wrote here."""
    try:
        handle = open(state / LOCK, "rb")  # noqa: SIM115 - closed below, after the wait
    except FileNotFoundError:
        handle = None
    if handle is None:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            if announce is not None:
                announce.write(f"kwdocs: waiting for another kwdocs process using {state.parent} ...\n")
            fcntl.flock(handle, fcntl.LOCK_SH)
        yield


def hold_for_process(state: Path) -> None:
    """Take the lock until this process exits (for ``doit`` runs through ``dodo.py``)."""
    global _HELD
    _HELD = locked(state)
    _HELD.__enter__()
    atexit.register(_HELD.__exit__, None, None, None)


_HELD = None

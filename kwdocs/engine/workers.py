"""Worker processes of a parallel build die with the build.

``-j N`` runs doit's tasks in forked worker processes.  When the build is
killed (SIGKILL, the OOM killer, a CI job cancelled by pid) its workers would
live on, idle, forever, still holding the output folder's lock through the
file they inherited, so the next build would wait for them forever.  On Linux
each worker forked during a build asks the kernel to kill it when the build
dies.
"""
from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1
_building = False      # forks outside a build (a watcher's helpers, tests) are left alone
_builder_pid = 0
_registered = False


def _remember_builder() -> None:
    global _builder_pid
    _builder_pid = os.getpid() if _building else 0


def _die_with_builder() -> None:
    if not _builder_pid:
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: nothing to ask for
        return
    if os.getppid() != _builder_pid:  # the builder died before the request took effect
        os._exit(1)


@contextmanager
def dying_with_builder() -> Iterator[None]:
    """While a build runs, every process this one forks dies when this one dies, and when the
    build is interrupted (Ctrl-C) no worker outlives it."""
    global _building, _registered
    if not _registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_remember_builder, after_in_child=_die_with_builder)
        _registered = True
    _building = True
    try:
        yield
    except BaseException:
        stop_workers()
        raise
    finally:
        _building = False


def stop_workers(grace: float = 1.0) -> None:
    """Terminate the worker processes still alive, and reap them.

    doit terminates its workers when interrupted while it waits for results,
    but not while it is still starting them: a worker started just before
    Ctrl-C then waits for its next task forever, and Python's exit waits for
    that worker (seen once in CI: the build hung after saying "interrupted").
    """
    # only to stop a parallel build's workers: a no-op build starts none
    import multiprocessing

    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(grace)
        if child.is_alive():
            child.kill()
            child.join()

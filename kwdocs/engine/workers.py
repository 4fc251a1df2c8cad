"""Worker processes of a parallel build: they die with the build, and a large tree's
whole-tree steps run in a fresh interpreter of their own (``FreshWhenMany``).

``-j N`` runs doit's tasks in forked worker processes.  When the build is
killed (SIGKILL, the OOM killer, a CI job cancelled by pid) its workers would
live on, idle, forever, still holding the output folder's lock through the
file they inherited, so the next build would wait for them forever.  On Linux
each worker forked during a build asks the kernel to kill it when the build
dies.
"""
from __future__ import annotations

import ctypes
import io
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr
from typing import Any

from kwdocs.store import writer as output

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


def _started_fresh(parent: int) -> None:
    """In a fresh interpreter: killed when ``parent``, which started it, dies (it dies with the build)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: nothing to ask for
        return
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(1)


def _run_fresh(function: Callable[..., Any], args: tuple, kwargs: dict, installed: bool,
               down: list[str]) -> tuple[Any, list[str]]:
    """In a fresh interpreter, ``function`` as the process that started it would run it: the
    installed languages read if that process had read them (a step's pages list their kinds'
    groups), without saying again what it said of a broken one, and the shared caches it knows
    are down skipped; returns the result and the caches known down now."""
    from kwdocs import languages
    from kwdocs.store import cache

    if installed:
        with redirect_stderr(io.StringIO()):
            languages.read_installed()
    cache.note_down(down)
    return function(*args, **kwargs), cache.known_down()


class FreshWhenMany:
    """A whole-tree step, called as ``step(config, units, ..., changed=...)``, run in a fresh
    interpreter when at least ``units`` of its units changed (doit's ``changed``: none listed
    means all of them, as ``common.changed_units`` reads it), unless in a dry run (``kwdocs
    check``), whose writes this process records.

    A forked worker starts with the building process's pages resident (its task list, the
    scan), and a step over a large tree adds its own to them: in a fresh interpreter the step's
    peak is its own alone (bench/README.md, "Whole-tree steps in a fresh interpreter").  A
    fresh interpreter costs its start and imports (about half a second), which an edit's step,
    that reads a few units, does not pay.  doit reads the step's parameters through ``__wrapped__``.
    """

    def __init__(self, function: Callable[..., Any], units: int) -> None:
        self.__wrapped__, self.units = function, units

    def __call__(self, config: Any, units: Sequence[str], *args: Any, changed: Sequence[str] = (),
                 **kwargs: Any) -> Any:
        args, kwargs = (config, units, *args), dict(kwargs, changed=changed)
        if len(changed or units) < self.units or output.dry_running():
            return self.__wrapped__(*args, **kwargs)
        # only for a large tree's whole-tree step: a small build never loads them
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from kwdocs import languages
        from kwdocs.store import cache

        with ProcessPoolExecutor(1, multiprocessing.get_context("spawn"), initializer=_started_fresh,
                                 initargs=(os.getpid(),)) as pool:
            result, down = pool.submit(_run_fresh, self.__wrapped__, args, kwargs, languages.installed_read(),
                                       cache.known_down()).result()
        cache.note_down(down)
        return result

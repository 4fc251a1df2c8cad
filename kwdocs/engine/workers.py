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
import sys
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
    if _builder_pid:
        _die_with(_builder_pid)


def _die_with(parent: int) -> None:
    """This process killed when ``parent``, which started it, dies; ended now if it already has."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: nothing to ask for
        return
    if os.getppid() != parent:  # it died before the request took effect
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


# Run as ``python -c``: the parent's ``sys.path`` first (plain strings), so that kwdocs is found
# as the parent found it, whatever ran the parent (no main module of its is run again).
_FRESH_START = ("import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
                "from kwdocs.engine.workers import run_fresh; run_fresh()")


def run_fresh() -> None:
    """In a fresh interpreter (``FreshWhenMany``): read the call from standard input, run it as the
    process that started it would, write ``(True, result, caches known down)`` or ``(False,
    error, traceback)`` to standard output.  It dies with that process (``PR_SET_PDEATHSIG``);
    the installed languages are read if that process had read them (a step's pages list their
    kinds' groups), without saying again what it said of a broken one; the shared caches it knew
    are down are skipped.  The call's own output goes to standard error."""
    import pickle
    import traceback

    function, args, kwargs, parent, installed, down = pickle.load(sys.stdin.buffer)
    _die_with(parent)
    from kwdocs import languages
    from kwdocs.store import cache

    if installed:
        with redirect_stderr(io.StringIO()):
            languages.read_installed()
    cache.note_down(down)
    answer, sys.stdout = sys.stdout.buffer, sys.stderr
    try:
        outcome: tuple = (True, function(*args, **kwargs), cache.known_down())
    except Exception as error:  # noqa: BLE001 - handed to the parent, which raises it
        outcome = (False, error, traceback.format_exc())
    try:
        body = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 - an error that does not pickle: its text instead
        body = pickle.dumps((False, RuntimeError(repr(outcome[1])), traceback.format_exc()))
    answer.write(body)
    answer.flush()


class FreshWhenMany:
    """A whole-tree step, called as ``step(config, units, ..., changed=...)``, run in a fresh
    interpreter when at least ``units`` of its units changed (doit's ``changed``: none listed
    means all of them, as ``common.changed_units`` reads it), unless in a dry run (``kwdocs
    check``), whose writes this process records.

    A forked worker starts with the building process's pages resident (its task list, the
    scan), and a step over a large tree adds its own to them: in a fresh interpreter the step's
    peak is its own alone (bench/README.md, "Whole-tree steps in a fresh interpreter").  A
    fresh interpreter costs its start and imports (about half a second), which an edit's step,
    that reads a few units, does not pay.  It is started as ``python -c`` and handed the call
    as a pickle (multiprocessing's ``spawn`` would run the main script of whatever started the
    build again).  doit reads the step's parameters through ``__wrapped__``.
    """

    def __init__(self, function: Callable[..., Any], units: int) -> None:
        self.__wrapped__, self.units = function, units

    def __call__(self, config: Any, units: Sequence[str], *args: Any, changed: Sequence[str] = (),
                 **kwargs: Any) -> Any:
        args, kwargs = (config, units, *args), dict(kwargs, changed=changed)
        if len(changed or units) < self.units or output.dry_running() or not sys.executable:
            return self.__wrapped__(*args, **kwargs)
        # only for a large tree's whole-tree step: a small build never loads them
        import pickle
        import subprocess

        from kwdocs import languages
        from kwdocs.store import cache

        call = pickle.dumps(list(sys.path)) + pickle.dumps(
            (self.__wrapped__, args, kwargs, os.getpid(), languages.installed_read(), cache.known_down()))
        run = subprocess.run([sys.executable, "-c", _FRESH_START], input=call, stdout=subprocess.PIPE, check=False)
        try:
            done, value, more = pickle.loads(run.stdout)
        except Exception as error:  # killed, or out of memory: no answer
            raise RuntimeError(f"{getattr(self.__wrapped__, '__name__', 'a step')} in a fresh interpreter "
                               f"gave no answer (exit code {run.returncode})") from error
        if not done:
            value.add_note(f"in a fresh interpreter:\n{more}")
            raise value
        cache.note_down(more)
        return value

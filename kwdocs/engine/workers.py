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
import io
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

PR_SET_PDEATHSIG = 1
_building = False      # forks outside a build (a watcher's helpers, tests) are left alone
_builder_pid = 0
_registered = False
_worker = False        # this process is a worker a build forked (``apart`` forks again there)


def _remember_builder() -> None:
    global _builder_pid
    _builder_pid = os.getpid() if _building else 0


def _die_with_builder() -> None:
    global _worker
    if not _builder_pid:
        return
    _worker = True
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


class StepDied(RuntimeError):
    """A step run ``apart`` ended without a result (killed, out of memory)."""


def apart(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` run in a child forked for each call when this process is a worker of a
    parallel build, its result (and what it printed) handed back; else run here.

    A whole-tree step (link, keywords, assemble) takes memory in proportion to the tree, and a
    worker keeps that size for the rest of the build (CPython does not give freed memory back
    to the system), beside the other worker, through all of the rendering: the child's memory
    goes when it ends.  The child shares the worker's pages, so forking costs next to nothing.
    """
    def run(*args: Any, **kwargs: Any) -> Any:
        if not _worker:
            return function(*args, **kwargs)
        return _in_child(function, args, kwargs)
    run.__wrapped__ = function    # type: ignore[attr-defined]  # doit reads the parameters through it
    return run


def _in_child(function: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:    # the child: run, send (result or exception, output, errors), and end without cleanup
        os.close(reading)
        code = 0
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
        try:
            try:
                outcome: tuple = (True, function(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001 - raised again in the worker
                outcome = (False, error)
            message = (outcome, sys.stdout.getvalue(), sys.stderr.getvalue())
            try:
                body = pickle.dumps(message)
            except Exception as error:  # noqa: BLE001 - an exception that does not pickle
                body = pickle.dumps(((False, StepDied(f"{type(error).__name__}: {error}")), *message[1:]))
            with os.fdopen(writing, "wb") as pipe:
                pipe.write(body)
        except BaseException:  # noqa: BLE001 - the worker says the step died
            code = 1
        finally:
            sys.stdout, sys.stderr = out, err
            os._exit(code)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        body = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not body:
        raise StepDied(f"{getattr(function, '__name__', 'a step')} ended without a result "
                       f"(exit status {os.waitstatus_to_exitcode(status)})")
    (ok, value), printed, errors = pickle.loads(body)
    sys.stdout.write(printed)
    sys.stderr.write(errors)
    if not ok:
        raise value
    return value

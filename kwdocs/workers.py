"""Worker processes of a parallel build: kept busy, and dying with the build; build steps
pause the collector.

``-j N`` runs doit's tasks in forked worker processes.  When the build is
killed (SIGKILL, the OOM killer, a CI job cancelled by pid) its workers would
live on, idle, forever, still holding the output folder's lock through the
file they inherited, so the next build would wait for them forever.  On Linux
each worker forked during a build asks the kernel to kill it when the build
dies.

doit hands a worker its next task only once the worker's last result has
reached the parent and the parent has checked that task: a cold build's
workers sat idle for 0.7 s each that way, between 1,382 tasks.
``LookaheadRunner`` keeps one ready task queued beyond the workers, so a worker
that finishes takes up the next at once.
"""
from __future__ import annotations

import ctypes
import gc
import os
import signal
from contextlib import contextmanager
from typing import Iterator

from doit.runner import JobHold, MRunner

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
    import multiprocessing

    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(grace)
        if child.is_alive():
            child.kill()
            child.join()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off for the duration (also a decorator).

    Extraction and rendering allocate millions of short-lived objects (an
    ``ast`` tree, a page's fragments) that reference counting frees on its own;
    the collector still walks them, and everything older, every few hundred
    allocations: a fifth of a cold build's CPU.  Steps hold no cycles worth
    collecting mid-way, so it runs again once the step ends.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class LookaheadRunner(MRunner):
    """doit's process runner with ``AHEAD`` ready tasks queued beyond its workers.

    The same tasks run in the same order of dispatch, and every result is handled as doit
    handles it; only a task's hand-over to a worker no longer waits for the previous
    result's round trip.  A task queued when another fails still runs (its inputs are
    complete); doit then stops as usual.
    """

    AHEAD = 1

    def run_tasks(self, task_dispatcher) -> None:
        result_q, job_q = self.Queue(), self.Queue()
        self._run_tasks_init(task_dispatcher)
        processes = self._run_start_processes(job_q, result_q)   # one task each, as doit does
        in_flight = len(processes) - self.free_proc               # the rest got doit's "hold on"
        self.free_proc = 0
        exhausted = False

        def queue_ready(completed) -> None:
            """Queue ready tasks until every worker has one and ``AHEAD`` more wait."""
            nonlocal in_flight, exhausted
            while not exhausted and in_flight < len(processes) + self.AHEAD:
                job = self.get_next_job(completed)
                completed = None
                if job is None:             # nothing left to run, or a failure stopped the build
                    exhausted = True
                elif job.type is JobHold.type:
                    self.free_proc = 0      # ready tasks wait for running ones
                    break
                else:
                    job_q.put(job)
                    in_flight += 1

        try:
            queue_ready(None)
            while in_flight:
                result = result_q.get()
                if "exit" in result:
                    raise result["exit"](result["exception"])
                node = task_dispatcher.nodes[result["name"]]
                if "reporter" in result:
                    getattr(self.reporter, result["reporter"])(node.task)
                    continue
                self._process_result(node, node.task, result)
                in_flight -= 1
                queue_ready(node)
                if not in_flight and not exhausted:
                    raise RuntimeError("doit holds tasks back with none running (a dependency cycle?)")
        except (SystemExit, KeyboardInterrupt, Exception):
            for process in processes:
                process.terminate()
            raise
        for _ in processes:
            job_q.put(None)
        for process in processes:
            process.join()
        while not result_q.empty():     # teardown reports, sent once the workers stop
            result = result_q.get()
            getattr(self.reporter, result["reporter"])(task_dispatcher.tasks[result["name"]])


@contextmanager
def looking_ahead() -> Iterator[None]:
    """doit's ``run -P process`` uses ``LookaheadRunner`` for the duration.

    doit's ``run`` command picks its runner class from its module by name, and has no
    setting for it; the name is restored afterwards.
    """
    from doit import cmd_run

    previous, cmd_run.MRunner = cmd_run.MRunner, LookaheadRunner
    try:
        yield
    finally:
        cmd_run.MRunner = previous

"""Handing doit's tasks to worker processes without keeping them waiting.

doit hands a worker its next task only once the worker's last result has
reached the parent and the parent has checked that task, so workers sit idle
between tasks.  ``LookaheadRunner`` keeps one ready task queued beyond the
workers, so a worker that finishes takes up the next at once, and takes up the
tasks that become ready in the order of their steps (``tasks.BUILD_ORDER``).

A worker never gives back memory it took (CPython keeps it), so a worker ends, and a fresh one
is forked from the building process in its place, once it has grown by ``RETIRE_GROWTH``
(a worker that read the largest files keeps their peak) and once it has run a whole-tree
step (link, keywords, assemble), which only a worker that has run nothing yet takes up: the
step's memory then goes with it, and is not added to what extraction left (bench/README.md,
branch ``workermem``).

Imported only when a build starts worker processes: doit is not imported by a
no-op build at all.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from doit import cmd_run
from doit.runner import JobHold, MRunner

from kwdocs.store import cache


class LookaheadRunner(MRunner):
    """doit's process runner with ``AHEAD`` ready tasks queued beyond its workers.

    The same tasks run in the same order of dispatch, and every result is handled as doit
    handles it; only a task's hand-over to a worker no longer waits for the previous
    result's round trip.  A task queued when another fails still runs (its inputs are
    complete); doit then stops as usual.
    """

    AHEAD = 1
    RETIRE_GROWTH = 128 * 1024 * 1024   # bytes of resident memory a worker may gain before it is replaced
    free_proc: int
    _jobs: _Jobs

    def run_tasks(self, task_dispatcher) -> None:
        result_q = self.Queue()
        job_q = self._jobs = _Jobs(self.Queue(), result_q)
        self._run_tasks_init(task_dispatcher)
        job_q.whole_tree = frozenset(name for name, task in self.tasks.items() if ":" not in name and task.actions)
        _ready_in_step_order(task_dispatcher)
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
                if _RETIRED in result:      # sent after its last result: a fresh worker takes its place
                    processes = [process for process in processes if process.pid != result[_RETIRED]]
                    cache.note_down(result.get(_DOWN, []))
                    processes.append(self._worker(job_q, result_q))
                    continue
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
            if "reporter" in result:
                getattr(self.reporter, result["reporter"])(task_dispatcher.tasks[result["name"]])

    def _worker(self, job_q, result_q):
        """A worker forked now, as doit forks its first ones."""
        process = self.Child(target=self.execute_task_subprocess, args=(job_q, result_q, self.reporter.__class__))
        process.start()
        return process

    def execute_task(self, task):
        """Run in a worker: the task, then whether the worker ends (see the module's doc)."""
        failure = super().execute_task(task)
        self._jobs.ran(task.name, self.RETIRE_GROWTH)
        return failure


_RETIRED = "retired"    # a result-queue message: this worker (its pid) takes no more tasks
_DOWN = "stores_down"   # ... and the shared caches it found down, which its successor skips


def resident_bytes() -> int | None:
    """This process's resident memory, or None where ``/proc`` does not tell."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class _Jobs:
    """The job queue as each worker sees it: a worker that is to end takes no next job (doit's
    worker loop ends on None) and says so on the result queue, after its last result; a worker
    that has run a task puts a whole-tree step back for a fresh one."""

    def __init__(self, queue, results) -> None:
        self.queue, self.results = queue, results
        self.whole_tree: frozenset[str] = frozenset()     # the names of the single-task steps
        self.start: int | None = None     # the worker's size when it took its first job
        self.fresh = True
        self.retiring = False

    def put(self, job) -> None:
        self.queue.put(job)

    def get(self):
        if self.start is None:
            self.start = resident_bytes()
        job = None if self.retiring else self.queue.get()
        if job is not None and not self.fresh and getattr(job, "name", None) in self.whole_tree:
            self.queue.put(job)     # for the worker forked in this one's place
            job = None
        if job is None and (self.retiring or not self.fresh):
            self.results.put({_RETIRED: os.getpid(), _DOWN: cache.known_down()})
        return job

    def ran(self, name: str, limit: int) -> None:
        """After a task: end after a whole-tree step, or once grown by ``limit`` bytes."""
        self.fresh = False
        now = resident_bytes()
        self.retiring = name in self.whole_tree or (
            self.start is not None and now is not None and now - self.start > limit)


def _ready_in_step_order(dispatcher) -> None:
    """Queue the tasks that become ready in the order of their steps among the tasks asked for
    (doit's ``default_tasks``), not in the order of the set doit keeps a task's dependents in: once
    the facts are extracted, the link step, which every render task waits for, goes before the
    keyword and search steps, which nothing waits for, rather than after them with a core idle."""
    rank = {name: index for index, name in enumerate(dispatcher.selected_tasks)}
    ready, update = dispatcher.ready, dispatcher._update_waiting

    def step_rank(node) -> int:
        return rank.get(node.task.name.partition(":")[0], len(rank))

    def update_in_order(processed) -> None:
        before = len(ready)
        update(processed)
        if len(ready) > max(before, 1):     # some became ready: a stable sort keeps a step's tasks in order
            ordered = sorted(ready, key=step_rank)
            ready.clear()
            ready.extend(ordered)

    dispatcher._update_waiting = update_in_order


@contextmanager
def looking_ahead() -> Iterator[None]:
    """doit's ``run -P process`` uses ``LookaheadRunner`` for the duration.

    doit's ``run`` command picks its runner class from its module by name, and has no
    setting for it; the name is restored afterwards.
    """
    previous, cmd_run.MRunner = cmd_run.MRunner, LookaheadRunner
    try:
        yield
    finally:
        cmd_run.MRunner = previous

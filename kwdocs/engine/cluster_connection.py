"""A build's connection to its Dask cluster (``kwdocs.engine.cluster`` says what runs there):
reaching the scheduler or starting a local cluster, the work sent out by step and unit, and the
waiting for it, which gives up on a lost scheduler or a cluster left without workers (the
build then does the rest itself)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from kwdocs.config import Config, ConfigError
from kwdocs.engine.cluster_worker import Payload, shipped_settings
from kwdocs.store.cache import warn

CONNECT_TIMEOUT = 5     # seconds to reach a scheduler before the build gives up (exit 2)
RETRIES = 2             # Dask's retries of a task that raised; a lost worker's tasks are rescheduled anyway
NO_WORKERS = 30.0       # seconds a cluster may have no worker while the build waits, before it builds alone
TASK_FILES = 64         # most files in one task, and the fewest once the build has that many per worker slot
TASK_FILES_FEWEST = 8
TASKS_PER_SLOT = 4      # at least this many tasks per worker thread: none idles while another has a long queue
_FAILED = (Exception, asyncio.CancelledError, concurrent.futures.CancelledError)


class Work:
    """One step's tasks on the cluster: each unit's task (units share tasks), and a task's
    result once fetched, until the last of its units has taken its part."""

    def __init__(self) -> None:
        self.futures: dict[str, Any] = {}
        self.fetched: dict[str, Any] = {}
        self.waiting: dict[str, int] = {}

    def clear(self) -> list[Any]:
        """Forget everything; the futures still out there."""
        left = list({future.key: future for future in self.futures.values()}.values())
        self.futures.clear()
        self.fetched.clear()
        self.waiting.clear()
        return left


class Session:
    """One build's connection to the cluster and the work it has out there, by unit."""

    def __init__(self, config: Config, client: Any, cluster: Any) -> None:
        self.config = config
        self.client = client
        self.cluster = cluster
        self.shared = cluster is not None   # workers on this machine read its files themselves
        self.settings = shipped_settings(config)
        self.facts = Work()
        self.pages = Work()
        self.records: dict[str, dict[str, list]] = {}   # by unit: the stamps of the bytes sent to workers
        self.refused = False
        self.down = False

    def slots(self) -> int:
        """How many tasks the cluster runs at once (a local cluster: ``jobs``, its workers may still be starting)."""
        if self.cluster is not None:
            return max(1, self.config.jobs)
        try:
            return max(1, sum(self.client.nthreads().values()))
        except _FAILED:
            return 1

    def task_files(self, files: int) -> int:
        """Files per task for a step of ``files`` files."""
        return max(TASK_FILES_FEWEST, min(TASK_FILES, files // (self.slots() * TASKS_PER_SLOT)))

    def submit(self, work: Work, units: list[str], function: Any, payload: Any) -> None:
        """One task doing ``function`` for ``units`` (``payload``: what it needs of them)."""
        if self.down or not units:
            return
        with warnings.catch_warnings():
            # Dask's advice on a large task (load the data on the workers) is what a cluster
            # sharing this file system gets; the others need the bytes
            warnings.simplefilter("ignore", UserWarning)
            future = self.client.submit(function, self.config, self.settings, Payload(payload), pure=False,
                                        retries=RETRIES)
        for unit in units:
            work.futures[unit] = future
        work.waiting[future.key] = len(units)

    def result(self, work: Work, unit: str, step: str) -> tuple[Any, Any] | None:
        """(the key it was made under, the unit's part) of the unit's task's result; None when
        there is none.  A task that failed for good (Dask retried it; kwdocs missing on the
        workers, say), a lost scheduler, or no worker for ``NO_WORKERS`` seconds is said once,
        and the build goes on alone."""
        future = work.futures.pop(unit, None)
        if future is None or self.down:
            return None
        made = work.fetched.get(future.key)
        if made is None:
            made = self.wait(future, unit, step)
            if made is None:
                return None
            work.fetched[future.key] = made
        work.waiting[future.key] -= 1
        if not work.waiting[future.key]:
            del work.waiting[future.key], work.fetched[future.key]
        key, parts = made
        return key, parts.get(unit)

    def wait(self, future: Any, unit: str, step: str) -> Any:
        """A task's result, waiting for it; None when there is none (said once)."""
        # kwdocs[dask], an optional extra: only a build with --scheduler imports it
        from distributed import wait

        workerless = None
        while True:
            try:
                # done, then fetched: a fetch cut short by a timeout breaks the worker's connection
                wait(future, timeout=1)
                return future.result(timeout=NO_WORKERS)
            except TimeoutError:
                pass
            except _FAILED as error:
                self.give_up(f"could not {step} {unit or '.'} ({type(error).__name__}: {error})")
                return None
            try:
                workers = len(self.client.nthreads())
            except _FAILED as error:
                self.give_up(f"{type(error).__name__}: {error}")
                return None
            workerless = None if workers else (workerless or time.monotonic())
            if workerless is not None and time.monotonic() - workerless > NO_WORKERS:
                self.give_up(f"no worker for {NO_WORKERS:g} s")
                return None

    def give_up(self, reason: str) -> None:
        """The cluster cannot do the rest of the work: this process does it."""
        warn(f"cluster {self.config.scheduler}: {reason}; building here")
        self.down = True
        self.drop()

    def refuse(self, what: str) -> None:
        """A worker made something under other keys: its code, packages or settings differ."""
        if not self.refused:
            warn(f"a worker of {self.config.scheduler} runs other code or packages ({what} differ): "
                 "its work is done here")
        self.refused = True

    def drop(self) -> None:
        """Cancel what is still out there (a failed or interrupted build)."""
        left = self.facts.clear() + self.pages.clear()
        self.records.clear()
        if left:
            try:
                self.client.cancel(left)
            except _FAILED:
                pass


@contextmanager
def connected(config: Config) -> Iterator[Session]:
    """A session on ``config.scheduler`` for the duration; a scheduler that cannot be reached, or
    Dask not installed, is the user's mistake (ConfigError: one line, exit 2).  On the way
    out (Ctrl-C included) what is left is cancelled and the client closed.  The build lends
    it to its steps as ``OnCluster(session)`` in its ``BuildSession``."""
    if config.scheduler == "local":
        _start_forkserver()     # it imports kwdocs and Dask for the workers while this process imports Dask
    try:
        # kwdocs[dask], an optional extra: only a build with --scheduler imports it
        from dask.distributed import Client, LocalCluster
    except ImportError as error:
        raise ConfigError([f"'scheduler' ({config.scheduler}): Dask is not installed "
                           f"(pip install 'kwdocs[dask]'): {error}"]) from error
    # the scheduler's and workers' own chatter (a worker lost, a task retried, a connection
    # broken) is not the build's: what matters reaches it as a task that failed for good
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    with ExitStack() as settings:
        cluster = None
        try:
            if config.scheduler == "local":
                # kwdocs[dask], an optional extra, as above
                import dask
                from distributed.gc import disable_gc_diagnosis
                settings.enter_context(dask.config.set(LOCAL_SETTINGS))     # also for workers started later
                # no dashboard, and Dask's other pages on a port of the system's choosing: another
                # cluster on this machine has Dask's own (which it would say, here)
                cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, memory_limit=0,
                                       dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                       silence_logs=logging.CRITICAL)
                # results fetched from the workers themselves, not through the scheduler
                client = Client(cluster, direct_to_workers=True)
                # the workers start while this process sends them work (the client first: starting
                # them holds up the scheduler until the fork server has imported what they need)
                cluster.scale(config.jobs)
                # the scheduler here times each full garbage collection for log lines the build
                # silences, in a gc callback, where Python drops a KeyboardInterrupt: a Ctrl-C
                # landing during a collection was lost and the build went on to its end
                disable_gc_diagnosis(force=True)
            else:
                client = Client(config.scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError, TypeError) as error:
            if cluster is not None:
                cluster.close()
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ConfigError([f"'scheduler' ({config.scheduler}): cannot reach it: {reason}"]) from None
        session = Session(config, client, cluster)
        try:
            yield session
        finally:
            session.drop()
            client.close()
            if cluster is not None:
                cluster.close()


# A local cluster's settings: workers forked from a server process (each spawned one would
# import Python and Dask afresh, which costs seconds; never a fork of this threaded process),
# and none of the sampling a worker does for Dask's dashboard and memory limits, which costs
# the build's cores: a local build's processes have neither.
LOCAL_SETTINGS = {
    "distributed.worker.multiprocessing-method": "forkserver",
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
}


def _start_forkserver() -> None:
    """Start the server that forks a local cluster's workers, with kwdocs' steps and Dask
    imported once there (every worker would import them again before its first task).

    The server is started as ``python -c``, which puts the current folder first on its path
    (Python 3.11's forkserver does not take this process's path): a ``kwdocs`` folder there
    (a tree's own, unrelated) would be imported in place of this kwdocs, and every worker
    would fail.  So it starts with ``PYTHONSAFEPATH``, unless this kwdocs is the current
    folder's (run from a checkout)."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(["distributed", __name__])
    package_parent = Path(__file__).resolve().parents[2]
    safe = package_parent != Path.cwd().resolve() and "PYTHONSAFEPATH" not in os.environ
    if safe:
        os.environ["PYTHONSAFEPATH"] = "1"
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if safe:
            os.environ.pop("PYTHONSAFEPATH", None)

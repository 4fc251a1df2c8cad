"""Extraction and rendering on a Dask cluster; this process stays the single writer.

``kwdocs build --scheduler tcp://HOST:PORT`` (or ``scheduler = "..."``; ``local`` starts a
``LocalCluster`` of ``jobs`` worker processes here) runs the same doit rule set in this
process, with the two steps that scale with the files handed to Dask workers, several units
to a task (a task costs the scheduler about as much as extracting a file):

1. before doit runs, the files of every unit that the state does not vouch for go to the
   cluster; a worker returns their facts (``steps.extract.facts_of_source``).  A local cluster's
   workers share this file system: they are sent paths, read the files themselves and say
   what each file's size and time stamp were while they read it.  Other clusters' workers
   are sent the bytes, read here;
2. ``extract:<unit>`` takes its unit's facts from the cluster when the file still has the
   size and time stamp of the bytes they were made from (as the state vouches for facts
   between builds), made by code with this process's extraction key; otherwise it reads the
   file and uses them only if made from exactly those bytes, or extracts it here;
3. right after ``link``, the ``dispatch`` task sends the units to render: a local cluster's
   workers read the unit's facts, links and sources from the state and the tree (never
   writing); other workers are sent those of the stale files.  Workers render the pages
   while this process makes the keyword index and folder pages;
4. ``render:<unit>`` takes the texts rendered from the very key it would render from
   (``steps.common.page_key``, which names the templates, settings and code) and writes them
   through ``kwdocs.store.writer``; anything else is rendered here.

Workers never write to the tree, the output folder or the state; they get the rule files
and the template folder from here.  Dask retries a lost worker's tasks on another one; a
task that fails for good, or a worker running other code (its keys differ), costs this
process the work, never a wrong page.  Dask is imported only when a build with a scheduler
has work.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from kwdocs.config import Config, ConfigError
from kwdocs.engine.cluster_worker import (
    Payload,
    extract_remote,
    extract_shared,
    render_inputs,
    render_remote,
    render_shared,
    shipped_settings,
)
from kwdocs.engine.steps import common, extract, render, shared
from kwdocs.facts import Facts
from kwdocs.pages import compose as pages
from kwdocs.pages.formats import file_page_paths
from kwdocs.sources import Source, read_head, source_path
from kwdocs.store import writer as output
from kwdocs.store.cache import warn

CONNECT_TIMEOUT = 5     # seconds to reach a scheduler before the build gives up (exit 2)
RETRIES = 2             # Dask's retries of a task that raised; a lost worker's tasks are rescheduled anyway
NO_WORKERS = 30.0       # seconds a cluster may have no worker while the build waits, before it builds alone
TASK_FILES = 64         # most files in one task, and the fewest once the build has that many per worker slot
TASK_FILES_FEWEST = 8
TASK_BYTES = 4 << 20    # most source bytes sent in one task (to a cluster that does not share this file system)
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


class Tasks:
    """Units gathered into tasks of about ``files`` files (and ``TASK_BYTES`` bytes) each, in
    the order doit takes them up."""

    def __init__(self, session: Session, work: Work, function: Any, files: int) -> None:
        self.session, self.work, self.function, self.files = session, work, function, files
        self.units: list[str] = []
        self.payload: dict[str, Any] = {}
        self.count = self.size = 0

    def add(self, unit: str, part: Any, files: int, size: int = 0) -> None:
        self.units.append(unit)
        self.payload[unit] = part
        self.count += files
        self.size += size
        if self.count >= self.files or self.size >= TASK_BYTES:
            self.send()

    def send(self) -> None:
        self.session.submit(self.work, self.units, self.function, self.payload)
        self.units, self.payload, self.count, self.size = [], {}, 0, 0


_session: Session | None = None


def active(config: Config) -> bool:
    """Whether this build runs on a cluster (``connected``)."""
    return _session is not None and _session.config == config


@contextmanager
def connected(config: Config) -> Iterator[Session]:
    """A session on ``config.scheduler`` for the duration; a scheduler that cannot be reached, or
    Dask not installed, is the user's mistake (ConfigError: one line, exit 2).  On the way
    out (Ctrl-C included) what is left is cancelled and the client closed."""
    global _session
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
        _session = Session(config, client, cluster)
        extract.remote_facts, render.remote_pages = facts_of, pages_of
        try:
            yield _session
        finally:
            extract.remote_facts = render.remote_pages = None
            _session.drop()
            _session = None
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


def run_on_cluster(tasks: dict, config: Config, run: Callable[[dict, int, Config], int]) -> int:
    """doit over the namespace in this process, with extraction and rendering on the cluster;
    ``run`` is the runner's ``run_doit`` (the runner calls this, so it is handed in)."""
    session = _session
    assert session is not None and session.config == config
    render_args = [task["actions"][0][1] for task in tasks["task_render"]()]
    submit_extractions(session, [task["actions"][0][1] for task in tasks["task_extract"]()])
    order = list(tasks["DOIT_CONFIG"]["default_tasks"])
    order.insert(order.index("link") + 1, "dispatch")
    namespace = dict(tasks, DOIT_CONFIG=dict(tasks["DOIT_CONFIG"], default_tasks=order))
    namespace["task_dispatch"] = lambda: {
        "doc": "Send the stale file pages to the cluster to render.",
        "actions": [(dispatch, [config, render_args])], "task_dep": ["link"], "verbosity": 0}
    try:
        return run(namespace, 1, config)
    finally:
        session.drop()


# ---------------------------------------------------------------- this process's side

def submit_extractions(session: Session, units: list[list]) -> None:
    """Send each unit's files that need extracting to the cluster: their paths to workers
    sharing this file system, else their bytes (read here, with their stamps)."""
    todo: list[tuple[Config, str, list[str], dict]] = []
    for config, unit, rels in units:
        previous, kept, _ = extract.vouched_facts(config, unit, rels)
        if len(kept) < len(rels):
            todo.append((config, unit, [rel for rel in rels if rel not in kept], previous))
    function = extract_shared if session.shared else extract_remote
    tasks = Tasks(session, session.facts, function, session.task_files(sum(len(rels) for _, _, rels, _ in todo)))
    for config, unit, rels, previous in todo:
        sources: dict[str, Source | None] = {}
        records: dict[str, list] = {}
        for rel in rels:
            before = previous.get(rel)
            if session.shared and before is None:
                sources[rel] = None     # read by the worker
                continue
            # read here: a cluster elsewhere needs the bytes; the hash tells a touched file from an edited one
            try:
                source, record = stamped_read(config, rel)
            except OSError:
                continue    # extraction here says why it cannot be read
            if before is None or before.get("size") != source.size or before.get("sha256") != source.sha256:
                sources[rel] = source
                if record is not None:
                    records[rel] = record
        if config.cache and sources:    # what a shared cache holds is not sent out
            held = shared.SharedFacts(config, list(sources)).found
            sources = {rel: source for rel, source in sources.items() if rel not in held}
        if not sources:
            continue
        if session.shared:
            tasks.add(unit, list(sources), len(sources))
        else:
            session.records[unit] = records
            tasks.add(unit, sources, len(sources), sum(len(source.head) for source in sources.values()
                                                       if source is not None))
    tasks.send()


def stamped_read(config: Config, rel: str) -> tuple[Source, list | None]:
    """``read_head`` of a file, and [size, time stamp, SHA-256] of what was read when the file
    held still meanwhile and its stamp is not too recent to tell a later write by (as
    ``steps.extract.extract_settled`` records them); OSError when it cannot be read."""
    path = source_path(config, rel)
    started = time.time_ns()
    before = output.stamp(path)
    source = read_head(path, pages.ANALYSE_LIMIT)
    if before is None or output.stamp(path) != before or before[0] >= started - extract.RACY_NS:
        return source, None
    return source, [before[1], before[0], source.sha256]


def dispatch(config: Config, units: list[list]) -> dict:
    """After linking: send the units to render to the cluster: workers sharing this file system
    plan them from the state (and render what a shared cache does not hold); others are sent
    the inputs of each unit's stale files."""
    session = _session
    if session is None:
        return {}
    if session.shared and not config.cache:
        tasks = Tasks(session, session.pages, render_shared, session.task_files(sum(len(rels) for *_, rels in units)))
        for _, unit, folder_names, rels in units:
            tasks.add(unit, (folder_names, rels, None), len(rels))
        tasks.send()
        return {}
    plans = []
    for _, unit, folder_names, rels in units:
        try:
            plan = render.render_plan(config, unit, folder_names, rels)
        except common.StateDamaged:
            continue    # ``render:<unit>`` meets it and has the state start over
        todo = plan.todo
        if config.cache and todo:       # what a shared cache holds is not sent out
            held = shared.SharedPages(config, {rel: plan.keys[rel] for rel in todo}).found
            todo = [rel for rel in todo if rel not in held]
        if todo:
            plans.append((unit, folder_names, rels, plan, todo))
    function = render_shared if session.shared else render_remote
    tasks = Tasks(session, session.pages, function, session.task_files(sum(len(todo) for *_, todo in plans)))
    for unit, folder_names, rels, plan, todo in plans:
        if session.shared:
            tasks.add(unit, (folder_names, rels, todo), len(todo))
            continue
        items = render_inputs(config, plan.facts, plan.links, plan.related, todo)
        tasks.add(unit, items, len(items), sum(len(item[3] or b"") for item in items))
    tasks.send()
    return {}


class RemoteFacts:
    """A unit's facts as workers made them, with the stamps of the bytes they were made from,
    for ``steps.extract.extract_unit``."""

    def __init__(self, found: dict[str, Facts], records: dict[str, list]) -> None:
        self.found = found
        self.records = records
        self.used = 0

    def __contains__(self, rel: str) -> bool:
        return rel in self.found

    def settled(self, config: Config, rel: str) -> tuple[Facts, list] | None:
        """The facts of ``rel`` and their stamp record when the file still has the size and time
        stamp of the bytes they were made from."""
        facts, record = self.found.get(rel), self.records.get(rel)
        if record is None or not self.made_from(facts, rel, record[0], record[2]) \
                or output.stamp(source_path(config, rel)) != (record[1], record[0]):
            return None
        self.used += 1
        return facts, record    # type: ignore[return-value]  # made_from checked it is a dict

    def lookup(self, rel: str, source: Source) -> Facts | None:
        """The facts of ``rel`` if made from exactly these bytes."""
        facts = self.found.get(rel)
        if not self.made_from(facts, rel, source.size, source.sha256):
            return None
        self.used += 1
        return facts

    @staticmethod
    def made_from(facts: Any, rel: str, size: int, sha256: str) -> bool:
        return isinstance(facts, dict) and facts.get("path") == rel and facts.get("sha256") == sha256 \
            and facts.get("size") == size and bool(sha256)


class RemotePages:
    """A unit's file pages as a worker rendered them, each with the key it was rendered from."""

    def __init__(self, found: dict[str, tuple[str, dict[str, str]]]) -> None:
        self.found = found
        self.used = 0

    def texts(self, config: Config, rel: str, key: str) -> dict[str, str] | None:
        """The pages of ``rel`` if rendered from ``key``, and only its pages (in every format)."""
        made = self.found.get(rel)
        if made is None or made[0] != key:
            return None
        texts = made[1]
        if set(texts) != file_page_paths(config, rel) or \
                not all(isinstance(text, str) for text in texts.values()):
            return None
        self.used += 1
        return texts


def facts_of(config: Config, unit: str) -> RemoteFacts | None:
    """The unit's facts from the cluster (waiting for them), None when there are none to use."""
    if not active(config):
        return None
    assert _session is not None
    records = _session.records.pop(unit, {})
    made = _session.result(_session.facts, unit, "extract")
    if made is None or made[1] is None:
        return None
    key, part = made
    if key != common.extraction_key(config):
        _session.refuse("extraction keys")
        return None
    found, seen = part
    return RemoteFacts(found, seen if _session.shared else records)


def pages_of(config: Config, unit: str) -> RemotePages | None:
    """The unit's rendered pages from the cluster (waiting for them), None when there are none."""
    if not active(config):
        return None
    assert _session is not None
    made = _session.result(_session.pages, unit, "render")
    if made is None or made[1] is None:
        return None
    keys, found = made
    if keys != common.file_page_keys(config):
        _session.refuse("render keys")
        return None
    return RemotePages(found)

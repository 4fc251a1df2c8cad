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

import time
from collections.abc import Callable
from typing import Any

from kwdocs.config import Config
from kwdocs.engine.cluster_connection import Session, Work
from kwdocs.engine.cluster_worker import (
    extract_remote,
    extract_shared,
    render_inputs,
    render_remote,
    render_shared,
)
from kwdocs.engine.steps import common, extract, render, shared
from kwdocs.facts import Facts
from kwdocs.formats import file_page_paths
from kwdocs.pages import compose as pages
from kwdocs.sources import Source, read_head, source_path
from kwdocs.store import writer as output

TASK_BYTES = 4 << 20    # most source bytes sent in one task (to a cluster that does not share this file system)


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


class OnCluster:
    """A build's cluster as its steps ask it (``build_session.Remote``): doit run with the work
    sent out, and what the workers made of each unit."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, tasks: dict, config: Config, run_doit: Callable[[dict, int, Config], int]) -> int:
        return run_on_cluster(tasks, self.session, config, run_doit)

    def facts_of(self, config: Config, unit: str) -> RemoteFacts | None:
        return facts_of(self.session, config, unit)

    def pages_of(self, config: Config, unit: str) -> RemotePages | None:
        return pages_of(self.session, config, unit)


def run_on_cluster(tasks: dict, session: Session, config: Config, run: Callable[[dict, int, Config], int]) -> int:
    """doit over the namespace in this process, with extraction and rendering on the cluster;
    ``run`` is the runner's ``run_doit`` (the runner calls this, so it is handed in)."""
    assert session.config == config
    render_args = [task["actions"][0][1] for task in tasks["task_render"]()]
    submit_extractions(session, [task["actions"][0][1] for task in tasks["task_extract"]()])
    order = list(tasks["DOIT_CONFIG"]["default_tasks"])
    order.insert(order.index("link") + 1, "dispatch")
    namespace = dict(tasks, DOIT_CONFIG=dict(tasks["DOIT_CONFIG"], default_tasks=order))
    namespace["task_dispatch"] = lambda: {
        "doc": "Send the stale file pages to the cluster to render.",
        "actions": [(dispatch, [session, config, render_args])], "task_dep": ["link"], "verbosity": 0}
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


def dispatch(session: Session, config: Config, units: list[list]) -> dict:
    """After linking: send the units to render to the cluster: workers sharing this file system
    plan them from the state (and render what a shared cache does not hold); others are sent
    the inputs of each unit's stale files."""
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
            held = shared.SharedPages(config, {rel: plan.full[rel] for rel in todo}).found
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


def _made(session: Session, config: Config, work: Work, unit: str, step: str, key: Any, keys: str) -> Any:
    """The unit's part of what its ``step`` task made (waiting for it), when made under ``key``
    (the cluster of this build); None otherwise (``keys`` names the keys that differ)."""
    if session.config != config:
        return None
    made = session.result(work, unit, step)
    if made is None or made[1] is None:
        return None
    if made[0] != key:
        session.refuse(keys)
        return None
    return made[1]


def facts_of(session: Session, config: Config, unit: str) -> RemoteFacts | None:
    """The unit's facts from the cluster (waiting for them), None when there are none to use."""
    records = session.records.pop(unit, {}) if session.config == config else {}
    part = _made(session, config, session.facts, unit, "extract", common.extraction_key(config), "extraction keys")
    if part is None:
        return None
    found, seen = part
    return RemoteFacts(found, seen if session.shared else records)


def pages_of(session: Session, config: Config, unit: str) -> RemotePages | None:
    """The unit's rendered pages from the cluster (waiting for them), None when there are none."""
    found = _made(session, config, session.pages, unit, "render", common.file_page_keys(config), "render keys")
    return RemotePages(found) if found is not None else None

"""Extraction and rendering on a Dask cluster; this process stays the single writer.

``kwdocs build --scheduler tcp://HOST:PORT`` (or ``scheduler = "..."``; ``local`` starts a
``LocalCluster`` of ``jobs`` worker processes here) runs the same doit rule set in this
process, with the two steps that scale with the files handed to Dask workers:

1. before doit runs, the files of every unit that the state does not vouch for are read
   here and sent to the cluster, one task per unit; a worker returns their facts
   (``steps.facts_of_source``);
2. ``extract:<unit>`` takes its unit's facts from the cluster, each checked as a shared
   cache's entry is: made from exactly the bytes this process reads now, by code with this
   process's extraction key; a file without such facts is extracted here;
3. right after ``link``, the ``dispatch`` task sends each unit's files whose pages are stale
   (their facts, links, related files, and as much of the source as a page shows); workers
   render them while this process makes the keyword index and folder pages;
4. ``render:<unit>`` takes the texts rendered from the very key it would render from
   (``steps.page_key``, which names the templates, settings and code) and writes them
   through ``kwdocs.store.writer``; anything else is rendered here.

Workers never touch the tree, the output folder or the state: they get file contents, the
rule files and the template folder from here, so they need kwdocs and the same packages,
not the same file system.  Dask retries a lost worker's tasks on another one; a task that
fails for good, or a worker running other code (its keys differ), costs this process the
work, never a wrong page.  Dask is imported only when a build with a scheduler has work.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kwdocs.config import Config, ConfigError
from kwdocs.context import context_for
from kwdocs.engine import steps
from kwdocs.engine.workers import collector_paused
from kwdocs.facts import Facts
from kwdocs.pages import compose as pages
from kwdocs.pages.formats import file_page_paths, formats_for
from kwdocs.pages.render import Renderer, renderer_for
from kwdocs.store.cache import warn

CONNECT_TIMEOUT = 5     # seconds to reach a scheduler before the build gives up (exit 2)
RETRIES = 2             # Dask's retries of a task that raised; a lost worker's tasks are rescheduled anyway
NO_WORKERS = 30.0       # seconds a cluster may have no worker while the build waits, before it builds alone
_FAILED = (Exception, asyncio.CancelledError, concurrent.futures.CancelledError)


class Session:
    """One build's connection to the cluster and the work it has out there, by unit."""

    def __init__(self, config: Config, client: Any, cluster: Any) -> None:
        self.config = config
        self.client = client
        self.cluster = cluster
        self.settings = shipped_settings(config)
        self.facts: dict[str, Any] = {}
        self.pages: dict[str, Any] = {}
        self.refused = False
        self.down = False

    def submit(self, kind: dict[str, Any], unit: str, function: Any, *args: Any) -> None:
        if not self.down:
            kind[unit] = self.client.submit(function, self.config, self.settings, *args, pure=False,
                                            retries=RETRIES)

    def result(self, kind: dict[str, Any], unit: str, step: str) -> Any:
        """The unit's result of ``step``, None when there is none.  A task that failed for good
        (Dask retried it; kwdocs missing on the workers, say), a lost scheduler, or no worker for
        ``NO_WORKERS`` seconds is said once, and the build goes on alone."""
        future = kind.pop(unit, None)
        if future is None or self.down:
            return None
        workerless = None
        while True:
            try:
                return future.result(timeout=1)
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
        left = list(self.facts.values()) + list(self.pages.values())
        self.facts.clear()
        self.pages.clear()
        if left:
            try:
                self.client.cancel(left)
            except _FAILED:
                pass


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
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as error:
        raise ConfigError([f"'scheduler' ({config.scheduler}): Dask is not installed "
                           f"(pip install 'kwdocs[dask]'): {error}"]) from error
    # the scheduler's and workers' own chatter (a worker lost, a task retried) is not the build's
    logging.getLogger("distributed").setLevel(logging.ERROR)
    cluster = None
    try:
        if config.scheduler == "local":
            import dask
            # workers forked from a server process started now, not spawned: each spawned one
            # imports Python and Dask afresh, which cost seconds (never a fork of this threaded process)
            with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
                _preload_kwdocs()
                cluster = LocalCluster(n_workers=config.jobs, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        else:
            client = Client(config.scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        if cluster is not None:
            cluster.close()
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigError([f"'scheduler' ({config.scheduler}): cannot reach it: {reason}"]) from None
    _session = Session(config, client, cluster)
    steps.remote_facts, steps.remote_pages = facts_of, pages_of
    try:
        yield _session
    finally:
        steps.remote_facts = steps.remote_pages = None
        _session.drop()
        _session = None
        client.close()
        if cluster is not None:
            cluster.close()


def _preload_kwdocs() -> None:
    """The server that forks a local cluster's workers imports kwdocs' steps once, beside what
    Dask has it import: every worker would import them again before its first task."""
    import multiprocessing.forkserver

    from distributed.utils import get_mp_context

    context = get_mp_context()      # sets Dask's own list on its first call; it has no getter
    dasks = getattr(multiprocessing.forkserver._forkserver, "_preload_modules", None) or ["distributed"]
    context.set_forkserver_preload([*dasks, __name__])


def run_doit(tasks: dict, config: Config, run: Callable[[dict, int, Config], int]) -> int:
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
    """Send each unit's files that need extracting (read here) to the cluster."""
    for config, unit, rels in units:
        previous, kept, _ = steps.vouched_facts(config, unit, rels)
        sources = {}
        for rel in rels:
            if rel in kept:
                continue
            try:
                source = steps.read_head(steps.source_path(config, rel), pages.ANALYSE_LIMIT)
            except OSError:
                continue    # extraction here says why it cannot be read
            before = previous.get(rel)
            if before is None or before.get("size") != source.size or before.get("sha256") != source.sha256:
                sources[rel] = source
        if config.cache and sources:    # what a shared cache holds is not sent out
            held = steps.SharedFacts(config, list(sources)).found
            sources = {rel: source for rel, source in sources.items() if rel not in held}
        if sources:
            session.submit(session.facts, unit, extract_remote, sources)


def dispatch(config: Config, units: list[list]) -> dict:
    """After linking: send each unit's files whose pages are stale to the cluster to render."""
    session = _session
    if session is None:
        return {}
    for _, unit, folder_names, rels in units:
        try:
            plan = steps.render_plan(config, unit, folder_names, rels)
        except steps.StateDamaged:
            continue    # ``render:<unit>`` meets it and has the state start over
        todo = plan.todo
        if config.cache and todo:       # what a shared cache holds is not sent out
            held = steps.SharedPages(config, {rel: plan.keys[rel] for rel in todo}).found
            todo = [rel for rel in todo if rel not in held]
        if todo:
            items = [(plan.facts[rel], plan.links.get(rel), plan.related[rel],
                      steps.page_source(config, plan.facts[rel])) for rel in todo]
            session.submit(session.pages, unit, render_remote, items)
    return {}


class RemoteFacts:
    """A unit's facts as a worker made them, for ``steps.extract_settled``'s lookup."""

    def __init__(self, found: dict[str, Facts]) -> None:
        self.found = found
        self.used = 0

    def __contains__(self, rel: str) -> bool:
        return rel in self.found

    def lookup(self, rel: str, source: steps.Source) -> Facts | None:
        """The facts of ``rel`` if made from exactly these bytes."""
        facts = self.found.get(rel)
        if not isinstance(facts, dict) or facts.get("path") != rel or facts.get("sha256") != source.sha256 \
                or facts.get("size") != source.size:
            return None
        self.used += 1
        return facts


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
    made = _session.result(_session.facts, unit, "extract")
    if made is None:
        return None
    key, found = made
    if key != steps.extraction_key(config):
        _session.refuse("extraction keys")
        return None
    return RemoteFacts(found)


def pages_of(config: Config, unit: str) -> RemotePages | None:
    """The unit's rendered pages from the cluster (waiting for them), None when there are none."""
    if not active(config):
        return None
    assert _session is not None
    made = _session.result(_session.pages, unit, "render")
    if made is None:
        return None
    keys, found = made
    if keys != steps.file_page_keys(config):
        _session.refuse("render keys")
        return None
    return RemotePages(found)


def shipped_settings(config: Config) -> dict[str, Any]:
    """What workers need of this machine's files besides the sources: the extra rule files and
    the template folder, by content."""
    templates: dict[str, bytes] = {}
    if config.templates is not None:
        for path in sorted(config.templates.rglob("*")):
            if path.is_file():
                templates[path.relative_to(config.templates).as_posix()] = path.read_bytes()
    return {"rules": [path.read_bytes() for path in config.rules], "templates": templates}


# ---------------------------------------------------------------- a worker's side

_settled: dict[tuple[Config, str], tuple[Any, Renderer]] = {}
_folders: list[tempfile.TemporaryDirectory] = []


def _prime(config: Config, settings: dict[str, Any]) -> None:
    """This worker's rules and renderer for ``config``, made from the files sent with it (the
    paths in ``config`` are the coordinator's) and never caching anything in an output folder."""
    from kwdocs.rules.ruleset import RuleSet

    ident = (config, hashlib.sha256(repr(sorted(settings["templates"].items())).encode()
                                    + b"".join(settings["rules"])).hexdigest())
    if ident not in _settled:
        folder = tempfile.TemporaryDirectory(prefix="kwdocs-worker-")
        _folders.append(folder)
        root = Path(folder.name)
        rule_files = []
        for index, data in enumerate(settings["rules"]):
            rule_files.append(root / f"rules-{index}.toml")
            rule_files[-1].write_bytes(data)
        templates = None
        if settings["templates"]:
            templates = root / "templates"
            for name, data in settings["templates"].items():
                (templates / name).parent.mkdir(parents=True, exist_ok=True)
                (templates / name).write_bytes(data)
        rules = RuleSet.load(extra_files=rule_files, replace=config.replace_rules, project=config.project_name,
                             lazy=True)
        _settled[ident] = (rules, Renderer(templates, None))
    rules, renderer = _settled[ident]
    made = context_for(config).made     # where ``steps.rules_for`` and ``renderer_for`` keep theirs
    made[(steps.rules_for.__wrapped__,)] = rules   # type: ignore[attr-defined]  # functools.wraps sets it
    made[(renderer_for.__wrapped__,)] = renderer   # type: ignore[attr-defined]


def extract_remote(config: Config, settings: dict[str, Any], sources: dict[str, steps.Source]
                   ) -> tuple[str, dict[str, Facts]]:
    """On a worker: the facts of files sent as ``read_head`` read them, and the extraction key
    they were made under."""
    _prime(config, settings)
    with collector_paused():
        steps.prefetch_tags_of(config, {rel: source.head for rel, source in sources.items()
                                        if source.size <= pages.ANALYSE_LIMIT})
        found = {rel: steps.facts_of_source(config, rel, source) for rel, source in sources.items()}
    return steps.extraction_key(config), found


def render_remote(config: Config, settings: dict[str, Any],
                  items: list[tuple[Facts, dict | None, dict, bytes | None]]
                  ) -> tuple[list[str], dict[str, tuple[str, dict[str, str]]]]:
    """On a worker: each file's two pages from its facts, links, related files and source, with
    the key they were rendered from; and the keys of this worker's templates, settings and code."""
    _prime(config, settings)
    keys = steps.file_page_keys(config)
    renderer = renderer_for(config)
    mask = steps.rules_for(config).mask_secrets
    found = {}
    with collector_paused():
        for facts, links, related, data in items:
            view = pages.source_view(config, facts, data, mask)
            found[facts["path"]] = (steps.page_key(facts, links, related, keys),
                                    pages.file_pages(config, renderer, facts, links, related, view,
                                                     formats_for(config)))
    return keys, found

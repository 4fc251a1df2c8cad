"""kwdocs' rule set in a project's own ``dodo.py``: the public, stable import.

Two lines beside a project's own tasks (``kwdocs init`` writes them)::

    from kwdocs.doit import kwdocs_tasks
    task_kwdocs = kwdocs_tasks()

give one doit task, ``kwdocs``, whose subtasks (``kwdocs:extract:<unit>``,
``kwdocs:link``, ``kwdocs:render:<unit>``, ...) are the rules ``kwdocs build``
runs, so they never clash with a project's ``render`` or ``link``.  Their
creation is delayed (doit's ``create_after``): the tree is scanned, the state
folder made and its lock taken only when doit runs a kwdocs task, so ``doit
hello`` and ``doit list`` neither scan nor print anything of kwdocs'.  The
tasks' records go where the project's ``DOIT_CONFIG`` keeps doit's.

A ``dodo.py`` that holds kwdocs' tasks only (kwdocs' own, at its repository's
root) may take kwdocs' settings for doit too, the records in the state folder
and the summary line of ``kwdocs build``::

    DOIT_CONFIG = kwdocs_doit_config(task_kwdocs)
"""
from __future__ import annotations

import functools
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doit import create_after
from doit.exceptions import InvalidTask
from doit.tools import config_changed

from kwdocs.mistakes import describe

if TYPE_CHECKING:
    from kwdocs.config import Config
    from kwdocs.scan import ScanResult

BASENAME = "kwdocs"


class _RuleSet:
    """One ``kwdocs_tasks`` call: its settings, and what it loaded once doit asked for its tasks."""

    def __init__(self, src: str | Path, config_file: str | Path | None, settings: dict[str, Any]) -> None:
        self.src = src
        self.config_file = config_file
        self.settings = settings
        self.config: Config | None = None
        self.scanned: ScanResult | None = None
        self.generation = ""
        self.current = ""      # the scan's snapshot (``snapshot.tree_snapshot``)

    def load(self) -> Config:
        """The configuration (a bad one is doit's ``InvalidTask``: one message, no traceback)."""
        if self.config is None:
            # on use: doit imports a project's dodo.py, and so this module, for any task it runs
            from kwdocs.config import ConfigError, load_config
            try:
                self.config = load_config(self.src, self.config_file, self.settings)
            except ConfigError as error:
                raise InvalidTask("\n".join(f"kwdocs: {problem}" for problem in error.problems)) from None
        return self.config

    def prepare(self) -> tuple[Config, ScanResult]:
        """As ``kwdocs build`` before doit runs, once: the state folder made and locked until the
        process ends, the tree scanned, no file of the user's where a page would go, and a state
        that a step found damaged (or that is incomplete) started over."""
        if self.config is not None and self.scanned is not None:
            return self.config, self.scanned
        # on use: doit imports a project's dodo.py, and so this module, for any task it runs
        from kwdocs.scan import scan
        from kwdocs.store import lock, snapshot, state, writer as output

        config = self.load()
        with _one_line():
            scanned = None
            if not os.path.lexists(config.state):   # as ``kwdocs build``: refused, it makes nothing at all
                scanned = _checked(config, scan(config))
            lock.hold_for_process(config.state)
            if scanned is None:     # the last build's scan taken again while it holds, as ``kwdocs build`` does
                scanned = _checked(config, scan(config, snapshot.last_scan(config)))
            state.check_complete(config)
            damage = state.damaged(config)
            if damage is not None:      # the next run of kwdocs' tasks builds it again: all of them run
                sys.stderr.write(f"kwdocs: {damage}; building the state again\n")
                state.start_over(config)
            self.current = snapshot.tree_snapshot(config, scanned)
            if not _vouched(config, self.current, scanned):
                snapshot.forget(config)     # until this build succeeds no snapshot vouches for the output
            state.mark_format(config)
            if output.read_state(config.state / state.GENERATION) is None:
                output.write_if_changed(config.out, config.state / state.GENERATION, f"{uuid.uuid4().hex}\n")
            self.generation = (output.read_state(config.state / state.GENERATION) or b"").decode()
        self.scanned = scanned
        return config, scanned

    def tasks(self) -> Iterator[dict]:
        """doit's task dicts: the build's namespace renamed into ``kwdocs:<step>``."""
        # the task rules only when kwdocs' tasks are listed (see ``load``)
        from kwdocs.engine.tasks import Guarded, namespace, task_order

        config, scanned = self.prepare()
        creators = namespace(config, scanned)
        steps = task_order(config)
        renamed = functools.partial(_renamed, generation=_SameState(self.generation))
        for step in steps:
            made = creators[f"task_{step}"]()
            if isinstance(made, dict):
                yield renamed(made, f"{BASENAME}:{step}")
                continue
            subtasks = [renamed(subtask, f"{BASENAME}:{step}") for subtask in made]
            # a step with no unit at all (an empty tree) is still a task the others can wait for
            yield from subtasks or [{"basename": f"{BASENAME}:{step}", "name": None}]
        # as ``kwdocs build`` ends: the snapshot saved once every step succeeded, so that ``kwdocs
        # find``, ``check`` and the next build trust the state this run left
        yield {"basename": f"{BASENAME}:vouch", "verbosity": 0,
               "actions": [(Guarded(_vouch), [config, self.current, scanned])],
               "task_dep": [f"{BASENAME}:{step}" for step in steps],
               "uptodate": [(_vouched, [config, self.current, scanned])]}
        yield {"basename": BASENAME, "name": None, "doc": _creator_doc, "task_dep": [f"{BASENAME}:vouch"]}


class _SameState(config_changed):
    """doit's ``config_changed`` for the state's generation, saved under a key of its own (doit's
    saves every ``config_changed`` of a task under one key: two would each see the other's)."""

    KEY = "_kwdocs_state"

    def configure_task(self, task: Any) -> None:
        task.value_savers.append(lambda: {self.KEY: self.config_digest})

    def __call__(self, task: Any, values: dict) -> bool:
        self.config_digest = self._calc_digest()
        return values.get(self.KEY) == self.config_digest


def _renamed(task: dict, basename: str, generation: Any) -> dict:
    """A task dict of the build's namespace under ``basename``, its task_dep renamed alike; up to
    date only in the state's ``generation`` (see ``state.GENERATION``)."""
    renamed = dict(task, basename=basename, uptodate=[*task.get("uptodate", ()), generation])
    if "task_dep" in renamed:
        renamed["task_dep"] = [f"{BASENAME}:{name}" for name in renamed["task_dep"]]
    return renamed


def _vouched(config: Config, current: str, scanned: ScanResult) -> bool:
    """Whether the state's snapshot is ``current`` and the pages' folders are as it left them."""
    # on use, as ``load``'s imports
    from kwdocs.store import snapshot

    return snapshot.unchanged(config, current) and snapshot.outputs_unchanged(config, scanned)


def _vouch(config: Config, current: str, scanned: ScanResult) -> None:
    """The last task: the state vouched for as ``kwdocs build`` does when it succeeds."""
    # on use, as ``load``'s imports
    from kwdocs.engine.incremental import vouch
    from kwdocs.store import journal

    vouch(config, current, scanned)
    journal.compact(config)


def _checked(config: Config, scanned: ScanResult) -> ScanResult:
    """``scanned``, once no page of it would replace a file kwdocs did not write (``owned.check_tree``)."""
    # on use, as ``load``'s imports
    from kwdocs.store import owned

    owned.check_tree(config, (source.rel for source in scanned.files), scanned.folders())
    return scanned


@contextmanager
def _one_line() -> Iterator[None]:
    """The user's mistakes (``kwdocs.mistakes``) as doit's ``InvalidTask``: their line, no traceback."""
    try:
        yield
    except Exception as error:
        line = describe(error)
        if line is None:
            raise
        raise InvalidTask(line) from None


_creator_doc = "kwdocs: the documentation and keyword pages of the tree (kwdocs-out/ by default)"
_RULE_SETS: dict[Callable[[], Iterator[dict]], _RuleSet] = {}


def kwdocs_tasks(src: str | Path = ".", config_file: str | Path | None = None,
                 **settings: Any) -> Callable[[], Iterator[dict]]:
    """A doit task creator for kwdocs' pages, to assign to ``task_kwdocs`` in a ``dodo.py``.

    ``src``: the tree (default: the folder doit runs in, the ``dodo.py``'s); settings come
    from ``[tool.kwdocs]`` of its pyproject.toml or ``config_file``, and keyword arguments
    (``output="docs"``, ``html=True``: the configuration keys) win over them.
    """
    rule_set = _RuleSet(src, config_file, settings)

    @create_after(creates=[BASENAME])
    def task_kwdocs() -> Iterator[dict]:
        yield from rule_set.tasks()

    task_kwdocs.__doc__ = _creator_doc
    _RULE_SETS[task_kwdocs] = rule_set
    return task_kwdocs


def kwdocs_doit_config(creator: Callable[[], Iterator[dict]]) -> dict:
    """kwdocs' own ``DOIT_CONFIG``, for a ``dodo.py`` whose only tasks are ``creator``'s: doit's
    records in the state folder, kwdocs' file checker, and ``kwdocs build``'s summary line
    instead of one line per task.  It scans the tree when the ``dodo.py`` is loaded."""
    # on use, as ``load``'s imports
    from kwdocs.engine.summary import BuildReporter
    from kwdocs.engine.tasks import doit_config

    rule_set = _RULE_SETS.get(creator)
    if rule_set is None:
        raise TypeError("kwdocs_doit_config takes what kwdocs_tasks returned")
    config, scanned = rule_set.prepare()
    settings = doit_config(config)
    settings["default_tasks"] = [BASENAME]
    settings["reporter"] = BuildReporter(sys.stdout, {}, config=config, scanned=scanned)
    return settings

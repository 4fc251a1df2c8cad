"""The doit rule set: task generators over a scanned tree.

Tasks are per *unit* (a folder, or a bucket of a very large folder), not per
file: doit's per-task overhead is what limits a no-op build (bench/README.md,
"Why the code is as it is").  Each unit task redoes only the files whose size
or time stamp moved and whose content then differs.  ``dodo.py`` and
``kwdocs build`` both load this namespace, so there is one code path.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

import orjson
from doit.exceptions import TaskError
from doit.tools import config_changed

from kwdocs.config import Config
from kwdocs.engine.build_session import LOCAL, BuildSession
from kwdocs.engine.stat_checker import checker_for
from kwdocs.engine.steps import (
    assemble as assemble_step,
    common,
    extract as extract_step,
    keywords as keywords_step,
    link as link_step,
    prune as prune_step,
    render as render_step,
)
from kwdocs.engine.workers import FreshWhenMany
from kwdocs.formats import formats_for
from kwdocs.mistakes import describe
from kwdocs.scan import ScanResult, with_ancestors
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import DOIT_DB, FACTS, IMPORTANCE, LINKS, shard_path, units_of

# The order in which doit takes up the tasks that are ready.  A build puts the single-task
# steps first, so that on several cores they run beside the many render tasks rather than
# after them; a rebuild after a save (watch mode, a few edits) renders the saved files' pages
# first, since those are what its user waits for.  A format adds its own steps in their places
# (``Format.task_order``: the site's ``search`` after ``keywords``, ``site`` last).
BUILD_ORDER = ("extract", "link", "keywords", "assemble", "render", "prune")
REBUILD_ORDER = ("extract", "link", "render", "keywords", "assemble", "prune")
# The link and keyword steps run in a fresh interpreter once this many units changed (a large
# tree's cold build): their peak is then their own, not added to the building process's.
FRESH_STEP_UNITS = 2000


class Mistake(TaskError):
    """A task's error of the user's set-up (see ``kwdocs.mistakes``), worded as its one line."""


class Guarded:
    """A task action that returns a ``Mistake`` instead of raising one (a plain class, not a
    closure: doit's worker processes may be sent it).  doit reads the action's parameters
    through ``__wrapped__``."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.__wrapped__ = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.__wrapped__(*args, **kwargs)
        except (OSError, sqlite3.Error) as error:
            line = describe(error)
            if line is None:
                raise
            return Mistake(line)


# What doit refuses in a task name ("="), the escape character itself, and what no name should
# carry into doit's database or messages (control characters, undecodable bytes).
_UNSAFE_IN_TASK_NAME = re.compile(r"[%=\x00-\x1f\x7f\ud800-\udfff]")


def _guarded(creator: Callable[[], dict]) -> Callable[[], dict]:
    """A format's task creator (``Format.tasks``) whose actions are ``Guarded`` as the steps' are."""
    @functools.wraps(creator)
    def made() -> dict:
        task = creator()
        return task | {"actions": [(Guarded(function), *rest) for function, *rest in task["actions"]]}
    return made


def task_name(unit: str) -> str:
    """doit's name for a unit's task: the unit, ``%``-escaped where doit would refuse it (a folder
    named ``year=2024``), so every folder name gives a distinct, stable name ('.' is the root)."""
    if not unit:
        return "."
    return _UNSAFE_IN_TASK_NAME.sub(lambda match: f"%{ord(match.group()):02X}" if ord(match.group()) < 0x100
                                    else f"%u{ord(match.group()):04X}", unit)


def rendered_all(task, values: dict) -> bool:
    """doit's ``uptodate`` of a render task: not after a run that left pages unwritten because
    their sources changed after extraction (``steps.render.UNSETTLED``), whose facts shard may be the
    same once a file is back to the content extracted.  doit passes ``task`` and ``values``
    by these names."""
    return not values.get(render_step.UNSETTLED)


class SourcesUnchanged:
    """doit's ``uptodate`` of an extract task: its unit's files have the sizes and time stamps
    its last run recorded (``common.sources_stamp``).  One value per unit instead of a
    ``file_dep`` per file: doit keeps a record per ``file_dep`` in the building process, and
    sends each task's list back with its result."""

    def __init__(self, config: Config, rels: list[str]) -> None:
        self.config, self.rels = config, rels

    def __call__(self, task, values: dict) -> bool:
        stamp = values.get(common.SOURCES_STAMP)
        return stamp is not None and stamp == common.sources_stamp(self.config, self.rels)


def task_order(config: Config, rebuild: bool = False) -> list[str]:
    """doit's ``default_tasks`` for a build or a rebuild (see ``BUILD_ORDER``)."""
    order = list(REBUILD_ORDER if rebuild else BUILD_ORDER)
    for output_format in formats_for(config):     # the site's search and site steps
        order = output_format.task_order(order)
    return order


class StateCodec:
    """doit's codec of each task's record in its database, by orjson: doit's own, the standard
    library's JSON encoder and decoder, was a sixtieth of an edit's build.  Records decode as
    before (orjson reads what the standard library wrote); what orjson refuses either way (a
    NaN, an integer past 64 bits) goes through the standard library."""

    def encode(self, data: Any) -> str:
        try:
            return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:       # orjson.JSONEncodeError is one
            return json.dumps(data)

    def decode(self, data: str) -> Any:
        try:
            return orjson.loads(data)
        except ValueError:      # orjson.JSONDecodeError is one
            return json.loads(data)


def doit_config(config: Config) -> dict:
    return {
        "dep_file": str(config.state / DOIT_DB),
        "backend": "sqlite3",
        "codec_cls": StateCodec,
        "check_file_uptodate": checker_for(config.out),  # time stamps; safe for sources changing mid-build
        "default_tasks": task_order(config),
        "verbosity": 0,
    }


def namespace(config: Config, scanned: ScanResult, only: Callable[[str, str], bool] | None = None,
              session: BuildSession = LOCAL) -> dict:
    """A dodo-module namespace (``task_*`` callables and ``DOIT_CONFIG``) for one tree, its
    extract and render tasks handed the build's ``session``.

    ``only(kind, unit)``, asked when doit loads the tasks, limits the ``extract``
    and ``render`` tasks to some units (watch mode: generating all of them is
    a large part of an edit); link, keywords and assemble always cover every unit.
    """
    wanted = only or (lambda kind, unit: True)
    by_folder = scanned.by_folder()
    folder_names = {folder: [f.rel.rpartition("/")[2] for f in files] for folder, files in by_folder.items()}
    folder_units = {folder: units_of(folder, names) for folder, names in folder_names.items()}
    units: dict[str, tuple[str, list[str]]] = {}
    for folder, split in folder_units.items():
        if len(split) == 1:     # the folder is its own unit: its files in scan order
            units[folder] = (folder, [f.rel for f in by_folder[folder]])
        else:
            units.update((unit, (folder, [f"{folder}/{name}" if folder else name for name in names]))
                         for unit, names in split.items())
    shards = [shard_path(config, FACTS, unit) for unit in units]
    all_folders = with_ancestors(by_folder)

    def task_extract():
        """Extract facts (definitions, imports, findings) from the files that changed."""
        key = common.extraction_key(config)
        extract = Guarded(extract_step.extract_unit)
        for unit, (_, rels) in units.items():
            if not wanted("extract", unit):
                continue
            yield {
                "name": task_name(unit),
                "actions": [(extract, [config, unit, rels], {"session": session})],
                "targets": [shard_path(config, FACTS, unit)],
                "uptodate": [config_changed(key), SourcesUnchanged(config, rels)],
                "verbosity": 0,
            }

    def task_link():
        """Resolve imports and includes across the tree (who uses whom)."""
        return {
            # the tree's files by unit: an edit's imports are resolved against them alone
            "actions": [(Guarded(FreshWhenMany(link_step.link_tree, FRESH_STEP_UNITS)), [config, list(units)],
                         {"unit_files": {unit: rels for unit, (_, rels) in units.items()}})],
            "file_dep": shards,
            "targets": [shard_path(config, kind, unit) for kind in (LINKS, IMPORTANCE) for unit in units],
            # the code too: which modules are the standard library's is the running Python's
            "uptodate": [config_changed({"units": list(units), "roots": list(config.include_roots),
                                         "code": code_fingerprint()})],
            "verbosity": 0,
        }

    def task_render():
        """Render the documentation and keyword pages of files whose inputs changed."""
        # what every file page depends on, the other formats' keys too: turning the site on renders every file
        keys = common.file_page_keys(config)
        render = Guarded(render_step.render_unit)
        for unit, (folder, rels) in units.items():
            if not wanted("render", unit):
                continue
            names = folder_names[folder]
            yield {
                "name": task_name(unit),
                "actions": [(render, [config, unit, names, rels], {"session": session})],
                "file_dep": [shard_path(config, FACTS, unit), shard_path(config, LINKS, unit)],
                # siblings decide each page's Related Files: a file added next door re-checks the unit
                "uptodate": [config_changed({"templates": keys,
                                             "siblings": hashlib.sha1("\0".join(names).encode(
                                                 "utf-8", "surrogateescape")).hexdigest()}), rendered_all],
                "verbosity": 0,
            }

    def task_keywords():
        """Update the repository-wide keyword index (keywords.md, one page per letter when large)."""
        return {
            "actions": [(Guarded(FreshWhenMany(keywords_step.index_keywords, FRESH_STEP_UNITS)),
                         [config, list(units)])],
            "file_dep": shards,
            # the formats' keys too: the site turned on must re-run the step (its pages' HTML comes from their models)
            "uptodate": [config_changed({"units": list(units), "key": common.keyword_pages_key(config)})],
            "verbosity": 0,
        }

    unit_map = {folder: list(split) for folder, split in folder_units.items()}

    def task_assemble():
        """Write every folder's index.md and doc.md that changed."""
        keys = common.folder_pages_keys(config)
        return {
            "actions": [(Guarded(assemble_step.assemble), [config, unit_map, all_folders])],
            # linking's counts of uses rank Main Definitions
            "file_dep": shards + [shard_path(config, IMPORTANCE, unit) for unit in units],
            "uptodate": [config_changed({"folders": all_folders, "units": list(units), "keys": keys})],
            "verbosity": 0,
        }

    def task_prune():
        """Remove the pages and state of files and folders that are gone."""
        return {
            "actions": [(Guarded(prune_step.prune), [config, unit_map])],
            "task_dep": ["render", "assemble"],
            # the step checks this itself (``kwdocs check`` runs it without doit); doit can skip it
            "uptodate": [config_changed({"units": list(units), "code": code_fingerprint()})],
            "verbosity": 0,
        }

    creators = {name: _guarded(creator) for output_format in formats_for(config)
                for name, creator in output_format.tasks(config, list(units), shards).items()}
    return creators | {
        "DOIT_CONFIG": doit_config(config),
        "task_extract": task_extract,
        "task_link": task_link,
        "task_render": task_render,
        "task_keywords": task_keywords,
        "task_assemble": task_assemble,
        "task_prune": task_prune,
    }

"""What Dask workers run for a build on a cluster (``kwdocs.engine.cluster`` hands it out):
facts of the files they are sent or read, and the pages rendered from them, under the rules
and templates shipped to them; they never write to the tree, the output folder or the state."""
from __future__ import annotations

import hashlib
from typing import Any

from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.context import seed
from kwdocs.engine.steps import common, extract, render
from kwdocs.facts import Facts
from kwdocs.formats import formats_for
from kwdocs.pages import compose as pages
from kwdocs.pages.render import Renderer, renderer_for
from kwdocs.rules.ruleset import RuleSet, rules_for
from kwdocs.sources import ChangedSinceExtracted, Source, page_source
from kwdocs.store.state import FACTS, load_shard


class Payload:
    """A task's argument, handed to Dask whole: Dask looks into lists and dicts for futures
    to wait on, which for thousands of facts costs more than sending them."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __reduce__(self) -> tuple[type[Payload], tuple[Any]]:
        return Payload, (self.value,)


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


def _prime(config: Config, settings: dict[str, Any]) -> None:
    """This worker's rules and renderer for ``config``, made from the files sent with it (the
    paths in ``config`` are the coordinator's). Nothing is written: the rule files and templates
    stay in memory, so a worker killed by its nanny leaves no folder behind."""
    ident = (config, hashlib.sha256(repr(sorted(settings["templates"].items())).encode()
                                    + b"".join(settings["rules"])).hexdigest())
    if ident not in _settled:
        texts = [(str(path), data.decode("utf-8")) for path, data in zip(config.rules, settings["rules"])]
        rules = RuleSet.load(extra_texts=texts, replace=config.replace_rules, project=config.project_name,
                             lazy=True)
        _settled[ident] = (rules, Renderer(settings["templates"] or None, None))
    rules, renderer = _settled[ident]
    seed(config, rules_for, rules)
    seed(config, renderer_for, renderer)


def extract_shared(config: Config, settings: dict[str, Any], payload: Payload
                   ) -> tuple[str, dict[str, tuple[dict[str, Facts], dict[str, list]]]]:
    """On a worker sharing the tree: by unit, the facts of the files named (read here) and the
    [size, time stamp, SHA-256] each had while read (``steps.extract.extract_settled``); and the
    extraction key they were made under."""
    _prime(config, settings)
    units: dict[str, list[str]] = payload.value
    found = {}
    with collector_paused():
        extract._prefetch_tags(config, [rel for rels in units.values() for rel in rels])
        for unit, rels in units.items():
            seen: dict[str, list] = {}
            found[unit] = ({rel: extract.extract_settled(config, rel, None, seen) for rel in rels}, seen)
    return common.extraction_key(config), found


def extract_remote(config: Config, settings: dict[str, Any], payload: Payload
                   ) -> tuple[str, dict[str, tuple[dict[str, Facts], dict[str, list]]]]:
    """On a worker: by unit, the facts of files sent as ``read_head`` read them; and the
    extraction key they were made under."""
    _prime(config, settings)
    units: dict[str, dict[str, Source]] = payload.value
    found: dict[str, tuple[dict[str, Facts], dict[str, list]]] = {}
    with collector_paused():
        extract.prefetch_tags_of(config, {rel: source.head for sources in units.values()
                                        for rel, source in sources.items() if source.size <= pages.ANALYSE_LIMIT})
        for unit, sources in units.items():
            found[unit] = ({rel: extract.facts_of_source(config, rel, source) for rel, source in sources.items()}, {})
    return common.extraction_key(config), found


Rendered = dict[str, tuple[str, dict[str, str]]]    # by file: the key its pages were rendered from, and their texts


def render_shared(config: Config, settings: dict[str, Any], payload: Payload
                  ) -> tuple[list[str], dict[str, Rendered]]:
    """On a worker sharing the tree and the output folder: by unit, the pages of its files whose
    pages are stale (of those named, when named), planned from the state as ``render:<unit>``
    plans them (read, never written: a unit whose facts are missing or of other code is left
    to the build); and the keys of this worker's templates, settings and code."""
    _prime(config, settings)
    key = common.extraction_key(config)
    found = {}
    with collector_paused():
        for unit, (folder_names, rels, only) in payload.value.items():
            shard = load_shard(config, FACTS, unit)
            facts = shard.get("files")
            if shard.get("key") != key or not isinstance(facts, dict) or facts.keys() != set(rels):
                continue
            try:
                plan = render.render_plan(config, unit, folder_names, rels, facts)
            except common.StateDamaged:
                continue
            todo = plan.todo if only is None else sorted(set(plan.todo).intersection(only))
            found[unit] = _rendered(config, render_inputs(config, facts, plan.links, plan.related, todo))
    return common.file_page_keys(config), found


def render_inputs(config: Config, facts: dict[str, Facts], links: dict[str, dict], related: dict[str, dict],
                   todo: list[str]) -> list[tuple[Facts, dict | None, dict, bytes | None]]:
    """What rendering each file in ``todo`` takes, of the files that still hold the bytes their
    facts were made from (``render_unit`` leaves the others' pages to the next build)."""
    items = []
    for rel in todo:
        try:
            data = page_source(config, facts[rel])
        except ChangedSinceExtracted:
            continue
        items.append((facts[rel], links.get(rel), related[rel], data))
    return items


def render_remote(config: Config, settings: dict[str, Any], payload: Payload
                  ) -> tuple[list[str], dict[str, Rendered]]:
    """On a worker: by unit, each file's pages from its facts, links, related files and source;
    and the keys of this worker's templates, settings and code."""
    _prime(config, settings)
    with collector_paused():
        found = {unit: _rendered(config, items) for unit, items in payload.value.items()}
    return common.file_page_keys(config), found


def _rendered(config: Config, items: list[tuple[Facts, dict | None, dict, bytes | None]]) -> Rendered:
    """Each file's pages, with the key they were rendered from."""
    keys = common.file_page_keys(config)
    renderer = renderer_for(config)
    mask = rules_for(config).mask_secrets
    found = {}
    for facts, links, related, data in items:
        view = pages.source_view(config, facts, data, mask)
        found[facts["path"]] = (common.page_key(facts, links, related, keys),
                                pages.file_pages(config, renderer, facts, links, related, view, formats_for(config)))
    return found

"""The render step: each unit's file pages, from its facts and links, for the files whose page keys changed."""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, cast

from kwdocs import layout
from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.build_session import LOCAL, BuildSession
from kwdocs.engine.steps.common import (
    StateDamaged,
    _write_page,
    file_page_keys,
    page_key,
    recovering,
    remove_forms,
    step_counts,
)
from kwdocs.engine.steps.extract import _offering_tokens, unit_facts
from kwdocs.engine.steps.shared import SharedPages
from kwdocs.facts import Facts
from kwdocs.formats import formats_for
from kwdocs.pages import compose as pages, model
from kwdocs.pages.render import renderer_for
from kwdocs.rules.ruleset import rules_for
from kwdocs.sources import ChangedSinceExtracted, page_source
from kwdocs.store.state import LINKS, PAGES, load_shard, save_shard


@recovering
@collector_paused()
def render_unit(config: Config, unit: str, folder_names: list[str], rels: list[str],
                session: BuildSession = LOCAL) -> dict:
    """Render the pages of the unit's files whose inputs changed; remove pages of gone files
    (``session``: the build's, see ``build_session``)."""
    plan = render_plan(config, unit, folder_names, rels)
    facts_by_file, links, related_of, new_manifest = plan.facts, plan.links, plan.related, plan.keys
    renderer = renderer_for(config)
    formats = formats_for(config)
    mask = rules_for(config).mask_secrets
    counts = step_counts(config)
    todo = plan.todo
    unsettled: list[str] = []      # changed since extracted: their pages are left as they are
    remote = session.remote_pages(config, unit) if todo else None
    shared = SharedPages(config, {rel: new_manifest[rel] for rel in todo}) if config.cache and todo else None
    with _offering_tokens(config, unit, facts_by_file, todo):
        for rel in todo:
            facts = facts_by_file[rel]
            texts: Mapping[str, str | bytes] | None = remote.texts(config, rel, new_manifest[rel]) \
                if remote is not None else None
            if texts is None and shared is not None:
                texts = shared.found.get(rel)
            if texts is None:
                try:
                    data = page_source(config, facts)
                except ChangedSinceExtracted:
                    unsettled.append(rel)
                    continue
                view = pages.source_view(config, facts, data, mask)
                texts = pages.file_pages(config, renderer, facts, links.get(rel), related_of[rel], view, formats)
            if shared is not None and rel not in shared.found and facts.get("sha256"):
                shared.made[rel] = cast(dict[str, str], texts)     # rendered here or on the cluster: text
            for page, text in texts.items():
                _write_page(config, page, text, counts)
    for rel in sorted(set(plan.manifest) - set(new_manifest)):
        _remove_file_pages(config, rel, counts)
    # the manifest names the key each file's pages on disk were rendered from: an unsettled file
    # keeps the key of its pages of before, if any (the tasks' ``rendered_all`` runs it again)
    recorded = dict(new_manifest)
    for rel in unsettled:
        if rel in plan.manifest:
            recorded[rel] = plan.manifest[rel]
        else:
            del recorded[rel]
    save_shard(config, PAGES, unit, {"files": recorded})
    counts |= {"files": len(facts_by_file), UNSETTLED: len(unsettled)}
    if shared is None and not config.scheduler:
        return counts
    # the shared cache's module only for a build that has one (or a cluster)
    from kwdocs.store.cache import cache_report
    return counts | {"cache_stored": shared.store() if shared else 0, **cache_report(),
                     "cluster_rendered": remote.used if remote else 0}


UNSETTLED = "unsettled"     # render_unit's count of files whose pages wait for their next extraction


class RenderPlan(NamedTuple):
    """What ``render_unit`` needs of a unit: its facts, links, each file's related files, the key
    each file's pages are rendered from (``keys``), the keys of the last build (``manifest``),
    and the files whose key changed (``todo``)."""

    facts: dict[str, Facts]
    links: dict[str, dict]
    related: dict[str, dict]
    keys: dict[str, str]
    manifest: dict[str, str]
    todo: list[str]


def render_plan(config: Config, unit: str, folder_names: list[str], rels: list[str],
                facts: dict[str, Facts] | None = None) -> RenderPlan:
    """The unit's ``RenderPlan``, from its state (``facts``: the unit's, when the caller has them)."""
    facts_by_file = facts if facts is not None else unit_facts(config, unit, rels)
    links = load_shard(config, LINKS, unit, strict=True).get("files", {})
    if links.keys() != facts_by_file.keys():
        raise StateDamaged(f"the links of {unit or '.'} are not those of its files")
    manifest = load_shard(config, PAGES, unit, strict=True).get("files", {})
    keys = file_page_keys(config)
    siblings = model.siblings_of(tuple(folder_names))
    new_manifest: dict[str, str] = {}
    related_of: dict[str, dict] = {}
    for rel, file_facts in sorted(facts_by_file.items()):
        related_of[rel] = siblings.related(rel, links.get(rel))
        new_manifest[rel] = page_key(file_facts, links.get(rel), related_of[rel], keys)
    todo = sorted(rel for rel, key in new_manifest.items() if manifest.get(rel) != key)
    return RenderPlan(facts_by_file, links, related_of, new_manifest, manifest, todo)


def _remove_file_pages(config: Config, rel: str, counts: dict[str, int]) -> None:
    """Remove the pages of a file that went away, in every format, counted in ``counts``."""
    for page in (layout.docs_page(rel), layout.kw_page(rel)):
        remove_forms(config, page, counts)

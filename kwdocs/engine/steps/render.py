"""The render step: each unit's file pages, from its facts and links, for the files whose page keys changed."""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, cast

import orjson

from kwdocs import layout
from kwdocs.collector import collector_paused
from kwdocs.config import Config
from kwdocs.engine.build_session import LOCAL, BuildSession
from kwdocs.engine.steps.common import (
    StateDamaged,
    _write_page,
    extraction_key,
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
from kwdocs.store import writer as output
from kwdocs.store.state import FACTS, LINKS, PAGES, load_shard, save_shard, shard_path


@recovering
@collector_paused()
def render_unit(config: Config, unit: str, folder_names: list[str], rels: list[str],
                session: BuildSession = LOCAL) -> dict:
    """Render the pages of the unit's files whose inputs changed; remove pages of gone files
    (``session``: the build's, see ``build_session``)."""
    plan = render_plan(config, unit, folder_names, rels)
    facts_by_file, links, related_of, new_manifest = plan.facts, plan.links, plan.related, dict(plan.keys)
    reads = {rel: names for rel, names in plan.reads.items() if rel in new_manifest}
    renderer = renderer_for(config)
    formats = formats_for(config)
    mask = rules_for(config).mask_secrets
    counts = step_counts(config)
    todo = plan.todo
    unsettled: list[str] = []      # changed since extracted: their pages are left as they are
    remote = session.remote_pages(config, unit) if todo else None
    shared = SharedPages(config, {rel: plan.full[rel] for rel in todo}) if config.cache and todo else None
    with _offering_tokens(config, unit, facts_by_file, todo):
        for rel in todo:
            facts = facts_by_file[rel]
            texts: Mapping[str, str | bytes] | None = remote.texts(config, rel, plan.full[rel]) \
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
                asked = _Asked(links.get(rel))
                texts = pages.file_pages(config, renderer, facts, asked.links, related_of[rel], view, formats)
                key = page_key(facts, links.get(rel), related_of[rel], plan.key_parts, asked.names) \
                    if asked.names is not None else ""
                _record_key(rel, asked.names, key, plan, new_manifest, reads)
            else:
                _record_key(rel, None, "", plan, new_manifest, reads)
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
    save_shard(config, PAGES, unit, {"files": recorded, "reads": {rel: reads[rel] for rel in sorted(reads)
                                                                  if rel in recorded}})
    counts |= {"files": len(facts_by_file), UNSETTLED: len(unsettled)}
    # watch reads them again: no event may come once they hold still
    result: dict = {**counts, UNSETTLED_FILES: sorted(unsettled)} if unsettled else counts
    if shared is None and not config.scheduler:
        return result
    # the shared cache's module only for a build that has one (or a cluster)
    from kwdocs.store.cache import cache_report
    return result | {"cache_stored": shared.store() if shared else 0, **cache_report(),
                     "cluster_rendered": remote.used if remote else 0}


def _record_key(rel: str, names: dict[str, list[str]] | None, key: str, plan: RenderPlan,
                manifest: dict[str, str], reads: dict[str, dict[str, list[str]]]) -> None:
    """The key ``rel``'s pages were just made from, in ``manifest``: from the anchors they looked up
    (``names``, in ``reads`` for the next build's plan), or from all of them when they were made
    elsewhere (the shared cache, a cluster: ``names`` None) or read them all."""
    if names is None:
        reads.pop(rel, None)
        manifest[rel] = plan.full[rel]
    else:
        reads[rel] = names
        manifest[rel] = key


ASKED = ("anchors", "names")    # the parts of a file's links its pages show a name of only when looked up


class _Asked:
    """A file's links whose ``ASKED`` parts note the names rendering looks up (``names``: part ->
    names, sorted; a part gone through whole is left out, as is one the links lack)."""

    def __init__(self, links: dict | None) -> None:
        self._parts = {part: _Noting(links[part]) for part in ASKED if links and isinstance(links.get(part), dict)}
        self.links = dict(links, **self._parts) if links and self._parts else links

    @property
    def names(self) -> dict[str, list[str]] | None:
        asked = {part: sorted(noted.asked) for part, noted in self._parts.items() if not noted.whole}
        return asked or None


class _Noting(Mapping[str, list]):
    """A part of a file's links that notes each name looked up (``in``, ``get`` and ``[]`` all go
    through ``__getitem__``), and whether it was gone through whole."""

    def __init__(self, part: dict[str, list]) -> None:
        self._part, self.asked, self.whole = part, set[str](), False

    def __getitem__(self, name: str) -> list:
        self.asked.add(name)
        return self._part[name]

    def __iter__(self) -> Iterator[str]:
        self.whole = True
        return iter(self._part)

    def __len__(self) -> int:
        self.whole = True
        return len(self._part)


UNSETTLED = "unsettled"     # render_unit's count of files whose pages wait for their next extraction
UNSETTLED_FILES = "unsettled_files"     # and which they are: the build reporter collects them for watch


class RenderPlan(NamedTuple):
    """What ``render_unit`` needs of a unit: its facts, links, each file's related files, the key
    each file's pages are rendered from (``keys``: from the anchors its last rendering looked up,
    ``reads``), the keys of the last build (``manifest``), the files whose key changed (``todo``),
    their keys from every anchor (``full``: the shared cache's and a cluster's), and what every
    file's key is made from besides its own inputs (``key_parts``)."""

    facts: dict[str, Facts]
    links: dict[str, dict]
    related: dict[str, dict]
    keys: dict[str, str]
    manifest: dict[str, str]
    todo: list[str]
    reads: dict[str, dict[str, list[str]]]
    full: Mapping[str, str]
    key_parts: list[str]


def render_plan(config: Config, unit: str, folder_names: list[str], rels: list[str],
                facts: dict[str, Facts] | None = None) -> RenderPlan:
    """The unit's ``RenderPlan``, from its state (``facts``: the unit's, when the caller has them).
    Its facts are read whole only when a file is to be rendered: the units whose links changed
    after an edit elsewhere mostly have none, and their page keys take a few fields of each."""
    facts_by_file = facts if facts is not None else _identities(config, unit, rels) or unit_facts(config, unit, rels)
    links = load_shard(config, LINKS, unit, strict=True).get("files", {})
    if links.keys() != facts_by_file.keys():
        raise StateDamaged(f"the links of {unit or '.'} are not those of its files")
    stored = load_shard(config, PAGES, unit, strict=True)
    manifest = stored.get("files", {})
    reads = stored.get("reads")
    if not isinstance(reads, dict):
        reads = {}
    keys = file_page_keys(config)
    siblings = model.siblings_of(tuple(folder_names))
    new_manifest: dict[str, str] = {}
    related_of: dict[str, dict] = {}
    for rel, file_facts in sorted(facts_by_file.items()):
        related_of[rel] = siblings.related(rel, links.get(rel))
        # a file without pages is rendered whatever its key: rendering makes the one it keeps
        new_manifest[rel] = page_key(file_facts, links.get(rel), related_of[rel], keys, _valid(reads.get(rel))) \
            if rel in manifest else ""
    todo = sorted(rel for rel, key in new_manifest.items() if manifest.get(rel) != key)
    if todo and facts is None:
        facts_by_file = unit_facts(config, unit, rels)
    full = _FullKeys(facts_by_file, links, related_of, keys,
                     {rel: new_manifest[rel] for rel in todo if new_manifest[rel] and _valid(reads.get(rel)) is None})
    return RenderPlan(facts_by_file, links, related_of, new_manifest, manifest, todo,
                      {rel: names for rel, names in reads.items() if _valid(names) is not None}, full, keys)


def _identities(config: Config, unit: str, rels: list[str]) -> dict[str, Facts] | None:
    """What ``page_key`` reads of each file's facts (``facts.identity``: its path, hash and
    problems), decoded alone from the unit's facts shard, six times as fast as the whole shard.
    None when the shard is not one ``unit_facts`` takes as it is, or a file's facts have no hash
    (then they stand for themselves)."""
    body = output.read_sealed(shard_path(config, FACTS, unit))
    if body is None:
        return None
    try:
        shard = _identity_decoder()(body) if len(body) > WHOLE_SHARD_BYTES else _WholeShard(orjson.loads(body))
    except ValueError:      # msgspec's DecodeError and ValidationError are ones, as orjson's
        return None
    if shard.unit != unit or shard.key != extraction_key(config) or shard.files.keys() != set(rels):
        return None
    found: dict[str, Facts] = {}
    for rel, facts in shard.files.items():
        if not facts.sha256 or facts.path is None:
            return None
        found[rel] = cast(Facts, {"path": facts.path, "sha256": facts.sha256, "problems": facts.problems})
    return found


# A facts shard this small is decoded whole by orjson, which every build has loaded, in less
# time than importing msgspec takes (an edit's unit is mostly a small folder's)
WHOLE_SHARD_BYTES = 256 * 1024


class _WholeShard:
    """A facts shard decoded whole, read as ``_identity_decoder``'s result is: ``unit``, ``key``
    and ``files``, each file's ``path``, ``sha256`` and ``problems`` (ValueError if it has not
    that shape)."""

    def __init__(self, data: Any) -> None:
        files = data.get("files", {}) if isinstance(data, dict) else None
        if not isinstance(files, dict) or not all(isinstance(facts, dict) for facts in files.values()):
            raise ValueError("not a facts shard")
        self.unit, self.key = data.get("unit"), data.get("key")
        self.files = {rel: _Identity(facts) for rel, facts in files.items()}


class _Identity:
    def __init__(self, facts: dict) -> None:
        self.path, self.sha256 = facts.get("path"), facts.get("sha256")
        self.problems = facts.get("problems", [])


@functools.lru_cache(maxsize=1)
def _identity_decoder() -> Callable[[bytes], Any]:
    """A decoder of a facts shard making only its files' ``_identities`` fields, and its key and unit."""
    # imported here: only a plan that reads a facts shard needs it, not every process importing the step
    import msgspec

    identity = msgspec.defstruct("Identity", [("path", Any, None), ("sha256", Any, None),
                                              ("problems", Any, msgspec.field(default_factory=list))])
    shard = msgspec.defstruct("Shard", [("files", dict[str, identity], {}), ("key", Any, None),  # type: ignore[valid-type]
                                        ("unit", Any, None)])
    return msgspec.json.Decoder(shard).decode


class _FullKeys(Mapping[str, str]):
    """Each file's page key from every anchor (``page_key`` without reads), made when first asked:
    only the shared cache, a cluster and pages that read every anchor need one."""

    def __init__(self, facts: dict[str, Facts], links: dict[str, dict], related: dict[str, dict],
                 keys: list[str], known: dict[str, str]) -> None:
        self._facts, self._links, self._related, self._keys, self._known = facts, links, related, keys, known

    def __getitem__(self, rel: str) -> str:
        found = self._known.get(rel)
        if found is None:
            found = self._known[rel] = page_key(self._facts[rel], self._links.get(rel), self._related[rel], self._keys)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)


def _valid(names: object) -> dict[str, list[str]] | None:
    """A file's record of the names rendering looked up, if it is one (else: all of them)."""
    if isinstance(names, dict) and names and all(
            part in ASKED and isinstance(asked, list) and all(isinstance(name, str) for name in asked)
            for part, asked in names.items()):
        return names
    return None


def _remove_file_pages(config: Config, rel: str, counts: dict[str, int]) -> None:
    """Remove the pages of a file that went away, in every format, counted in ``counts``."""
    for page in (layout.docs_page(rel), layout.kw_page(rel)):
        remove_forms(config, page, counts)

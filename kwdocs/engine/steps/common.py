"""What the build steps share: cache keys, the rule set, the facts as stored, and writing a page."""
from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

from kwdocs import languages, layout
from kwdocs.config import Config
from kwdocs.context import per_config
from kwdocs.extract import ctags
from kwdocs.facts import Facts, identity as facts_identity
from kwdocs.formats import count_key, every_format, formats_for
from kwdocs.pages import compose as pages, model
from kwdocs.pages.render import renderer_for
from kwdocs.rules.ruleset import rules_for
from kwdocs.sources import Source, source_path
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import FACTS, load_shard, mark_damaged, shard_path

StateDamaged = output.StateDamaged


def digest(*parts: object) -> str:
    """A stable hash of JSON-like parts (paths and the like as their text), for cache keys."""
    return hashlib.sha256(output.compact_json(parts, sort_keys=True, default=str)).hexdigest()


@per_config
def extraction_key(config: Config) -> str:
    """What facts depend on besides the file itself: kwdocs' code, the languages installed
    (``languages.fingerprint``), the rules, and whether Universal Ctags is there to read the
    languages kwdocs has no extractor for."""
    return digest(code_fingerprint(), languages.fingerprint(), rules_for(config).fingerprint(), pages.ANALYSE_LIMIT,
                  ctags.fingerprint())


@per_config
def render_key(config: Config, template: str) -> str:
    """What a page depends on besides its model: its templates, kwdocs' code and the settings.
    The code fingerprint names the packages installed beside kwdocs with their versions, the
    docstring parser's among them: another one may read a docstring differently."""
    renderer = renderer_for(config)
    return digest(code_fingerprint(), renderer.fingerprint(template), config.fingerprint_data(),
                  model.sections_fingerprint())


Lookup = Callable[[str, Source], "Facts | None"]


class Read(NamedTuple):
    """A file as read ahead of its extraction: when reading began, its stamp then and after."""

    started: int
    stamp: tuple[int, int]
    source: Source



def recovering(step: Callable[..., dict]) -> Callable[..., dict]:
    """A step that meets state which is not what kwdocs wrote tells the build so (``runner``
    starts the state over and builds again) instead of failing or trusting it."""
    @functools.wraps(step)
    def run(config: Config, *args, **kwargs) -> dict:
        try:
            return step(config, *args, **kwargs)
        except StateDamaged as damage:
            mark_damaged(config, str(damage))
            return {}
    return run


def _stat(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


SOURCES_STAMP = "sources"     # the extract task's value holding ``sources_stamp``


def sources_stamp(config: Config, rels: Collection[str], seen: Mapping[str, list] | None = None) -> str | None:
    """One digest of a unit's files' sizes and time stamps, in place of a doit record per file
    (the building process held one for every file of the tree): from ``seen`` (``SEEN`` records,
    [size, time stamp, SHA-256]) as extraction left them, else from the disk.  None when a file
    has none: not read, too recent to vouch for (racily clean), gone or not a regular file."""
    stamp = hashlib.sha256()
    for rel in rels:
        if seen is not None:
            record = seen.get(rel)
            if record is None:
                return None
            size, mtime = record[0], record[1]
        else:
            try:
                info = os.stat(source_path(config, rel))
            except OSError:
                return None
            if not stat.S_ISREG(info.st_mode):
                return None
            size, mtime = info.st_size, info.st_mtime_ns
        stamp.update(f"{rel}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return stamp.hexdigest()


def stored_facts(config: Config, unit: str) -> dict[str, Facts]:
    """A live unit's facts for steps that make a lost summary again: none is damage."""
    files = load_shard(config, FACTS, unit, strict=True).get("files")
    if not isinstance(files, dict) or not files:
        raise StateDamaged(f"the facts of {unit or '.'} are missing")
    return files


def changed_units(config: Config, units: list[str], changed: list[str] | None) -> set[str]:
    """The units whose facts shard doit says changed, for the steps that read every unit's shard.

    When an ``uptodate`` check fails (the unit list, a template), doit runs the
    task without looking at its files and passes no changes at all: then any
    shard may have changed since the task last ran.
    """
    if not changed:
        return set(units)
    changed_paths = set(changed)
    return {unit for unit in units if shard_path(config, FACTS, unit) in changed_paths}


def keyword_pages_key(config: Config) -> str:
    """What the keyword pages depend on besides the keyword entries: the other formats' keys
    too, so that turning the site on renders every keyword page (not made from its Markdown)."""
    return "".join([render_key(config, pages.KEYWORDS_TEMPLATE), *(each.key() for each in formats_for(config))])


def folder_pages_keys(config: Config) -> list[str]:
    """What every folder's pages depend on besides the folder's files (see ``keyword_pages_key``)."""
    return [render_key(config, name) for name in pages.FOLDER_TEMPLATES] + [each.key() for each in formats_for(config)]


def file_page_keys(config: Config) -> list[str]:
    """What every file page depends on besides its own inputs: templates, settings, code."""
    return [render_key(config, name) for name in pages.FILE_TEMPLATES] + [extraction_key(config)] + [
        output_format.key() for output_format in formats_for(config)]


def page_key(facts: Facts, links: dict | None, related: dict, keys: list[str],
             reads: Mapping[str, Collection[str]] | None = None) -> str:
    """The key a file's pages are rendered from: they are the same whenever it is.  ``reads``:
    for some parts of its links (``anchors``, ``names``: name -> where it is defined), the names
    rendering looked up there (None: all of them); its pages show no other, so a definition
    moved elsewhere re-renders only the pages that show where it is."""
    if reads and links:
        links = dict(links)
        for part, names in reads.items():
            if isinstance(links.get(part), dict):
                links[part] = {name: links[part].get(name) for name in names}
    return digest(facts_identity(facts), links, related, keys)


def _write_page(config: Config, page: str, text: str | bytes, counts: dict[str, int]) -> None:
    """Write a page (named from the output folder) unless it holds ``text`` already, counted in
    ``counts`` by its format (``formats.count_key``: ``written`` for Markdown)."""
    # named as text: a Path for each of a cold build's pages took longer than checking it
    if output.write_if_changed(config.out, os.path.join(config.out, page), text):
        key = "written" if page.endswith(".md") else count_key(config, page)
        counts[key] = counts.get(key, 0) + 1


def remove_forms(config: Config, md_page: str, counts: dict[str, int], others_only: bool = False) -> None:
    """Remove ``md_page`` in every format a build may have written it in (``others_only``: not the
    Markdown page itself), counted in ``counts`` by format.  A format this build does not write
    (an earlier one may have) loses only what looks like its own: it never said what stands there."""
    if not others_only and output.remove(config.out, config.out / md_page):
        counts["removed"] = counts.get("removed", 0) + 1
    written = {each.name for each in formats_for(config)}
    for each in every_format(config):
        page = each.page_path(md_page)
        if page is None or (each.name not in written and not each.looks_generated(config, page)):
            continue
        if output.remove(config.out, config.out / page):
            key = f"{each.name}_removed"
            counts[key] = counts.get(key, 0) + 1


def step_counts(config: Config) -> dict[str, int]:
    """A step's counts of pages written and removed, zero in each format it writes."""
    return {"written": 0, "removed": 0, **{f"{each.name}_{what}": 0 for each in formats_for(config)
                                           for what in ("written", "removed")}}


def folder_page_paths(config: Config, folder: str) -> set[str]:
    """Every page a build writes for ``folder`` (its index and doc pages), in every format."""
    own = (layout.index_page(folder), layout.doc_page(folder))
    return {*own, *(page for output_format in formats_for(config) for page in map(output_format.page_path, own)
                    if page is not None)}


def _unit_rows(files: dict[str, Facts]) -> tuple[dict, dict]:
    """What folder pages need of a unit's files: the ``ROWS`` shard (its summary rows) and the
    ``FOLDER_PARTS`` shard (their digest, the unit's part of the folder's doc.md, its problems)."""
    ordered = sorted(files.items())
    rows = [pages.summary_row(facts) for _, facts in ordered]
    return {"rows": rows}, {"digest": digest(rows), "part": model.folder_part(rows),
                            "problems": [[rel, problem.get("line"), problem["message"]]
                                         for rel, facts in ordered for problem in facts.get("problems", [])]}

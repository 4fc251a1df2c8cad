"""Output formats: pages made from the page models (``kwdocs.pages.model``), and their whole life.

Markdown is the format every build writes; the configuration adds others (``formats =
["markdown", "html"]``, ``--format NAME``; ``html = true`` spells ``html``).  Formats are
registered in the entry-point group ``kwdocs.formats`` (kwdocs' own ``pyproject.toml`` names
Markdown, HTML and JSON there): a third format is one module and one entry.

A format names where its page of a Markdown page goes (or None: it writes none for it), what
its pages depend on besides the models (its templates and code, as a key), renders a model of
a page kind into text, and declares the rest of its pages' life: which files under the output
folder are named as its own (``names``), how one written by kwdocs is known without the state
(``looks_generated``), every file it writes beside a set of Markdown pages (``files``: what
``check`` expects and compares), whether the output holds it (``built``: ``check`` covers it
whatever the settings), and its extra doit tasks (``tasks``).  ``check``, ``clean``, prune,
the summary and ownership (``kwdocs.store.owned``) ask the formats, never a format by name.
``PageFormat`` gives the defaults a simple format (one file per page it writes) keeps.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Protocol

from kwdocs import layout
from kwdocs.config import FORMATS_GROUP as GROUP, Config
from kwdocs.context import per_config

MARKDOWN = "markdown"     # the format every build writes (``kwdocs.pages.markdown``)
# index page kinds the other formats render from the models of the Markdown folder and keyword pages
# (``kwdocs.pages.compose``), with their tables' rows (``Format.rows``) in the model's row list
INDEX_KINDS = ("folder_index", "folder_doc", "keywords")


class Format(Protocol):
    """One output format of the pages, and its pages' whole life in the output folder."""

    name: str
    label: str      # how the summary line names it ("HTML: 3 written, 0 removed")

    def page_path(self, md_page: str) -> str | None:
        """Where this format's page of ``md_page`` goes, relative to the output folder; None
        when it writes no page of it."""
        ...

    def key(self) -> str:
        """A digest of everything its pages depend on besides the models."""
        ...

    def render(self, kind: str, model: dict, md_page: str) -> str:
        """The page of ``kind`` (a key of ``markdown.TEMPLATES``, or one of ``INDEX_KINDS`` for a format
        other than Markdown) for ``model``; ``md_page`` names it."""
        ...

    def rows(self, kind: str, models: list[dict], md_page: str) -> list:
        """An index page's table rows (``file_row``: a folder index's, ``keyword_row``: a keyword
        page's), one per row model, for the page ``md_page``."""
        ...

    def names(self, path: str) -> bool:
        """Whether ``path`` (relative to the output folder) is named as one of this format's files."""
        ...

    def looks_generated(self, config: Config, path: str) -> bool:
        """Whether the file at ``path`` (relative to the output folder), one this format names,
        looks like kwdocs wrote it: what tells kwdocs' own files without the state."""
        ...

    def written(self, config: Config) -> set[str]:
        """The files its own records (not the journal) say kwdocs wrote: never another's."""
        ...

    def files(self, config: Config, md_pages: Iterable[str], strict: bool = False) -> set[str]:
        """Every file this format writes beside these Markdown pages (``strict``: a record it
        needs to say so is missing or damaged raises ``StateDamaged``)."""
        ...

    def built(self, config: Config, entries: dict) -> bool:
        """Whether the output holds this format's pages (``entries``: the journal's)."""
        ...

    def tasks(self, config: Config, units: list[str], shards: list[str]) -> dict[str, Callable[[], dict]]:
        """Its doit tasks besides the pages (``task_NAME``: a doit task creator)."""
        ...

    def task_order(self, order: list[str]) -> list[str]:
        """doit's default task order with its own tasks in their places."""
        ...


class PageFormat:
    """The defaults of a format that writes one file per page it renders: it names what ends in
    ``suffix``, knows its own by ``marker`` near its start, and adds no tasks."""

    name = ""
    label = ""
    suffix = ""
    marker = b""
    _HEAD = 2048

    def page_path(self, md_page: str) -> str | None:
        raise NotImplementedError

    def key(self) -> str:
        return ""

    def render(self, kind: str, model: dict, md_page: str) -> str:
        raise NotImplementedError

    def rows(self, kind: str, models: list[dict], md_page: str) -> list:
        return []

    def names(self, path: str) -> bool:
        return bool(self.suffix) and path.endswith(self.suffix) and not path.endswith(".md")

    def looks_generated(self, config: Config, path: str) -> bool:
        try:
            with open(os.path.join(config.out, path), "rb") as handle:
                return bool(self.marker) and self.marker in handle.read(self._HEAD)
        except OSError:
            return False

    def written(self, config: Config) -> set[str]:
        return set()

    def files(self, config: Config, md_pages: Iterable[str], strict: bool = False) -> set[str]:
        return {page for page in map(self.page_path, md_pages) if page is not None}

    def built(self, config: Config, entries: dict) -> bool:
        # by its looks too: another format's files may end as its do (``a.py.names.json``)
        return any(self.names(page) and self.looks_generated(config, page) for page in entries)

    def tasks(self, config: Config, units: list[str], shards: list[str]) -> dict[str, Callable[[], dict]]:
        return {}

    def task_order(self, order: list[str]) -> list[str]:
        return order


@functools.cache
def _registered() -> dict[str, Callable[[Config], Format]]:
    """Name -> how the format of a configuration is made, by the entry points of ``GROUP``, loaded
    on first use of each (the site's libraries load only when it is built or removed)."""
    # the packages' metadata only for a build that writes another format, or removes one
    from importlib.metadata import entry_points
    found = {point.name: point for point in entry_points(group=GROUP) if point.name != MARKDOWN}

    def maker(name: str) -> Callable[[Config], Format]:
        return lambda config: found[name].load()(config)
    return {name: maker(name) for name in sorted(found)}


@per_config
def formats_for(config: Config) -> tuple[Format, ...]:
    """The formats a build writes besides Markdown, in the configuration's order."""
    if all(name == MARKDOWN for name in config.formats):   # no installed format looked for: a no-op build's case
        return ()
    made = _registered()
    return tuple(made[name](config) for name in config.formats if name != MARKDOWN and name in made)


@per_config
def every_format(config: Config) -> tuple[Format, ...]:
    """Every installed format but Markdown, written by this build or not (an earlier build may
    have written it): what removing a page, ``clean`` and ownership ask."""
    return tuple(make(config) for make in _registered().values())


def format_of(config: Config, page: str) -> Format | None:
    """The format other than Markdown whose file ``page`` (relative to the output folder) is, if
    any; when several name it (``a.py.names.json`` ends as a JSON page does), the one that says
    the file looks like its own."""
    if page.endswith(".md"):
        return None
    named = [each for each in every_format(config) if each.names(page)]
    if len(named) > 1:
        return next((each for each in named if each.looks_generated(config, page)), named[0])
    return named[0] if named else None


def count_key(config: Config, page: str) -> str:
    """The summary's count a page written adds to: ``written`` for Markdown, ``<format>_written``
    for another format's."""
    found = format_of(config, page)
    return "written" if found is None else f"{found.name}_written"


def file_page_paths(config: Config, rel: str) -> set[str]:
    """Every page a build writes for the source file ``rel``, in every format."""
    own = (layout.docs_page(rel), layout.kw_page(rel))
    return {*own, *(page for output_format in formats_for(config) for page in map(output_format.page_path, own)
                    if page is not None)}


def written_forms(config: Config, md_page: str) -> list[str]:
    """``md_page`` in every format a build may have written it in, this one's or an earlier
    one's (the site may have been built before ``html`` was turned off): what removing the
    page removes."""
    return [md_page, *(page for page in (each.page_path(md_page) for each in every_format(config))
                       if page is not None)]

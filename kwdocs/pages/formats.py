"""Output formats: pages made from the page models (``kwdocs.pages.model``).

Markdown is the format every build writes; the configuration adds others (``html = true``
adds the site's HTML).  A format names where its page of a Markdown page goes, what its
pages depend on besides the models (its templates and code, as a key), and renders a
model of a page kind into text.  The render step gives every format the same models,
so a third format is one module with these three, named in ``OTHER_FORMATS``.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.context import per_config
from kwdocs.pages.render import Renderer, renderer_for

# page kinds made from models, by the Markdown template of each
TEMPLATES = {"file_docs": "file_docs.md.j2", "file_kw": "file_kw.md.j2"}
# index page kinds the other formats render from the models of the Markdown folder and keyword pages
# (``kwdocs.pages.compose``), with their tables' rows (``Format.rows``) in the model's row list
INDEX_KINDS = ("folder_index", "folder_doc", "keywords")


class Format(Protocol):
    """One output format of the pages of the kinds in ``TEMPLATES``."""

    name: str

    def page_path(self, md_page: str) -> str:
        """Where this format's page of ``md_page`` goes, relative to the output folder."""
        ...

    def key(self) -> str:
        """A digest of everything its pages depend on besides the models."""
        ...

    def render(self, kind: str, model: dict, md_page: str) -> str:
        """The page of ``kind`` (a key of ``TEMPLATES``, or one of ``INDEX_KINDS`` for a format
        other than Markdown) for ``model``; ``md_page`` names it."""
        ...

    def rows(self, kind: str, models: list[dict], md_page: str) -> list:
        """An index page's table rows (``file_row``: a folder index's, ``keyword_row``: a keyword
        page's), one per row model, for the page ``md_page``."""
        ...


class MarkdownFormat:
    """The Markdown pages, through the templates of ``kwdocs.pages.render``."""

    name = "markdown"

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer

    def page_path(self, md_page: str) -> str:
        return md_page

    def key(self) -> str:
        return "".join(self.renderer.fingerprint(template) for template in TEMPLATES.values())

    def render(self, kind: str, model: dict, md_page: str) -> str:
        return self.renderer.render(TEMPLATES[kind], model)


@per_config
def markdown_format(config: Config) -> MarkdownFormat:
    return MarkdownFormat(renderer_for(config))


# The formats a configuration may add besides Markdown, by the setting that turns each on:
# where its ``Format`` for a configuration is made (``module:function``), imported only when a
# build writes or removes its pages (the site's libraries load only when it is built).  The
# table, not an import, names them: a format is built on this seam, never the seam on it.
OTHER_FORMATS = {"html": "kwdocs.site.html:html_format"}


def _made_by(where: str) -> Callable[[Config], Format]:
    """The function named ``module:function`` in ``OTHER_FORMATS``."""
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


@per_config
def formats_for(config: Config) -> tuple[Format, ...]:
    """The formats a build writes besides Markdown, the pages' own record."""
    return tuple(_made_by(where)(config) for setting, where in OTHER_FORMATS.items() if getattr(config, setting))


def file_page_paths(config: Config, rel: str) -> set[str]:
    """Every page a build writes for the source file ``rel``, in every format."""
    own = (layout.docs_page(rel), layout.kw_page(rel))
    return {*own, *(output_format.page_path(page) for output_format in formats_for(config) for page in own)}


def written_forms(config: Config, md_page: str) -> list[str]:
    """``md_page`` in every format a build may have written it in, this one's or an earlier
    one's (the site may have been built before ``html`` was turned off): what removing the
    page removes."""
    return [md_page, *(_made_by(where)(config).page_path(md_page) for where in OTHER_FORMATS.values())]

"""The Markdown format, the one every build writes: pages through the templates of
``kwdocs.pages.render`` (registered as ``markdown`` in the ``kwdocs.formats`` entry-point group)."""
from __future__ import annotations

from kwdocs.config import Config
from kwdocs.context import per_config
from kwdocs.pages.render import Renderer, renderer_for

# page kinds made from models, by the Markdown template of each
TEMPLATES = {"file_docs": "file_docs.md.j2", "file_kw": "file_kw.md.j2"}


class MarkdownFormat:
    """The Markdown pages, through the templates of ``kwdocs.pages.render``."""

    name = "markdown"
    label = "Markdown"

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

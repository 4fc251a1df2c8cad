"""The HTML site as a format (``kwdocs.formats``): its pages' whole life, declared without
importing the site's renderer (``kwdocs.site.html``, heavy), which its pages come from.

The site lives in ``<out>/site``: an HTML page per Markdown page, its own assets in
``site/_kwdocs/`` (script, styles, folder tree, search scripts), and two extra build steps,
``search`` (the search data, beside the keyword pages) and ``site`` (what no page's step makes).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.context import per_config
from kwdocs.store import writer as output
from kwdocs.store.state import HTML_MANIFEST

SITE_FOLDER, STATIC_FOLDER = "site", "_kwdocs"   # as kwdocs.site.html names them
SITE_ASSETS = f"{SITE_FOLDER}/{STATIC_FOLDER}/"
HTML_MARKER = b'<meta name="kwdocs-page"'  # in the head of every HTML page of the site
# the files every site build writes in its asset folder (kwdocs.site.html's STATIC_FILES and
# PYGMENTS_CSS, kwdocs.site.search's TREE_FILE), and its search indexes: (state folder, scripts folder)
SITE_OWN_FILES = ("kwdocs.js", "kwdocs.css", "favicon.svg", "mermaid.min.js", "mermaid.LICENSE", "pygments.css",
                  "tree.js")
SITE_INDEXES = (("search", "keywords"), ("fulltext", "fulltext"))   # kwdocs.site.search's Index records
SITE_INDEX_META, SITE_INDEX_LIST = "meta.json", "buckets.js"


class HtmlPages:
    """The site's format: where its pages go and what it owns here, its rendering from
    ``kwdocs.site.html.HtmlFormat`` (made on first use)."""

    name = "html"
    label = "HTML"

    def __init__(self, config: Config) -> None:
        self.config = config
        self._renderer: Any = None

    def _made(self) -> Any:
        if self._renderer is None:
            from kwdocs.site.html import html_format
            self._renderer = html_format(self.config)
        return self._renderer

    def page_path(self, md_page: str) -> str:
        return f"{SITE_FOLDER}/{layout.html_page(md_page)}"

    def key(self) -> str:
        return self._made().key()

    def render(self, kind: str, model: dict, md_page: str) -> str:
        return self._made().render(kind, model, md_page)

    def rows(self, kind: str, models: list[dict], md_page: str) -> list:
        return self._made().rows(kind, models, md_page)

    def names(self, path: str) -> bool:
        # its pages and its own folder: a source folder named ``site`` has other formats' pages there too
        return path.startswith(SITE_ASSETS) or (path.startswith(SITE_FOLDER + "/") and path.endswith(".html"))

    def looks_generated(self, config: Config, path: str) -> bool:
        if path.startswith(SITE_ASSETS):
            return True
        if not path.endswith(".html"):
            return False
        try:
            with open(os.path.join(config.out, path), "rb") as handle:
                return HTML_MARKER in handle.read(2048)
        except OSError:
            return False

    def written(self, config: Config) -> set[str]:
        """The HTML pages the site's manifest says kwdocs rendered."""
        manifest = output.read_json(config.state / HTML_MANIFEST, {})
        pages = manifest.get("pages") if isinstance(manifest, dict) else None
        return {self.page_path(page) for page in pages} if isinstance(pages, dict) else set()

    def files(self, config: Config, md_pages: Iterable[str], strict: bool = False) -> set[str]:
        """Their HTML, the site's own files, and the search scripts the state's records of the
        indexes list (read as the build or dry run left them; ``strict``: a record missing or
        damaged raises ``StateDamaged``, else its scripts are left out)."""
        files = {self.page_path(page) for page in md_pages}
        files.update(SITE_ASSETS + name for name in SITE_OWN_FILES)
        for state_folder, scripts in SITE_INDEXES:
            meta = output.read_json(config.state / state_folder / SITE_INDEX_META, None, strict)
            units = meta.get("units") if isinstance(meta, dict) else None
            if not isinstance(units, dict) or not all(isinstance(entry, list) and len(entry) > 1
                                                      and isinstance(entry[1], dict) for entry in units.values()):
                if strict:
                    raise output.StateDamaged(f"{config.state / state_folder / SITE_INDEX_META} is damaged or missing")
                continue
            files.add(f"{SITE_ASSETS}{scripts}/{SITE_INDEX_LIST}")
            files.update(f"{SITE_ASSETS}{scripts}/{bucket}.js" for entry in units.values() for bucket in entry[1])
        return files

    def built(self, config: Config, entries: dict) -> bool:
        """A file the site's every build writes, in the folder that holds only the site's own files:
        the output says it, not the state, so ``check`` answers the same without the state folder."""
        root = os.path.join(config.out, SITE_ASSETS)
        return any(os.path.isfile(root + name) for name in SITE_OWN_FILES)

    def tasks(self, config: Config, units: list[str], shards: list[str]) -> dict[str, Callable[[], dict]]:
        def task_search() -> dict:
            """Bring the site's keyword and full-text search up to date with the extracted facts (html = true)."""
            from kwdocs.site.search import write_search
            return {
                "actions": [(write_search, [config, units, config.out / SITE_FOLDER / STATIC_FOLDER])],
                # the facts shards, as link and keywords: ready with them, before any render task (which
                # waits for link), so that it runs beside them (a task_dep on the extract group became ready
                # after the group's own turn, at times behind every render task); it checks its inputs
                # itself, so doit always runs it
                "file_dep": shards,
                "uptodate": [False],
                "verbosity": 0,
            }

        def task_site() -> dict:
            """Bring the HTML site in <out>/site up to date with the Markdown pages (html = true)."""
            from kwdocs.site.html import build_site
            return {
                "actions": [(build_site, [config])],
                "task_dep": ["assemble", "prune", "keywords"],
                "verbosity": 0,
            }
        return {"task_search": task_search, "task_site": task_site}

    def task_order(self, order: list[str]) -> list[str]:
        """``search`` right after ``keywords`` (it reads what they read), ``site`` last."""
        at = order.index("keywords") + 1 if "keywords" in order else len(order)
        return [*order[:at], "search", *order[at:], "site"]


@per_config
def html_pages(config: Config) -> HtmlPages:
    return HtmlPages(config)

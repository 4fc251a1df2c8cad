"""kwdocs as an MkDocs plugin: ``plugins: [kwdocs]`` in a project's ``mkdocs.yml``.

Each ``mkdocs build`` (and each rebuild of ``mkdocs serve``) first runs kwdocs' own
incremental build of the project into a folder of the plugin's (``.kwdocs-mkdocs/`` beside
``mkdocs.yml``, outside ``docs_dir``), so an edit rewrites that file's pages only; the pages
then join MkDocs' files under a prefix (``reference/``), read from that folder, with a
``SUMMARY.md`` for literate-nav.  The pages' links to the source files, which the site does
not hold, go to the page's own copy of the source (its Original Source section) unless a
``source_url`` (or a GitHub or GitLab ``repo_url``) names where the files are published.

A top-level module beside ``kwdocs.commands``: it may import anything; nothing of kwdocs
imports it (MkDocs finds it through the ``mkdocs.plugins`` entry point).
"""
from __future__ import annotations

import io
import logging
import os
import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mkdocs.config import config_options as c
from mkdocs.config.base import Config as MkDocsPluginConfig
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from kwdocs import layout
from kwdocs.config import Config, ConfigError, load_config
from kwdocs.mistakes import describe

log = logging.getLogger("mkdocs.plugins.kwdocs")

# a Markdown link's target, as kwdocs writes them: ``](target)``, never with spaces or parentheses
_LINK = re.compile(r"\]\(([^()\s]+)\)")
# where the source of a file is on its documentation page: MkDocs' anchor of "## Original Source"
SOURCE_ANCHOR = "original-source"
# repo_url hosts whose file view shows lines as ``blob/<ref>/<path>#L10-L20``
_FORGES = {"github.com": "{repo}/blob/{{ref}}/{{path}}#L{{start}}-L{{end}}",
           "gitlab.com": "{repo}/-/blob/{{ref}}/{{path}}#L{{start}}-{{end}}"}


class KwdocsPluginConfig(MkDocsPluginConfig):
    """The plugin's options in ``mkdocs.yml`` (paths relative to the folder of ``mkdocs.yml``)."""

    root = c.Optional(c.Type(str))              # the tree to document: mkdocs.yml's folder
    output = c.Type(str, default=".kwdocs-mkdocs")   # kwdocs' pages and incremental state
    prefix = c.Type(str, default="reference/")  # where the pages go in the site
    config = c.Optional(c.Type(str))            # kwdocs' settings: the root's pyproject.toml
    front_matter = c.Type(bool, default=False)  # title and description atop each page
    summary = c.Optional(c.Type(bool))          # SUMMARY.md: when the literate-nav plugin is on
    source_url = c.Optional(c.Type(str))        # as kwdocs' source_url; else from repo_url
    jobs = c.Type(int, default=0)               # kwdocs' parallel jobs: 0 for one per core


class KwdocsPlugin(BasePlugin[KwdocsPluginConfig]):
    """Runs kwdocs' build before MkDocs reads its files, and adds the pages to them."""

    def __init__(self) -> None:
        self.kwdocs: Config | None = None
        self.pages: dict[str, str] = {}     # site path of each page the plugin added -> its output path
        self.added: set[str] = set()        # the output paths of those pages

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        base = Path(config.config_file_path or ".").resolve().parent
        root = (base / self.config.root).resolve() if self.config.root else base
        out = (base / self.config.output).resolve()
        docs = Path(config.docs_dir).resolve()
        if out == docs or out.is_relative_to(docs) or docs.is_relative_to(out):
            raise PluginError(f"kwdocs: 'output' ({out}) must be outside docs_dir ({docs}): MkDocs would read "
                              "the pages twice, and kwdocs' state with them")
        prefix = self.config.prefix.strip("/")
        self.config.prefix = prefix + "/" if prefix else ""
        config_file = (base / self.config.config).resolve() if self.config.config else None
        overrides: dict[str, Any] = {"output": str(out), "html": False, "jobs": self.config.jobs or None,
                                     "front_matter": self.config.front_matter or None}
        try:
            settings = load_config(root, config_file, overrides)
            # the built site is no source: MkDocs' site_dir, and the one mkdocs.yml names (serve builds elsewhere)
            sites = {Path(config.site_dir).resolve(), (base / _named_site_dir(config)).resolve()}
            exclude = [*settings.exclude, *(f"/{site.relative_to(root).as_posix()}/" for site in sorted(sites)
                                            if site != root and site.is_relative_to(root))]
            source_url = self.config.source_url or settings.source_url or _forge_url(config.repo_url)
            overrides |= {"exclude": exclude, "source_url": source_url or None}
            self.kwdocs = load_config(root, config_file, overrides)
        except ConfigError as error:
            raise PluginError("\n".join(f"kwdocs: {problem}" for problem in error.problems)) from None
        return config

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files:
        assert self.kwdocs is not None
        _build(self.kwdocs)
        docs = Path(config.docs_dir).resolve()
        from kwdocs.store import owned
        self.pages = {}
        for page in sorted(owned.pages_on_disk(self.kwdocs)):
            uri = self.config.prefix + page
            if files.get_file_from_path(uri) is not None:   # the user's own page there wins
                log.info(f"kwdocs: {uri} is a page of docs_dir; kwdocs' page of that name is left out")
                continue
            file = File.generated(config, uri, abs_src_path=str(self.kwdocs.out / page))
            # a theme's "edit" link: a documentation page's is its source file's, relative to docs_dir as
            # MkDocs' edit_uri is (``../pkg/a.py`` from ``docs/``); a page written from many files has none
            kind, subject = layout.page_subject(page)
            file.edit_uri = os.path.relpath(self.kwdocs.src / subject, docs).replace(os.sep, "/") \
                if kind == "docs" else None
            files.append(file)
            self.pages[uri] = page
        self.added = set(self.pages.values())
        summary = self.config.summary
        if summary is None:
            summary = "literate-nav" in config.plugins
        if summary and files.get_file_from_path(self.config.prefix + "SUMMARY.md") is None:
            files.append(File.generated(config, self.config.prefix + "SUMMARY.md",
                                        content=summary_markdown(self.added)))
        return files

    def on_page_markdown(self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        out_page = self.pages.get(page.file.src_uri)
        if out_page is None or self.kwdocs is None:
            return markdown
        return source_links(markdown, out_page, self.kwdocs, self.added)

    def on_serve(self, server: Any, /, *, config: MkDocsConfig, builder: Any) -> Any:
        """Watch the source tree as ``kwdocs watch`` does: the folders its scan enters, not the
        output folder (a write there would start the next rebuild, and that one the next), nor
        what the configuration or ``.gitignore`` leaves out (``site_dir`` among them)."""
        from kwdocs.engine.watches import watch_plan
        if self.kwdocs is None:
            return server
        for folder, recursive in watch_plan(self.kwdocs).items():
            server.watch(folder, recursive=recursive)
        return server


def _build(config: Config) -> None:
    """kwdocs' incremental build, its summary line in MkDocs' log; a mistake of the user's or
    a failed build is MkDocs' PluginError, one line."""
    from kwdocs.engine.incremental import check_first_build, run_build
    from kwdocs.store.lock import locked

    stream = io.StringIO()
    try:
        scanned = check_first_build(config)
        with locked(config.state):
            code = run_build(config, jobs=config.jobs, quiet=True, scanned=scanned, stream=stream)
    except Exception as error:      # the user's set-up is one line; a bug, a traceback
        line = describe(error)
        if line is None:
            raise
        raise PluginError(line) from None
    for line in stream.getvalue().splitlines():
        log.info(line)
    if code != 0:
        raise PluginError(f"kwdocs: the build of {config.src} failed (exit {code})")


def _named_site_dir(config: MkDocsConfig) -> str:
    """The ``site_dir`` that ``mkdocs.yml`` names ("site" when it names none): ``mkdocs serve``
    gives the configuration a temporary one instead, and the named one may hold an earlier build."""
    try:
        text = Path(config.config_file_path or "").read_text(encoding="utf-8")
    except OSError:
        return "site"
    # a line of the file, not a YAML load: mkdocs.yml may hold tags only MkDocs' loader knows
    named = re.search(r"^site_dir:[ \t]*['\"]?([^'\"#\n]+?)['\"]?[ \t]*(?:#.*)?$", text, re.MULTILINE)
    return named.group(1) if named else "site"


def _forge_url(repo_url: str | None) -> str:
    """kwdocs' ``source_url`` for a GitHub or GitLab ``repo_url``; "" for any other."""
    match = re.fullmatch(r"https?://([^/]+)(/[^?#]+?)/?", repo_url or "")
    if not match or match.group(1) not in _FORGES:
        return ""
    return _FORGES[match.group(1)].format(repo=repo_url.rstrip("/") if repo_url else "")


def source_links(markdown: str, page: str, config: Config, pages: set[str]) -> str:
    """``markdown`` of the output page ``page`` with each link that leaves the output folder for
    the source tree sent to the page that shows that file (its Original Source section) or
    folder: the site holds the pages, not the files."""
    folder = posixpath.dirname(page)
    out = config.out.as_posix()

    def mended(match: re.Match) -> str:
        target = match.group(1)
        path, _, _ = target.partition("#")
        if not path.startswith("../") or ":" in path.split("/", 1)[0]:
            return match.group(0)
        whole = posixpath.normpath(posixpath.join(out, folder, unquote(path)))
        rel = posixpath.relpath(whole, config.src.as_posix())
        if rel.startswith("../") or whole == out or whole.startswith(out + "/"):
            return match.group(0)
        folder_page = layout.index_page("" if rel == "." else rel)
        for shown, anchor in ((layout.docs_page(rel), SOURCE_ANCHOR), (folder_page, "")):
            if shown in pages:
                return f"]({layout.link(page, shown, anchor)})"
        return match.group(0)

    return _LINK.sub(mended, markdown)


def summary_markdown(pages: set[str]) -> str:
    """literate-nav's ``SUMMARY.md`` of the pages: the folders as sections (each opening on its
    index), each with its overview and its files' documentation pages, in name order."""
    files: dict[str, list[tuple[str, str]]] = {}
    folders: set[str] = set()
    for page in pages:
        kind, subject = layout.page_subject(page)
        if kind == "docs":
            files.setdefault(posixpath.dirname(page), []).append((posixpath.basename(subject), page))
        elif kind == "index":
            folders.add(posixpath.dirname(page))
    lines: list[str] = []

    def folder_lines(folder: str, indent: str) -> None:
        if folder:      # a section, opening on the folder's index
            name = layout.source_folder(folder).rpartition("/")[2] + "/"
            lines.append(f"{indent}- [{_text(name)}]({layout.link('SUMMARY.md', layout.index_page(folder))})")
            indent += "    "
        else:
            lines.append(f"- [Index]({layout.link('SUMMARY.md', layout.index_page(folder))})")
        if layout.doc_page(folder) in pages:
            lines.append(f"{indent}- [Folder documentation]({layout.link('SUMMARY.md', layout.doc_page(folder))})")
        if not folder and layout.keywords_page() in pages:
            lines.append(f"- [Keyword index]({layout.link('SUMMARY.md', layout.keywords_page())})")
        for sub in sorted(sub for sub in folders if sub and posixpath.dirname(sub) == folder):
            folder_lines(sub, indent)
        for name, page in sorted(files.get(folder, [])):
            lines.append(f"{indent}- [{_text(name)}]({layout.link('SUMMARY.md', page)})")

    if "" in folders:
        folder_lines("", "")
    return "\n".join(lines) + "\n"


def _text(name: str) -> str:
    """A name as a link's text: Markdown's own characters escaped."""
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", name)

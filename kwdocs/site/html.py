"""The browsable HTML site: every Markdown page as an HTML page, plus search.

The site lives in its own folder, ``<out>/site/``, mirroring the Markdown tree
(``a/b/c.py_docs.md`` -> ``site/a/b/c.py_docs.html``).  A separate folder keeps
the HTML out of the Markdown pages a project commits, lets ``kwdocs serve``
serve exactly the site (never the state or anything else), and cannot clash
with a page: every Markdown page ends in ``.md`` and every site file in
``.html``, ``.js`` or ``.css``, so even a source folder named ``site`` only
shares a folder with it.

A page is rendered from its Markdown alone (cmark-gfm, tables, heading anchors,
code highlighted by ``kwdocs.site.highlight``), then sanitized with nh3 as
if the Markdown were hostile: only the tags and attributes the pages need survive.
A docs page's source is highlighted straight from its text; the script anchors each
line (``#L208``) and adds what every page has alike (the header's controls, permalinks), so
a page carries only its own content.
Navigation that depends on the whole tree (the folder tree, the search index)
is data loaded by the site's script, so adding a file re-renders no other page.
"""
from __future__ import annotations

import functools
import hashlib
import html as html_lib
import multiprocessing
import operator
import os
import posixpath
import re
import secrets
import unicodedata
from collections.abc import Callable, Mapping
from importlib import metadata
from keyword import iskeyword
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import cmarkgfm
import jinja2
import nh3
from cmarkgfm import cmark
from markupsafe import Markup, escape

from kwdocs import layout
from kwdocs.config import Config, shipped_templates
from kwdocs.context import per_config
from kwdocs.layout import html_page
from kwdocs.pages.render import (
    _DOUBLE_BACKTICKS,
    ModelEnvironment,
    StateBytecodeCache,
    _ModelCodeGenerator,
    human_size,
    mermaid_label,
    renderer_for,
    short_size,
)
from kwdocs.site import highlight as highlighting, search
from kwdocs.site.highlight import highlighted
from kwdocs.store import writer as output
from kwdocs.store.state import HTML_MANIFEST, KEYWORDS_META

SITE_FOLDER = "site"
STATIC_FOLDER = "_kwdocs"          # the site's own assets: script, styles, tree and search data
MANIFEST = HTML_MANIFEST     # in the state folder: what each HTML page was rendered from
PAGE_TEMPLATE = "html/page.html.j2"
STATIC_FILES = ("kwdocs.js", "kwdocs.css", "favicon.svg", "mermaid.min.js", "mermaid.LICENSE")
PYGMENTS_CSS = "pygments.css"

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'none'")
# A page with diagrams: Mermaid styles the SVG it draws with a style element and attributes;
# scripts stay the site's own files only
DIAGRAM_CSP = CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")

# What the pages need, and nothing more: no script, style, forms, frames, images or event handlers.
ALLOWED_TAGS = {
    "a", "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "strong", "em", "b", "i",
    "code", "pre", "span", "div", "blockquote", "table", "thead", "tbody", "tr", "th", "td",
    "hr", "br", "del", "sup", "sub", "dl", "dt", "dd", "details", "summary",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "id", "title", "class"},
    "h1": {"id"}, "h2": {"id"}, "h3": {"id"}, "h4": {"id"}, "h5": {"id"}, "h6": {"id"},
    "span": {"class"}, "i": {"class"}, "div": {"class"}, "code": {"class"}, "pre": {"class"},
    "details": {"class", "open"}, "th": {"align"}, "td": {"align"},
}
URL_SCHEMES = {"http", "https", "mailto"}
RESERVED_ID_PREFIX = "kwdocs"      # the layout's own element ids; content may not take them


# ---------------------------------------------------------------- paths

def site_root(config: Config) -> Path:
    return config.out / SITE_FOLDER


def root_prefix(page: str) -> str:
    """The relative way from a page up to the site root (``./`` at the top)."""
    depth = page.count("/")
    return "../" * depth if depth else "./"


def site_href(md_page: str, href: str) -> str:
    """Where a link in a Markdown page points in the site.

    Links to other pages (``x_docs.md#a``, ``index.md``) point at their HTML
    page, anchor kept; links that leave the Markdown tree (to a source file in
    the repository) gain one ``../`` because the site sits one folder deeper.
    """
    if not href or href.startswith(("#", "/")):
        return href
    path, hash_mark, anchor = href.partition("#")
    return _site_path(md_page, path) + hash_mark + anchor


# a relative path that ``urlsplit`` reads as a path whole: no scheme, query or characters it strips
_PLAIN_PATH = re.compile(r"[^\x00-\x20/:?][^:?\t\r\n]*(?<!\.md)")


@functools.lru_cache(maxsize=8192)     # a page links a few pages many times (each definition's anchor)
def _site_path(md_page: str, path: str) -> str:
    """``site_href`` of a link without its anchor."""
    if path.endswith(".md") and ":" not in path and "?" not in path:
        # what ``layout.link`` writes, ``./`` or some ``../`` then names: no parsing needed
        ups = 0
        while path.startswith("../", ups * 3):
            ups += 1
        rest = path[ups * 3:]
        if (ups or rest.startswith("./")) and ups <= md_page.count("/") and "./" not in rest[2:] \
                and "/." not in rest:
            return path[:-3] + ".html"
    elif _PLAIN_PATH.fullmatch(path):    # what the parse below makes of a relative path to a source
        return "../" + path
    parts = urlsplit(path)
    if parts.scheme or parts.netloc or not parts.path:
        return path
    target = posixpath.normpath(posixpath.join(posixpath.dirname(md_page), unquote(parts.path)))
    if target == ".." or target.startswith("../") or not parts.path.endswith(".md"):
        return "../" + path
    return parts.path[:-3] + ".html" + path[len(parts.path):]


# ---------------------------------------------------------------- Markdown to safe HTML

_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_NOT_SLUG = re.compile(r"[^\w\s-]")
_SPACES = re.compile(r"[-\s]+")
_CODE_BLOCK = re.compile(r'<pre(?: lang="([^"]*)")?><code>(.*?)</code></pre>', re.DOTALL)


@functools.lru_cache(maxsize=1024)     # the same section titles on every page
def _slug(text: str) -> str:
    """A heading's id as Python-Markdown's table of contents made it (links to sections keep working)."""
    if text.isascii() and "&" not in text and "<" not in text:     # no entity, tag or accent to undo
        return _SPACES.sub("-", _NOT_SLUG.sub("", text).strip().lower())
    text = unicodedata.normalize("NFKD", html_lib.unescape(_TAG.sub("", text)))
    text = _NOT_SLUG.sub("", text.encode("ascii", "ignore").decode()).strip().lower()
    return _SPACES.sub("-", text)


def _anchor_headings(body: str) -> str:
    """Each heading gets an id (unique in the page); the script adds its permalink."""
    seen: set[str] = set()

    def anchor(match: re.Match) -> str:
        base = _slug(match.group(2)) or "section"
        slug, number = base, 0
        while slug in seen:
            number += 1
            slug = f"{base}_{number}"
        seen.add(slug)
        level = match.group(1)
        return f'<h{level} id="{slug}">{match.group(2)}</h{level}>'
    return _HEADING.sub(anchor, body)


def _highlight_blocks(body: str) -> str:
    """Code blocks of the prose (a docstring's example, say), highlighted by their info string."""
    def block(match: re.Match) -> str:
        code = highlighted(html_lib.unescape(match.group(2)), match.group(1) or "")
        return f'<div class="codehilite"><pre><code>{code}\n</code></pre></div>'
    return _CODE_BLOCK.sub(block, body)


CMARK_EXTENSIONS = ["table", "strikethrough", "autolink"]


def _convert(markdown_text: str) -> str:
    """Markdown (GitHub's dialect) to HTML.  Raw HTML is kept for the sanitizer to judge: GitHub's
    tag filter would turn a hostile tag into text, where the sanitizer drops it."""
    return _highlight_blocks(_anchor_headings(cmarkgfm.markdown_to_html_with_extensions(
        markdown_text, options=cmark.Options.CMARK_OPT_UNSAFE, extensions=CMARK_EXTENSIONS)))


def _attribute_filter(md_page: str):
    def keep(tag: str, attribute: str, value: str) -> str | None:
        if attribute == "href" and tag == "a":
            return site_href(md_page, value)
        if attribute == "id" and value.lower().startswith(RESERVED_ID_PREFIX):
            return None
        return value
    return keep


def sanitize(html: str, md_page: str) -> str:
    """Keep only what the pages need; rewrite page links to the HTML pages on the way."""
    return nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
                     attribute_filter=_attribute_filter(md_page), strip_comments=True,
                     link_rel=None)   # no link may open a window (no target) and the page sends no referrer


def markdown_to_html(markdown_text: str, md_page: str) -> str:
    """The body of a page: Markdown converted, highlighted, anchored, sanitized, links rewritten.

    A documentation page's source is highlighted straight from its text (line numbers and
    anchors, folded when long); only the prose around it goes through Markdown and the
    sanitizer, which spent most of their time on the source.
    """
    found = _source_fence(markdown_text) if md_page.endswith(layout.DOCS_SUFFIX) else None
    if found is None:
        return sanitize(_convert(markdown_text), md_page)
    start, end, info, text = found
    before = sanitize(_convert(markdown_text[:start]), md_page)
    after = _LINE_REFERENCE.sub(_line_link, sanitize(_convert(markdown_text[end:]), md_page))
    return before + source_block(text, info) + after


# ---------------------------------------------------------------- the source, navigable

SOURCE_HEADING = "\n## Original Source\n\n"
FOLD_LINES = 400           # longer sources start folded, so the overview and definitions come first
_FENCE_LINE = re.compile(r"(`{3,})([^`\n]*)\n")
# "(line 208)" after a definition's name or signature in Detailed Analysis, perhaps linked to the
# source file's lines (a Markdown page's link): the site's own source view has the line
_LINE_REFERENCE = re.compile(r"(</code>(?:</strong>)?) \((?:<a href=\"[^\"]*\">)?line (\d+)(?:</a>)?\)")


def _line_link(match: re.Match) -> str:
    return f'{match.group(1)} (<a href="#L{match.group(2)}">line {match.group(2)}</a>)'


def _source_fence(markdown_text: str) -> tuple[int, int, str, str] | None:
    """Where the Original Source block of a docs page starts and ends, its info string and its
    text; None when the page has none (a binary file, a custom template)."""
    heading = markdown_text.find(SOURCE_HEADING)
    if heading < 0:
        return None
    start = heading + len(SOURCE_HEADING)
    opening = _FENCE_LINE.match(markdown_text, start)
    if opening is None:
        return None
    fence = opening.group(1)
    close = markdown_text.find("\n" + fence + "\n", opening.end() - 1)
    if close < 0:
        return None
    text = markdown_text[opening.end():close + 1]
    return start, close + len(fence) + 2, opening.group(2).strip(), text


def source_block(text: str, info: str, links: Mapping[str, str] | None = None) -> str:
    """The highlighted source, its lines counted (``data-lines``); identifiers that ``links``
    names link to their definitions.

    The script gives each line its anchor (``#L208``), an empty element whose number the
    stylesheet draws: copying the source copies no numbers, and the page carries only the
    highlighted text (an anchor per line written into every page was a twentieth of the site).
    """
    rows = highlighted(text, info, links)
    count = rows.count("\n") + 1 if text else 0
    fold = "" if count > FOLD_LINES else " open"
    plural = "s" if count != 1 else ""
    return (f'<details class="kwdocs-source"{fold}><summary>Source ({count:,} line{plural})</summary>'
            f'<div class="codehilite"><pre class="kwdocs-numbered" data-lines="{count}"><code>{rows}\n</code></pre>'
            '</div></details>\n')


# ---------------------------------------------------------------- the layout

def describe_page(md_page: str, subject: str | None = None) -> tuple[str, str, str]:
    """(kind, subject, title) of a page; the subject is the source file or folder by its real
    name: ``subject`` when given (the state's record, exact for cut page names too), else as
    ``layout.page_subject`` reads it from the path."""
    kind, from_path = layout.page_subject(md_page)
    if subject is None or kind not in ("docs", "kw", "index", "doc"):
        subject = from_path
    titles = {"docs": f"{subject} · documentation", "kw": f"{subject} · keywords",
              "index": f"{subject or '/'} · folder index", "doc": f"{subject or '/'} · folder documentation",
              "keywords": "keyword index"}
    return kind, subject, titles.get(kind, posixpath.basename(md_page))


def breadcrumbs(page: str, kind: str, subject: str, project: str) -> list[dict]:
    """Links from the root folder down to the page; the last crumb is the page itself."""
    folder = posixpath.dirname(subject) if kind in ("docs", "kw") else subject
    crumbs = [dict(label=label, href=href) for label, href in _folder_crumbs(page.rpartition("/")[0], folder, project)]
    if kind in ("docs", "kw"):
        crumbs.append(dict(label=posixpath.basename(subject), href=""))
    elif kind == "doc":
        crumbs.append(dict(label="documentation", href=""))
    elif kind == "keywords":
        crumbs.append(dict(label="keyword index", href=""))
    else:
        crumbs[-1]["href"] = ""
    return crumbs


@functools.lru_cache(maxsize=1024)     # every page of a folder has the same way up
def _folder_crumbs(page_folder: str, folder: str, project: str) -> tuple[tuple[str, str], ...]:
    """(label, href) of the root and each folder down to ``folder``, from a page in ``page_folder``."""
    base = page_folder + "/" if page_folder else ""     # ``layout.link`` reads only the page's folder
    crumbs = [(project, layout.link(base, "index.html"))]
    parts = folder.split("/") if folder else []
    for depth, part in enumerate(parts):
        crumbs.append((part, layout.link(base, html_page(layout.index_page("/".join(parts[: depth + 1]))))))
    return tuple(crumbs)


TOC_MIN_SECTIONS = 5       # a page with fewer sections needs no table of contents
_SECTION = re.compile(r'<h2 id="([^"]+)">(.*?)</h2>', re.DOTALL)
_SECTION_START = '<h2 id="'


def contents(body: str) -> list[dict]:
    """The page's sections (id and plain text) for its table of contents; none on a short page."""
    sections = []
    # ``_SECTION.findall``, its matches looked for where a heading starts (a fast substring search)
    start = body.find(_SECTION_START)
    while start >= 0:
        found = _SECTION.match(body, start)
        if found is None:
            start = body.find(_SECTION_START, start + 1)
            continue
        anchor, label = _section_entry(*found.groups())
        sections.append(dict(id=anchor, label=label))
        start = body.find(_SECTION_START, found.end())
    return sections if len(sections) >= TOC_MIN_SECTIONS else []


@functools.lru_cache(maxsize=1024)     # pages share their sections' headings
def _section_entry(anchor: str, text: str) -> tuple[str, str]:
    """A section's id and plain text, from its heading's."""
    return html_lib.unescape(anchor), html_lib.unescape(_TAG.sub("", text)).strip()


# a link whose text names a page file: the site names what the page is about instead
_PAGE_NAME_LINK = re.compile(r"(<a [^>]*>)<code>([^<]*?)(_docs\.md|_kw\.md)</code></a>")
_FOLDER_PAGE_LINK = re.compile(r"(<a [^>]*>)<code>(index\.md|doc\.md|keywords\.md)</code></a>")
_FOLDER_PAGE_LABELS = {"index.md": "folder index", "doc.md": "folder documentation", "keywords.md": "keyword index"}


def name_links(body: str) -> str:
    """``linear.py_docs.md`` reads ``linear.py``, ``linear.py_kw.md`` ``linear.py keywords``,
    ``index.md`` ``folder index``: the reader of the site never sees a page file."""
    body = _PAGE_NAME_LINK.sub(lambda m: f"{m.group(1)}<code>{m.group(2)}</code>"
                               f"{' keywords' if m.group(3) == '_kw.md' else ''}</a>", body)
    return _FOLDER_PAGE_LINK.sub(lambda m: f"{m.group(1)}{_FOLDER_PAGE_LABELS[m.group(2)]}</a>", body)


class _SiteBytecodeCache(StateBytecodeCache):
    """The site's compiled templates, kept apart from the Markdown pages' (the same template
    name compiles to other code with autoescaping on)."""

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return super().get_cache_key(f"site\0{name}", filename)


def _output(value: Any) -> str:
    """A value a template writes, escaped as markupsafe's ``escape`` does (the same text), without
    making a ``Markup`` of each: the pages' text and numbers are most of what the templates write."""
    kind = type(value)
    if kind is str:
        if "&" in value or "<" in value or ">" in value or "'" in value or '"' in value:
            return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                    .replace("'", "&#39;").replace('"', "&#34;"))
        return value        # most names and words: looked for, not replaced
    if kind is int:
        return str(value)
    if kind is Markup:      # a helper's or macro's HTML: as it is (``escape`` would copy it into a new Markup)
        return value
    return escape(value)


class _OutputCodeGenerator(_ModelCodeGenerator):
    """``{{ value }}`` compiled to ``_output`` rather than ``escape``: the text written is the same
    (the output is joined into the page, never used as markup again)."""

    def _output_child_pre(self, node: jinja2.nodes.Expr, frame: jinja2.compiler.Frame,
                          finalize: Any) -> None:
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape or finalize.src is not None:
            super()._output_child_pre(node, frame, finalize)
        else:
            self.write("environment.output(")

    def visit_Call(self, node: jinja2.nodes.Call, frame: jinja2.compiler.Frame, forward_caller: bool = False) -> None:
        # what a page template can call by name is kwdocs' own functions, its macros and Jinja's plain
        # globals, none asking for the context: called directly rather than through ``context.call``
        if forward_caller or self.environment.is_async or not isinstance(node.node, jinja2.nodes.Name):
            super().visit_Call(node, frame, forward_caller=forward_caller)
            return
        if node.dyn_args is not None or node.dyn_kwargs is not None or any(
                iskeyword(kwarg.key) for kwarg in node.kwargs):
            self.write("environment.direct(")
            self.visit(node.node, frame)
            self.signature(node, frame)
            self.write(")")
            return
        # the common call (named arguments are names Python takes) written as a Python call: no frame
        # of ``direct`` around each (templates call kwdocs' helpers hundreds of times a page)
        self.write("(")
        self.visit(node.node, frame)
        self.write(")(")
        for index, argument in enumerate((*node.args, *node.kwargs)):
            if index:
                self.write(", ")
            self.visit(argument, frame)
        self.write(")")


class _HtmlEnvironment(ModelEnvironment):
    """The HTML templates' environment: page models as dicts, values escaped by ``_output``."""

    code_generator_class = _OutputCodeGenerator
    output = staticmethod(_output)

    @staticmethod
    def direct(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)


def _environment(override: Path | None, out: Path | None = None) -> jinja2.Environment:
    folders = ([str(override)] if override else []) + [str(shipped_templates())]
    # page models are plain dicts: a key is looked up first (``block.items`` is a model's list);
    # compiled templates kept in the state (``out``), as the Markdown pages' are: an edit compiles none
    environment = _HtmlEnvironment(loader=jinja2.FileSystemLoader(folders), autoescape=True,
                                     bytecode_cache=_SiteBytecodeCache(out) if out is not None else None,
                                     undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                     trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    environment.filters.update(inline=_inline, slug=_slug, size=human_size, num=lambda value: f"{value:,}",
                               codes=_codes, basename=posixpath.basename, short_size=short_size, prose=_prose,
                               mermaid=mermaid_label)
    environment.globals.update(code_block=_code_block, heading=_heading)
    return environment


@per_config
def _environment_for(config: Config) -> jinja2.Environment:
    return _environment(config.templates, config.out)


def _template(config: Config, name: str = PAGE_TEMPLATE) -> jinja2.Template:
    return _environment_for(config).get_template(name)


@functools.lru_cache(maxsize=64)
def _globals(template: jinja2.Template) -> dict[str, Any]:
    """A template's globals as one dict: Jinja merges them into every page's context anew."""
    return dict(template.globals)


def _render(template: jinja2.Template, model: dict, extra: dict | None = None) -> str:
    """``render_template`` of ``template`` for ``model`` and the names in ``extra``: the context's
    one dict made at once, of the template's globals, the model and ``extra``; ``block(name)``
    writes the block ``name`` (what ``self[name]()`` writes, without Jinja's call machinery)."""
    values = {**_globals(template), **model, **(extra or {})}
    context = template.new_context(values, shared=True)
    values["block"] = functools.partial(_block, context)
    try:
        return "".join(template.root_render_func(context))
    finally:
        # a template's macros close over its context, which holds the model: a cycle that kept
        # every page's model of a step alive until the collector ran
        context.vars.clear()
        values.clear()


def _block(context: jinja2.runtime.Context, name: str) -> Markup:
    """The block ``name`` of the page ``context`` renders, its own template's or the one it extends."""
    return Markup("".join(context.blocks[name][0](context)))


def render_site_page(config: Config, md_page: str, markdown_text: str, subject: str | None = None) -> str:
    """The whole HTML page for one Markdown page (``md_page`` relative to the output root; ``subject``:
    see ``describe_page``): the pages no format renders from their models yet (folder and keyword index pages)."""
    return _page(config, md_page, name_links(markdown_to_html(markdown_text, md_page)), subject)


def _page(config: Config, md_page: str, body: str, subject: str | None, sources: list[str] | None = None,
          template: jinja2.Template | None = None, diagrams: bool = False) -> str:
    """The layout around a page's body: header, folder tree, breadcrumbs, tabs, contents; ``sources``:
    the highlighted sources the body holds as ``_SOURCE_MARK``s, put in last; ``template``: the
    layout's (``PAGE_TEMPLATE``), when the caller has it; ``diagrams``: the body has Mermaid
    diagrams, which only then load Mermaid."""
    page = html_page(md_page)
    kind, subject, title = describe_page(md_page, subject)
    tabs = []
    if kind in ("docs", "kw"):
        tabs = [dict(label="Documentation", href=layout.link(page, html_page(layout.docs_page(subject))),
                     current=kind == "docs"),
                dict(label="Keywords", href=layout.link(page, html_page(layout.kw_page(subject))),
                     current=kind == "kw")]
    text = _render(template or _template(config), dict(
        csp=Markup(DIAGRAM_CSP if diagrams else CSP), diagrams=diagrams,
        title=f"{title} · {config.project_name}", project=config.project_name, page=page,
        root=root_prefix(page), static=root_prefix(page) + STATIC_FOLDER + "/", kind=kind,
        crumbs=breadcrumbs(page, kind, subject, config.project_name), tabs=tabs,
        body=Markup(body), toc=contents(body)))
    if not sources:
        return text
    parts = text.split(_SOURCE_MARK)
    # each mark in the body's order (a layout of one's own may write the body twice, or not at all)
    return "".join(part + sources[index % len(sources)] for index, part in enumerate(parts[:-1])) + parts[-1]


# Where a page's highlighted source goes, until the page around it is made: the largest part of a
# page is then copied once, and its table of contents is read from the rest.  Random per process,
# so no text of a source can spell it; digits and NULs, which a layout's case filters leave alone.
_SOURCE_MARK = f"\0{secrets.randbits(128)}\0"


# ---------------------------------------------------------------- the HTML format: pages from their models

FILE_PAGE_SUFFIXES = (layout.DOCS_SUFFIX, layout.KW_SUFFIX)
FILE_TEMPLATES = {"file_docs": "html/file_docs.html.j2", "file_kw": "html/file_kw.html.j2"}
# folder and keyword index pages: their models' table rows come rendered (``rows``), by ROW_MACROS
INDEX_TEMPLATES = {"folder_index": "html/folder_index.html.j2", "folder_doc": "html/folder_doc.html.j2",
                   "keywords": "html/keywords.html.j2"}
DIAGRAM_TEMPLATE = "diagram.mmd.j2"     # imported by the folder_doc templates of both formats
ROW_MACROS = {"file_row": ("html/folder_row.html.j2", "file_row"), "keyword_row": ("html/keyword_row.html.j2", "row")}
FRAGMENT_TAGS = {"a", "code", "em", "strong", "del", "br"}


class HtmlFormat:
    """The site's pages of a source file, from the models its Markdown pages are made of
    (``kwdocs.formats``): no Markdown is parsed again, only the model's short Markdown
    sentences (``inline``)."""

    name = "html"

    def __init__(self, config: Config) -> None:
        self.config = config
        self.templates: dict[str, jinja2.Template] = {}

    def _template(self, name: str) -> jinja2.Template:
        """``_template`` of this format's configuration, kept here (Jinja's own cache takes a lock
        and a few calls to find one, and ``per_config`` hashes the configuration)."""
        found = self.templates.get(name)
        if found is None:
            found = self.templates[name] = _template(self.config, name)
        return found

    def page_path(self, md_page: str) -> str:
        return f"{SITE_FOLDER}/{html_page(md_page)}"

    def key(self) -> str:
        return html_render_key(self.config)

    def render(self, kind: str, model: dict, md_page: str) -> str:
        href = functools.partial(site_href, md_page)
        if kind in INDEX_TEMPLATES:
            body = _render(self._template(INDEX_TEMPLATES[kind]), model, {"href": href})
            # a folder's pages name it as the build knows it (exact for an escaped folder name)
            return _page(self.config, md_page, body, model.get("folder") if kind != "keywords" else None,
                         template=self._template(PAGE_TEMPLATE), diagrams=bool(model.get("diagrams")))
        page = html_page(md_page)
        template = self._template(FILE_TEMPLATES[kind])
        sources: list[str] = []
        body = _render(template, model, dict(
            md_page=md_page, href=href, spans=functools.partial(_spans, href),
            source=functools.partial(_source, sources, _source_links(model, page)),
            definition=functools.partial(_definition, href, md_page),     # one entry line, as templates had it
            definitions=functools.partial(_definitions, href, md_page),
            documentation=functools.partial(_documentation, href),
            keyword_items=functools.partial(_keyword_items, href), section_items=_section_items,
            has_block=template.blocks.__contains__,
            markdown_section=functools.partial(self._markdown_section, model, md_page)))
        return _page(self.config, md_page, body, model["path"], sources, self._template(PAGE_TEMPLATE),
                     diagrams=bool(model.get("class_diagram")))

    def rows(self, kind: str, models: list[dict], md_page: str) -> list[Markup]:
        """Table rows of an index page (``kind``: a key of ``ROW_MACROS``), one per model, each
        model's keys the macro's arguments."""
        template, name = ROW_MACROS[kind]
        macro = getattr(self._template(template).module, name)
        href = functools.partial(site_href, md_page)
        keys = [argument for argument in macro.arguments if argument != "href"]
        if macro.arguments[-1:] != ("href",) or len(keys) < 2:
            return [macro(**model, href=href) for model in models]
        # positional arguments: Jinja matches keyword arguments to a macro's names on every call
        values = operator.itemgetter(*keys)
        return [macro(*values(model), href) for model in models]

    def _markdown_section(self, model: dict, md_page: str, section: dict) -> Markup:
        """A docs-page section that has a Markdown block but no HTML one (a section added through
        the seam with its Markdown block only): its Markdown, converted and sanitized."""
        # the Markdown templates and their renderer only for a section's text (a light module imports this one)
        from kwdocs.pages.markdown import TEMPLATES

        text = renderer_for(self.config).render(TEMPLATES["file_docs"], model)
        start = text.find(f"\n## {section['title']}\n")
        if start < 0:
            return Markup("")
        start = text.index("\n", start + 1) + 1
        ends = [found for found in (text.find("\n## ", start), text.find("\n---\n", start)) if found >= 0]
        return Markup(name_links(sanitize(_convert(text[start:min(ends, default=len(text))]), md_page)))


@per_config
def html_format(config: Config) -> HtmlFormat:
    return HtmlFormat(config)


def _source_links(model: dict, page: str) -> dict[str, str] | None:
    """Identifier -> href for the names of a source that the model maps to their definitions
    (``source_names``: identifier -> (Markdown page, line, or None for a whole file)); None
    when it maps none."""
    names = model.get("source_names")
    if not names:
        return None
    # the file's own definitions lead to their entries in Detailed Analysis, which link back to the line
    entries = {(entry["name"], entry["line"]): entry["anchor"] for entry in model.get("structure") or ()}
    links = {}
    for name, (md_page, line) in names.items():
        target = html_page(md_page)
        if target == page:
            links[name] = f"#{entries.get((name, line)) or f'L{line}'}"
            continue
        anchor = f"L{line}" if line else ""     # no line: a module or header imported whole
        links[name] = layout.link(page, target, anchor)
    return links


def _source(sources: list[str], links: dict[str, str] | None, text: str, info: str) -> Markup:
    """The highlighted source, kept in ``sources``; the page holds its mark until ``_page``."""
    sources.append(source_block(text, info, links))
    return Markup(_SOURCE_MARK)


@functools.lru_cache(maxsize=512)      # a docstring's example is often another's too (an overload's, say)
def _code_block(text: str, info: str) -> Markup:
    """A code block of a docstring or doc comment, highlighted."""
    code = highlighted(text, info or "")
    return Markup(f'<div class="codehilite"><pre><code>{code}\n</code></pre></div>')


@functools.lru_cache(maxsize=1024)     # every page has the same section headings
def _heading(level: int, anchor: str, text: str, code: str = "") -> Markup:
    """A heading with its id (the ids the Markdown pages' headings get in the site); the script adds
    its permalink."""
    inner = html_lib.escape(text, quote=False) + (f"<code>{html_lib.escape(code, quote=False)}</code>" if code else "")
    anchor = html_lib.escape(anchor)
    return Markup(f'<h{level} id="{anchor}">{inner}</h{level}>')


def _text(value: str) -> str:
    """``html.escape(value, quote=False)``, looked for before replaced: most text has nothing to escape."""
    if "&" in value or "<" in value or ">" in value:
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return value


def _spans(href: Callable[[str], str], items: list[dict]) -> Markup:
    """A docstring's spans (``kwdocs.pages.docstrings``): text, and code linked when it names a
    definition kwdocs knows."""
    out = []
    for span in items:
        value = _text(span["v"])
        kind = span["t"]
        if kind == "strong" or kind == "em":   # a mark of Markdown emphasis (``docstrings.markdown_spans``)
            out.append(f"</{kind}>" if span["end"] else f"<{kind}>")
        elif kind == "link":   # a web address, made safe by ``docstrings.safe_url``
            out.append(f'<a href="{html_lib.escape(span["link"])}">{value}</a>')
        elif kind != "code":
            out.append(value)
        elif span.get("link"):
            out.append(f'<a href="{html_lib.escape(href(span["link"]))}"><code>{value}</code></a>')
        else:
            out.append(f"<code>{value}</code>")
    return Markup("".join(out))


def _definition(href: Callable[[str], str], md_page: str, item: dict) -> Markup:
    """A definition's entry line in Code Structure: its anchor, kind, name, signature, a link to
    its line, decorators and where it is used (pages list hundreds: a Python call each, not a template loop's)."""
    out = [f'<a id="{_output(item["anchor"])}"></a>{_output(item["kind_label"])} '
           f'<strong><code>{_output(item["name"])}</code></strong>']
    if item["signature_spans"]:
        out.append(f" {_spans(href, item['signature_spans'])}")
    elif item["signature"]:
        out.append(f" <code>{_output(item['signature'])}</code>")
    line = _output(item["line"])
    out.append(f' (<a href="#L{line}">line {line}</a>)')
    if item.get("condition"):
        out.append(_condition(item["condition"]))
    if item["decorators"]:
        out.append(f", decorated with {_codes(item['decorators'], '@')}")
    if item["uses"]:
        out.append("; used in " + ", ".join(
            f'<a href="{_output(href(layout.link(md_page, layout.docs_page(path), f"L{use_line}")))}">'
            f"<code>{_output(path)}</code></a> line {_output(use_line)}" for path, use_line in item["uses"]))
        if item["more_uses"]:
            out.append(f" and {item['more_uses']:,} more")
    for group in item.get("inherited") or ():   # a Python class's members from a base in its file
        out.append(f'; inherits from <a href="{_output(href(group["link"]))}">'
                   f'<code>{_output(group["base"])}</code></a>: '
                   + ", ".join(f'<a href="{_output(href(member["link"]))}"><code>{_output(member["name"])}</code></a>'
                               for member in group["members"]))
    return Markup("".join(out))


def _definitions(href: Callable[[str], str], md_page: str, items: list[dict]) -> Markup:
    """Code Structure's definitions, nested by depth (a method inside its class), each its entry
    line (``_definition``) and its docstring's body (``_doc_body``): a page lists hundreds, one
    Python call for them all rather than two template macros for each."""
    out: list[str] = []
    depth = -1
    for item in items:
        if item["depth"] > depth:
            out.append("<ul>\n<li>\n" * (item["depth"] - depth))
        else:
            out.append("</li>\n</ul>\n" * (depth - item["depth"]) + "</li>\n<li>\n")
        depth = item["depth"]
        out.append(_definition(href, md_page, item))
        out.append("\n")
        if item["doc"]:
            _doc_body(href, item["doc"], out)
            out.append("\n")
    out.append("</li>\n</ul>\n" * (depth + 1))
    return Markup("".join(out))


def _documentation(href: Callable[[str], str], doc: dict) -> Markup:
    """A file's own documentation, parsed (High-Level Overview), as HTML."""
    out: list[str] = []
    _doc_body(href, doc, out)
    return Markup("".join(out))


def _doc_body(href: Callable[[str], str], doc: dict, out: list[str]) -> None:
    """A definition's docstring (``kwdocs.pages.docstrings``' blocks) as HTML, onto ``out``."""
    if doc["summary"]:
        out.append(f"<p>{_spans(href, doc['summary'])}</p>\n")
    for block in doc["blocks"]:
        kind = block["t"]
        if kind == "code":
            out.append(_code_block(block["v"], block["lang"]) + "\n")
        elif kind == "fields":
            out.append(f"<p><em>{_output(block['title'])}:</em></p>\n<ul>\n")
            for row in block["rows"]:
                out.append("<li>")
                if row["name"]:
                    out.append(f"<code>{_output(row['name'])}</code>")
                    if row["type"]:
                        out.append(f" ({_spans(href, row['type'])})")
                    if row["spans"]:
                        out.append(": ")
                elif row["type"]:
                    out.append(_spans(href, row["type"]))
                    if row["spans"]:
                        out.append(": ")
                out.append(f"{_spans(href, row['spans'])}</li>\n")
            out.append("</ul>\n")
        elif kind == "heading":
            out.append(f"<h{block['level']}>{_spans(href, block['spans'])}</h{block['level']}>\n")
        elif kind == "list":
            tag = "ul" if "start" not in block else "ol"
            start = "" if block.get("start", 1) == 1 else f' start="{int(block["start"])}"'
            out.append(f"<{tag}{start}>\n" + "".join(f"<li>{_spans(href, item)}</li>\n" for item in block["items"])
                       + f"</{tag}>\n")
        elif kind == "table":
            aligns = [f' align="{align}"' if align else "" for align in block["align"]]
            out.append("<table>\n<thead>\n<tr>" + "".join(
                f"<th{align}>{_spans(href, cell)}</th>" for align, cell in zip(aligns, block["head"]))
                + "</tr>\n</thead>\n<tbody>\n" + "".join("<tr>" + "".join(
                    f"<td{align}>{_spans(href, cell)}</td>" for align, cell in zip(aligns, row)) + "</tr>\n"
                    for row in block["rows"]) + "</tbody>\n</table>\n")
        else:
            out.append(f"<p>{_spans(href, block['spans'])}</p>\n")


def _keyword_items(href: Callable[[str], str], keywords: list[dict]) -> Markup:
    """A keyword group's list items, each line ended (a page lists hundreds: not a template loop)."""
    return Markup("".join(
        f'<li><strong><code>{_output(keyword["name"])}</code></strong>'
        + (f' (in <code>{_output(keyword["local_to"])}</code>)' if keyword["local_to"] else "")
        + f': <a href="{_output(href(keyword["link"]))}">{_output(keyword["kind"])}, line {_output(keyword["line"])}'
        + "</a>" + (_condition(keyword["condition"]) if keyword.get("condition") else "") + "</li>\n"
        for keyword in keywords))


def _condition(condition: list[str]) -> str:
    """``, under #else of #if X``: the ``#if`` branch a C/C++ macro is defined in."""
    out = f", under <code>{_output(condition[0])}</code>"
    return out + (f" of <code>{_output(condition[1])}</code>" if len(condition) > 1 else "")


def _section_items(entries: list[dict]) -> Markup:
    """The section map's list items, each line ended."""
    return Markup("".join(f'<li><strong><code>{_output(entry["name"])}</code></strong>: '
                          f'{_output(", ".join(map(str, entry["sections"])))}</li>\n' for entry in entries))


def _prose(text: str) -> Markup:
    """A docstring's or README's prose as text, its double-backtick literals as code (as the
    Markdown pages' ``prose`` filter makes them)."""
    out, position = [], 0
    for literal in _DOUBLE_BACKTICKS.finditer(text):
        out.append(html_lib.escape(text[position:literal.start()], quote=False))
        out.append(f"<code>{html_lib.escape(literal.group(1), quote=False)}</code>")
        position = literal.end()
    out.append(html_lib.escape(text[position:], quote=False))
    return Markup("".join(out))


def _codes(values: list[str], prefix: str = "") -> Markup:
    return Markup(", ".join(f"<code>{html_lib.escape(prefix + value, quote=False)}</code>" for value in values))


@jinja2.pass_context
def _inline(context: Any, text: str) -> Markup:
    """One of the model's Markdown sentences as HTML: converted (raw HTML left out) and
    sanitized as the pages once were, links pointed at the site."""
    if "](" in text or "<" in text:
        return Markup(_inline_html(text, context.get("md_page", "")))
    return Markup(_plain_inline_html(text))


@functools.lru_cache(maxsize=4096)     # a folder's files share their role and pattern sentences
def _plain_inline_html(text: str) -> str:
    simple = _simple_inline_html(text)
    return simple if simple is not None else _inline_html(text, "")


# The Markdown most of the model's sentences are made of: text, `code`, **bold** (of text and code),
# backslash escapes and the entities Markdown escaping writes.  Anything else (``_`` or ``*``
# emphasis, links, raw HTML, a line that starts a block) is left to cmark and nh3.
_ODD = r"\x00-\x08\x0a-\x1f\x7f\xa0"     # characters cmark or nh3 replace: line ends, controls, no-break space
_SAFE = rf"[^\\*_&<\[\]~`{_ODD}]"
_CODE = r"(?<!`)`{}`(?!`)"     # one backtick each side, no space just inside them
_CODE_TEXT = rf"[^` {_ODD}](?:[^`{_ODD}]*[^` {_ODD}])?"
_BOLD_CODE = _CODE.format(_CODE_TEXT)
_SIMPLE_TOKEN = re.compile(
    _CODE.format(rf"(?P<code>{_CODE_TEXT})")
    + r"|\\(?P<escaped>[!-/:-@\[-`{-~])"
    + r"|&(?P<entity>lt|gt|amp|quot);"
    # flanking as CommonMark has it: opened after a space, "(" or the start, closed before a space,
    # punctuation that cannot continue a word, or the end
    + rf"|(?<![^ (])\*\*(?P<bold>(?=[A-Za-z0-9`])(?:{_BOLD_CODE}|{_SAFE})*?(?<=[A-Za-z0-9+`]))\*\*(?=[ .,;:)]|\Z)"
    + rf"|(?P<text>{_SAFE}+)")
_BOLD_PART = re.compile(_CODE.format(f"({_CODE_TEXT})") + rf"|({_SAFE}+)")
_BLOCK_START = re.compile(r"[\s#>\-+=]|\*[ \t]|\*\Z|\d{1,9}[.)]")
_ENTITIES = {"lt": "&lt;", "gt": "&gt;", "amp": "&amp;", "quot": '"'}


def _simple_inline_html(text: str) -> str | None:
    """What cmark and nh3 make of ``text`` when it is a sentence of ``_SIMPLE_TOKEN``s, else None
    (a fifth of their time; tests/test_html_format.py holds the two to the same output)."""
    if not text or _BLOCK_START.match(text) or text[-1] in " \t":
        return None
    out: list[str] = []
    position, end = 0, len(text)
    while position < end:
        token = _SIMPLE_TOKEN.match(text, position)
        if token is None:
            return None
        kind = token.lastgroup or ""     # each branch is one named group
        value = token[kind]
        if kind == "code":
            out.append(f"<code>{_text(value)}</code>")
        elif kind == "entity":
            out.append(_ENTITIES[value])
        elif kind == "bold":
            out.append("<strong>")
            for code, plain in _BOLD_PART.findall(value):
                out.append(f"<code>{_text(code)}</code>" if code else _text(plain))
            out.append("</strong>")
        else:
            out.append(_text(value))
        position = token.end()
    return "".join(out)


_FRAGMENT_OPTIONS: dict[str, Any] = dict(tags=FRAGMENT_TAGS, attributes={"a": {"href"}}, url_schemes=URL_SCHEMES,
                                         strip_comments=True, link_rel=None)


@functools.cache
def _plain_cleaner() -> nh3.Cleaner:
    """The sanitizer of a sentence with no link to point at the site: made once (``nh3.clean``
    converts its options on every call, most of a sentence's time)."""
    return nh3.Cleaner(**_FRAGMENT_OPTIONS, attribute_filter=_attribute_filter(""))


def _inline_html(text: str, md_page: str) -> str:
    converted = cmarkgfm.markdown_to_html_with_extensions(text, extensions=["strikethrough"]).strip()
    if converted.startswith("<p>") and converted.endswith("</p>") and converted.count("<p>") == 1:
        converted = converted[3:-4]
    if not md_page:
        return _plain_cleaner().clean(converted)
    return nh3.clean(converted, **_FRAGMENT_OPTIONS, attribute_filter=_attribute_filter(md_page))


def write_site_page(config: Config, md_page: str, markdown_text: str, subject: str | None = None) -> bool:
    """Render one page into the site; True if the file changed (the doit pipeline's per-page call)."""
    return output.write_if_changed(config.out, site_root(config) / html_page(md_page),
                                   render_site_page(config, md_page, markdown_text, subject))


def remove_site_page(config: Config, md_page: str) -> bool:
    return output.remove(config.out, site_root(config) / html_page(md_page))


def _static_source(config: Config, name: str) -> Path:
    for folder in ([config.templates] if config.templates else []) + [shipped_templates()]:
        path = folder / "html" / "static" / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"html/static/{name} is missing from the templates")


def write_static(config: Config) -> int:
    """The site's script and styles (Pygments' classes included); returns files written."""
    folder = site_root(config) / STATIC_FOLDER
    written = sum(output.write_if_changed(config.out, folder / name, _static_source(config, name).read_bytes())
                  for name in STATIC_FILES)
    return written + output.write_if_changed(config.out, folder / PYGMENTS_CSS, highlighting.stylesheet())


def _static_identity(config: Config, key: str) -> list:
    """What the site's static files are made from (``html_render_key``: the code, Pygments' version;
    the script and styles shipped or overridden) and the files as written, each by its path and
    identity (``search.file_identity``)."""
    sources = [os.fspath(_static_source(config, name)) for name in STATIC_FILES]
    written = [os.path.join(site_root(config), STATIC_FOLDER, name) for name in (*STATIC_FILES, PYGMENTS_CSS)]
    return [key, *([path, search.file_identity(path)] for path in sources + written)]


@per_config
def html_render_key(config: Config) -> str:
    """What every HTML page depends on besides its Markdown: this code, the layout, the libraries."""
    digest = hashlib.sha256(Path(__file__).read_bytes() + Path(highlighting.__file__).read_bytes())
    digest.update(repr(highlighting.declared()).encode())    # the languages' highlighting, declared elsewhere
    environment = _environment(config.templates)
    loader = environment.loader     # _environment always gives one
    for name in (PAGE_TEMPLATE, *FILE_TEMPLATES.values(), *INDEX_TEMPLATES.values(), DIAGRAM_TEMPLATE,
                 *(template for template, _ in ROW_MACROS.values())):
        digest.update(loader.get_source(environment, name)[0].encode())  # type: ignore[union-attr]
    for package in ("cmarkgfm", "pygments", "nh3", "tree-sitter", *highlighting.grammar_packages()):
        try:
            digest.update(f"{package}={metadata.version(package)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{package} absent".encode())
    digest.update(config.project_name.encode())
    return digest.hexdigest()


# ---------------------------------------------------------------- the whole site, incrementally

PARALLEL_PAGES = 64     # fewer pages than this are rendered in the build's own process


def _render_pages(config: Config, todo: list[tuple[str, str | None]]) -> int:
    """Render ``todo`` (Markdown page, subject) into the site; returns pages changed."""
    return sum(write_site_page(config, md_page, (config.out / md_page).read_text("utf-8", "replace"), subject)
               for md_page, subject in todo)


def _render_all(config: Config, todo: list[tuple[str, str | None]]) -> int:
    """Render ``todo``, in ``config.jobs`` forked processes when there are many: highlighting
    the sources is most of the site's time, and pages are independent of each other."""
    jobs = min(config.jobs, len(todo) // (PARALLEL_PAGES // 2))
    if jobs < 2 or len(todo) < PARALLEL_PAGES or "fork" not in multiprocessing.get_all_start_methods() \
            or output.dry_running():     # a forked process's would-be writes never reach the dry run's record
        return _render_pages(config, todo)
    # large pages first, then dealt round-robin: the shares take about as long as each other
    todo = sorted(todo, key=lambda item: -(output.stamp(config.out / item[0]) or (0, 0))[0])
    shares = [todo[index::jobs * 4] for index in range(jobs * 4)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return sum(pool.starmap(_render_pages, [(config, share) for share in shares]))


def build_site(config: Config) -> dict:
    """Bring ``<out>/site`` up to date with the Markdown pages; returns counts.

    Every page's HTML is made beside its Markdown, from the same models, by the step that
    makes it (``HtmlFormat``); here a folder or keyword page's HTML deleted by hand is made
    again from its Markdown, HTML of pages the build no longer writes is removed, and the
    folder tree is rewritten when its content changes (the search data is the ``search`` step's,
    ``search.write_search``).  What the state records of the whole tree is read from records
    that changed only (``search.write_tree``).
    """
    site = site_root(config)
    manifest_path = config.state / MANIFEST
    manifest = output.read_json(manifest_path, {}) or {}
    key = html_render_key(config)
    folders = search.folders_with_pages(config)
    keyword_meta = output.read_json(config.state / KEYWORDS_META, {})
    keyword_pages = keyword_meta.get("pages", []) if isinstance(keyword_meta, dict) else []
    # the pages no file's render step makes: folder pages (with their folder) and keyword pages
    index_pages: dict[str, str | None] = {page: folder for folder in folders
                                          for page in (layout.index_page(folder), layout.doc_page(folder))}
    index_pages.update((page, None) for page in keyword_pages if isinstance(page, str))
    recorded: dict[str, list] = {}
    todo: list[tuple[str, str | None]] = []
    removed = 0
    out, site_folder = os.fspath(config.out), os.fspath(site)
    for md_page in sorted(index_pages):
        stamp = output.stamp(os.path.join(out, md_page))
        if stamp is None:
            continue
        recorded[md_page] = list(stamp)
        if not os.path.isfile(os.path.join(site_folder, html_page(md_page))):
            todo.append((md_page, index_pages[md_page]))
    written = _render_all(config, todo)
    for md_page in sorted(set(manifest.get("pages", {})) - set(recorded)):
        if not md_page.endswith(FILE_PAGE_SUFFIXES):
            removed += remove_site_page(config, md_page)
    # the script and styles are written again only when they or what they are made from changed
    static = manifest.get("static")
    assets = 0
    if static is None or static != _static_identity(config, key):
        assets = write_static(config)
        static = _static_identity(config, key)
    data_written = search.write_site_data(config, folders, site / STATIC_FOLDER)
    output.write_json(config.out, manifest_path, {"key": key, "pages": recorded, "static": static})
    return {"html_written": written, "html_removed": removed, "assets_written": assets + data_written}

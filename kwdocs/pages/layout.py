"""Where each page lives in the output tree and what a page is about, and links between pages.

The output mirrors the source tree: ``a/b/c.py`` gets ``a/b/c.py_docs.md`` and
``a/b/c.py_kw.md``; every folder gets ``index.md`` and ``doc.md``; the root gets
``keywords.md`` (or per-letter pages).  Mirrored pages always end in
``_docs.md``/``_kw.md`` or are ``index.md``/``doc.md``, so no two can clash;
a source folder named like a page gets an output folder ending in ``~``.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from urllib.parse import quote

DOCS_SUFFIX = "_docs.md"
KW_SUFFIX = "_kw.md"


# A source folder whose name ends in ".md" (``index.md/``, ``x.py_docs.md/``) or is the state
# folder's would clash with a page or with kwdocs' state: its output folder gets one more "~".
# Names already ending in such a "~" get one more too, so no two folders share an output folder.
_CLASHING_FOLDER = re.compile(r"(?:.*\.md|\.kwdocs)~*")


def output_folder(folder: str) -> str:
    """Where a source folder's pages go: the same path, clashing names escaped (see above)."""
    if ".md" not in folder and ".kwdocs" not in folder:
        return folder
    return "/".join(part + "~" if _CLASHING_FOLDER.fullmatch(part) else part for part in folder.split("/"))


def _page(rel: str, suffix: str) -> str:
    if ".md" not in rel and ".kwdocs" not in rel:
        return rel + suffix
    folder, _, name = rel.rpartition("/")
    return f"{output_folder(folder)}/{name}{suffix}" if folder else name + suffix


def docs_page(rel: str) -> str:
    return _page(rel, DOCS_SUFFIX)


def kw_page(rel: str) -> str:
    return _page(rel, KW_SUFFIX)


def index_page(folder: str) -> str:
    return f"{output_folder(folder)}/index.md" if folder else "index.md"


def doc_page(folder: str) -> str:
    return f"{output_folder(folder)}/doc.md" if folder else "doc.md"


def keywords_page(letter: str | None = None) -> str:
    return f"keywords-{letter}.md" if letter else "keywords.md"


def source_folder(folder: str) -> str:
    """The source folder whose pages are in an output folder: ``output_folder`` undone.

    Exact because a name ending in "~" whose stem clashes would itself clash and
    have been given one more "~"."""
    if "~" not in folder:
        return folder
    return "/".join(part[:-1] if part.endswith("~") and _CLASHING_FOLDER.fullmatch(part[:-1]) else part
                    for part in folder.split("/"))


def page_subject(page: str) -> tuple[str, str]:
    """What a page of the output tree is about, from its path alone, with real source names:
    ("docs" or "kw", source file), ("index" or "doc", source folder), ("keywords", ""), or
    ("page", its output folder) for anything else."""
    folder, _, name = page.rpartition("/")
    for kind, suffix in (("docs", DOCS_SUFFIX), ("kw", KW_SUFFIX)):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            return kind, f"{source_folder(folder)}/{stem}" if folder else stem
    if name in ("index.md", "doc.md"):
        return name[:-3], source_folder(folder)
    if not folder and name.startswith("keywords") and name.endswith(".md"):
        return "keywords", ""
    return "page", folder


def link(from_page: str, to_path: str, anchor: str = "") -> str:
    """A relative, URL-quoted Markdown link target from one output page to another path.

    Both paths are relative to the output root and normalised, so the common
    folder prefix is all there is to strip (``posixpath.relpath`` would stat
    nothing but costs ten times as much, and pages hold thousands of links).
    """
    from_folder, from_slash, _ = from_page.rpartition("/")
    to_folder, to_slash, name = to_path.rpartition("/")
    target = _route(from_folder if from_slash else None, to_folder if to_slash else None) + name
    return quote_path(target) + (f"#{anchor}" if anchor else "")


@lru_cache(maxsize=1 << 12)   # a page links many pages of a few folders
def _route(from_folder: str | None, to_folder: str | None) -> str:
    """The relative way from one folder of the output tree to another (None: the root),
    ending in ``/``."""
    start = [] if from_folder is None else from_folder.split("/")
    parts = [] if to_folder is None else to_folder.split("/")
    common = 0
    limit = min(len(start), len(parts))
    while common < limit and start[common] == parts[common]:
        common += 1
    ups = len(start) - common
    return ("../" * ups if ups else "./") + "".join(part + "/" for part in parts[common:])


def sibling_link(page_name: str, anchor: str = "") -> str:
    """``link`` to a page in the linking page's own folder: a folder's pages to its files'
    pages, 7,000 of them in the largest folders."""
    return quote_path("./" + page_name) + (f"#{anchor}" if anchor else "")


def anchor_link(page_link: str, anchor: str) -> str:
    """A link to an anchor of a page already linked (``link``, ``sibling_link``): a file's
    keyword page, and the keyword index, link every definition of a documentation page."""
    return f"{page_link}#{anchor}"


_SAFE_PATH = re.compile(r"[A-Za-z0-9/._~-]*")


def quote_path(target: str) -> str:
    return target if _SAFE_PATH.fullmatch(target) else quote(target, safe="/.-_~")


_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def anchor(kind: str, name: str, line: int) -> str:
    """A stable anchor for one definition: unique per (name, line), readable, URL-safe.

    Not cached: a build names a million distinct definitions, and most names are plain
    identifiers, whose slug is the lowercased name (a cache missed nearly always).
    """
    if name.isascii() and name.isidentifier():    # only [A-Za-z0-9_]: nothing to replace or strip
        return f"l{line}-{kind}-{name[:60].lower()}"
    slug = _SLUG.sub("-", name).strip("-").lower()[:60] or "x"
    return f"l{line}-{kind}-{slug}"


@lru_cache(maxsize=1 << 16)   # the link, keywords and assemble steps name every unit's shard
def state_name(folder: str) -> str:
    """A flat, safe file name for a folder's state shard (folder names can be anything)."""
    return hashlib.sha1(folder.encode("utf-8", "surrogateescape")).hexdigest()[:20] + ".json"

"""Where each page lives in the output tree, and links between pages.

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


def link(from_page: str, to_path: str, anchor: str = "") -> str:
    """A relative, URL-quoted Markdown link target from one output page to another path.

    Both paths are relative to the output root and normalised, so the common
    folder prefix is all there is to strip (``posixpath.relpath`` would stat
    nothing but costs ten times as much, and pages hold thousands of links).
    """
    start = from_page.split("/")[:-1]
    parts = to_path.split("/")
    common = 0
    limit = min(len(start), len(parts) - 1)
    while common < limit and start[common] == parts[common]:
        common += 1
    ups = len(start) - common
    target = "/".join([".."] * ups + parts[common:]) if ups else "./" + "/".join(parts[common:])
    return quote_path(target) + (f"#{anchor}" if anchor else "")


def sibling_link(page_name: str, anchor: str = "") -> str:
    """``link`` to a page in the linking page's own folder: a folder's pages to its files'
    pages, 7,000 of them in the largest folders."""
    return quote_path("./" + page_name) + (f"#{anchor}" if anchor else "")


_SAFE_PATH = re.compile(r"[A-Za-z0-9/._~-]*")


def quote_path(target: str) -> str:
    return target if _SAFE_PATH.fullmatch(target) else quote(target, safe="/.-_~")


_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


@lru_cache(maxsize=1 << 14)   # a file's two pages and the keyword index name each definition's anchor
def anchor(kind: str, name: str, line: int) -> str:
    """A stable anchor for one definition: unique per (name, line), readable, URL-safe."""
    slug = _SLUG.sub("-", name).strip("-").lower()[:60] or "x"
    return f"l{line}-{kind}-{slug}"


@lru_cache(maxsize=1 << 16)   # the link, keywords and assemble steps name every unit's shard
def state_name(folder: str) -> str:
    """A flat, safe file name for a folder's state shard (folder names can be anything)."""
    return hashlib.sha1(folder.encode("utf-8", "surrogateescape")).hexdigest()[:20] + ".json"

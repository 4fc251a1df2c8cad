"""Where each page lives in the output tree and what a page is about, and links between pages.

The output mirrors the source tree: ``a/b/c.py`` gets ``a/b/c.py_docs.md`` and
``a/b/c.py_kw.md``; every folder gets ``index.md`` and ``doc.md``; the root gets
``keywords.md`` (or per-letter pages).  Mirrored pages always end in
``_docs.md``/``_kw.md`` or are ``index.md``/``doc.md``, so no two can clash;
a source folder named like a page gets an output folder ending in ``~``.

Any name the file system allows gets pages: a page name that would pass the file name
limit is cut and ends in a hash of the whole name (``<start>~<hash>_docs.md``), and so
does the page of a name that already ends like that, so a cut name is never another
file's page.  Pages list files under their real names; only the link targets are cut.
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


NAME_LIMIT = 255         # bytes in a file name on the usual file systems (ext4, XFS, APFS, NTFS in UTF-16)
PAGE_NAME_LIMIT = NAME_LIMIT - len(".html") + len(".md")   # the HTML site names each page ``.html``
_HASH_CHARS = 20
# A file name that ends like a cut page name: its page is cut too, or it could take a cut one's name.
_LOOKS_CUT = re.compile(f"~[0-9a-f]{{{_HASH_CHARS}}}\\Z")
# Names of up to this many characters fit whatever they hold (4 bytes a character at most).
_SURELY_SHORT = (PAGE_NAME_LIMIT - len(DOCS_SUFFIX)) // 4


def _size(name: str) -> int:
    """A name's length in bytes on disk (never fails, whatever the text holds)."""
    return len(name.encode("utf-8", "surrogatepass"))


def _cut(name: str, ending: str, limit: int) -> str:
    """``name`` cut to fit ``limit`` bytes with ``~<hash of the whole name>`` and ``ending`` after it,
    at a character boundary: stable, the same on every machine, unique short of a hash collision."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    room = limit - len(ending) - 1 - _HASH_CHARS
    kept = 0
    for index, char in enumerate(name):
        kept += _size(char)
        if kept > room:
            name = name[:index]
            break
    return f"{name}~{digest}{ending}"


def _escaped_folder(part: str) -> str:
    """A clashing folder name with its "~"; cut, ending ``~<hash>.md``, if that passes the limit
    (no other output folder ends so: kept names never end in ``.md``, escaped ones end in ``~``)."""
    escaped = part + "~"
    return escaped if len(escaped) <= _SURELY_SHORT or _size(escaped) <= NAME_LIMIT else _cut(part, ".md", NAME_LIMIT)


def output_folder(folder: str) -> str:
    """Where a source folder's pages go: the same path, clashing names escaped (see above)."""
    if ".md" not in folder and ".kwdocs" not in folder:
        return folder
    return "/".join(_escaped_folder(part) if _CLASHING_FOLDER.fullmatch(part) else part for part in folder.split("/"))


def page_name(name: str, suffix: str) -> str:
    """The name of a file's page in its folder's output folder: ``name`` + ``suffix``, cut (see
    above) when that would pass the limit or ``name`` ends like a cut name."""
    if len(name) <= _SURELY_SHORT and "~" not in name:
        return name + suffix
    whole = name + suffix
    if _size(whole) <= PAGE_NAME_LIMIT and _LOOKS_CUT.search(name) is None:
        return whole
    return _cut(name, suffix, PAGE_NAME_LIMIT)


def _page(rel: str, suffix: str) -> str:
    if ".md" not in rel and ".kwdocs" not in rel and "~" not in rel and len(rel) - rel.rfind("/") <= _SURELY_SHORT:
        return rel + suffix     # nearly every file: a short name in plain folders (links name pages by the thousand)
    folder, slash, name = rel.rpartition("/")
    if ".md" in folder or ".kwdocs" in folder:
        folder = output_folder(folder)
    return folder + slash + page_name(name, suffix)


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
    pages, thousands in the largest folders."""
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


def html_page(md_page: str) -> str:
    """The site path of a Markdown page: the same path with ``.html`` for ``.md``."""
    return md_page[:-3] + ".html" if md_page.endswith(".md") else md_page + ".html"


def lines_link(src_link: str, path: str, start: int, end: int, source_url: str = "", ref: str = "") -> str:
    """Where a definition's lines are: ``src_link#L10-L20`` (the page's relative link to the
    source, which GitHub and GitLab render at any commit; ``#L10`` for one line), or the
    configured ``source_url`` with ``{path}``, ``{start}``, ``{end}`` and ``{ref}`` filled in."""
    end = max(start, end)
    if source_url:
        return source_url.format(path=quote_path(path), start=start, end=end, ref=ref)
    return f"{src_link}#L{start}-L{end}" if end > start else f"{src_link}#L{start}"

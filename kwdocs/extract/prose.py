"""Markdown and reStructuredText: headings, code-like identifiers, first paragraph.

A line scanner, not a full parser: headings are all a keyword page needs from
the document's structure, and they are easy to find once fenced code (and
other blocks where ``#`` or ``===`` mean something else) is skipped.  It
follows CommonMark for ATX (``# Title``) and Setext (``Title`` over ``===``)
headings, and docutils for reST section titles (underline, or over- and
underline, of one punctuation character, at least as long as the title or
four characters long).  Heading names are the heading text as written, so
the name is found on its line; ``detail`` says its level.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from kwdocs.extract.identifiers import find_identifiers, identifier_symbols

MAX_OVERVIEW_CHARS = 600
# Markup is stripped from at most this much of the first paragraph, so a
# megabyte-long paragraph costs no more than a normal one.
_OVERVIEW_SOURCE_CHARS = 4 * MAX_OVERVIEW_CHARS
# A longer line is running text (or data), never a heading.
MAX_HEADING_CHARS = 300

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`:.*+#_])\1*[ \t]*$")
_RST_EXPLICIT = re.compile(r"^\.\.(?:\s|$)|^:[\w -]+:(?:\s|$)|^\|[^|]+\|")

# Inline markup removed from the overview paragraph.
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_HTML_TAG = re.compile(r"<(?:[A-Za-z/!][^>]*)>")
_CODE = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_RST_ROLE = re.compile(r":[\w:.+-]+:`([^`]+)`")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<[^>`]+>`__?")
_RST_REFERENCE = re.compile(r"`([^`]+)`__?|\b([A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?)__?(?!\w)")
_RST_SUBSTITUTION = re.compile(r"\|([^|\s][^|]*)\|")


def extract(text: str, path: str) -> dict:
    """Headings and identifiers of a Markdown or reST file, and its first paragraph."""
    lines = text.split("\n")
    markup = "rst" if PurePosixPath(path).suffix.lower() == ".rst" else "markdown"
    if markup == "rst":
        headings = rst_headings(lines)
        overview = _rst_overview(lines)
    else:
        kinds = _markdown_blocks(lines)
        headings = markdown_headings(lines, kinds)
        overview = _markdown_overview(lines, kinds)
    scan = find_identifiers(text, markup=markup)
    symbols = sorted(headings + identifier_symbols(scan),
                     key=lambda symbol: (symbol["line"], symbol["name"], symbol["kind"]))
    result: dict = {"symbols": symbols, "docstring": overview}
    if scan.note:
        result["problems"] = [{"message": scan.note}]
    return result


def _heading(name: str, line: int, level: int) -> dict:
    return {"name": name, "kind": "heading", "line": line, "detail": f"level {level}"}


# ---------------------------------------------------------------------------
# Markdown


def _markdown_blocks(lines: list[str]) -> list[str]:
    """Each line's block: ``text``, ``code`` (fenced or front matter), ``html`` (comment)."""
    kinds = ["text"] * len(lines)
    index = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in ("---", "...")), 0)
        for i in range(end + 1):
            kinds[i] = "code"
        index = end + 1
    while index < len(lines):
        line = lines[index]
        fence = _FENCE_OPEN.match(line)
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            marker = fence.group(1)
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
            kinds[index] = "code"
            index += 1
            while index < len(lines) and not closing.match(lines[index]):
                kinds[index] = "code"
                index += 1
            if index < len(lines):
                kinds[index] = "code"
        elif line.lstrip().startswith("<!--"):
            while index < len(lines) and "-->" not in lines[index]:
                kinds[index] = "html"
                index += 1
            if index < len(lines):
                kinds[index] = "html"
        index += 1
    return kinds


def markdown_headings(lines: list[str], kinds: list[str] | None = None) -> list[dict]:
    """ATX and Setext headings outside code blocks and comments."""
    kinds = kinds or _markdown_blocks(lines)
    headings: list[dict] = []
    for index, line in enumerate(lines):
        if kinds[index] != "text" or len(line) > MAX_HEADING_CHARS:
            continue
        atx = _ATX.match(line)
        if atx:
            name = (atx.group(2) or "").strip()
            if name and not set(name) <= {"#"}:
                headings.append(_heading(name, index + 1, len(atx.group(1))))
            continue
        underline = _SETEXT_UNDERLINE.match(line)
        if underline and index > 0 and _is_setext_title(lines, kinds, index - 1):
            level = 1 if underline.group(1)[0] == "=" else 2
            headings.append(_heading(lines[index - 1].strip(), index, level))
    return headings


def _is_setext_title(lines: list[str], kinds: list[str], index: int) -> bool:
    """A one-line paragraph (blank or a block boundary above) can be a Setext title."""
    line = lines[index]
    if kinds[index] != "text" or not line.strip() or line.startswith(("    ", "\t")) \
            or len(line) > MAX_HEADING_CHARS:
        return False
    if _ATX.match(line) or _LIST_ITEM.match(line) or line.lstrip().startswith((">", "<", "|")):
        return False
    if _SETEXT_UNDERLINE.match(line):
        return False
    return index == 0 or not lines[index - 1].strip() or kinds[index - 1] != "text"


def _markdown_overview(lines: list[str], kinds: list[str]) -> str:
    """The first run of prose lines (not a heading, code, list, table, badge ...)."""
    paragraph: list[str] = []
    for index, line in enumerate(lines):
        if kinds[index] == "text" and line.strip() and not _markdown_special(lines, kinds, index, bool(paragraph)):
            paragraph.append(line.strip()[:_OVERVIEW_SOURCE_CHARS])
            if sum(map(len, paragraph)) >= _OVERVIEW_SOURCE_CHARS:
                break
        elif paragraph:
            break
    return _plain_text(" ".join(paragraph), rst=False)


def _markdown_special(lines: list[str], kinds: list[str], index: int, in_paragraph: bool = False) -> bool:
    """Lines that are not running prose: headings, lists, tables, HTML, badges, code, and (but
    inside a paragraph: ``[RFC 9562](https://...)`` goes on a sentence) rows of links."""
    line = lines[index][:_OVERVIEW_SOURCE_CHARS]
    stripped = line.strip()
    if _ATX.match(line) or _SETEXT_UNDERLINE.match(line) or line.startswith(("    ", "\t")):
        return True
    if index + 1 < len(lines) and _SETEXT_UNDERLINE.match(lines[index + 1]) and kinds[index + 1] == "text":
        return True
    if _LIST_ITEM.match(line) or stripped.startswith(("|", "<", ">", "[!", "---", "***", "___")):
        return True
    if re.match(r"^\[[^\]]+\]:\s", stripped):  # link reference definition
        return True
    without_badges = _MD_IMAGE.sub("", _MD_LINK.sub(_badge_or_text, stripped))
    without_links = without_badges if in_paragraph else _MD_LINK.sub("", without_badges)
    return not without_links.strip(" \t|-·•")


def _badge_or_text(match: re.Match[str]) -> str:
    """An image inside a link (a badge) is dropped; a text link keeps its text."""
    return "" if match.group(1).startswith("!") else match.group(0)


# ---------------------------------------------------------------------------
# reStructuredText


def rst_headings(lines: list[str]) -> list[dict]:
    """Section titles; levels numbered in order of first use of each adornment style."""
    styles: dict[tuple[str, bool], int] = {}
    headings: list[dict] = []
    index = 0
    while index < len(lines) - 1:
        title = _rst_title_at(lines, index)
        if title is None:
            index += 1
            continue
        name_index, style, next_index = title
        level = styles.setdefault(style, len(styles) + 1)
        headings.append(_heading(lines[name_index].strip(), name_index + 1, level))
        index = next_index
    return headings


def _rst_title_at(lines: list[str], index: int) -> tuple[int, tuple[str, bool], int] | None:
    """(title line index, adornment style, index after the title) if one starts here."""
    line = lines[index]
    if len(line) > MAX_HEADING_CHARS:
        return None
    above_blank = index == 0 or not lines[index - 1].strip()
    overline = _RST_ADORNMENT.match(line)
    if overline and above_blank and index + 2 < len(lines):
        text = lines[index + 1].strip()
        underline = lines[index + 2].rstrip()
        if (text and len(text) <= MAX_HEADING_CHARS and not _RST_ADORNMENT.match(lines[index + 1])
                and underline == line.rstrip()
                and _long_enough(underline, text)):
            return index + 1, (overline.group(1), True), index + 3
    adornment = _RST_ADORNMENT.match(lines[index + 1]) if index + 1 < len(lines) else None
    if (adornment and above_blank and line.strip() and not line[0].isspace() and not overline
            and _long_enough(lines[index + 1].rstrip(), line.rstrip())
            and not _RST_EXPLICIT.match(line)):
        return index, (adornment.group(1), False), index + 2
    return None


def _long_enough(adornment: str, title: str) -> bool:
    """docutils: as long as the title, or at least four characters (with a warning)."""
    return len(adornment) >= len(title) or len(adornment) >= 4


def _rst_overview(lines: list[str]) -> str:
    """The first paragraph at the left margin that is not a title or markup block."""
    paragraph: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        title = _rst_title_at(lines, index) if stripped else None
        special = (not stripped or line[0].isspace()  # directive body, literal block, quote
                   or title is not None
                   or _RST_EXPLICIT.match(line) or _RST_ADORNMENT.match(line) or _LIST_ITEM.match(line)
                   or stripped.startswith(("+-", "+=", "|", ">>>")))
        if not special:
            paragraph.append(stripped[:_OVERVIEW_SOURCE_CHARS])
            if sum(map(len, paragraph)) >= _OVERVIEW_SOURCE_CHARS:
                break
        elif paragraph:
            break
        index = title[2] if title is not None else index + 1
    return _plain_text(" ".join(paragraph), rst=True)


# ---------------------------------------------------------------------------
# Overview text


def _plain_text(text: str, *, rst: bool) -> str:
    """Inline markup removed, whitespace collapsed, cut to MAX_OVERVIEW_CHARS."""
    if rst:
        text = _RST_ROLE.sub(lambda match: _role_text(match.group(1)), text)
        text = _RST_LINK.sub(r"\1", text)
        text = _CODE.sub(r"\2", text)
        text = _RST_REFERENCE.sub(lambda match: match.group(1) or match.group(2), text)
        text = _RST_SUBSTITUTION.sub(r"\1", text)
        if text.endswith("::"):
            text = text[:-1]  # "Example::" introduces a literal block and reads "Example:"
    else:
        text = _MD_IMAGE.sub("", text)
        text = _MD_LINK.sub(r"\1", text)
        text = _HTML_TAG.sub("", text)
        text = _CODE.sub(r"\2", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = " ".join(text.split())
    if len(text) <= MAX_OVERVIEW_CHARS:
        return text
    cut = text[:MAX_OVERVIEW_CHARS].rsplit(None, 1)[0]
    return cut.rstrip(" ,;:") + " …"


def _role_text(content: str) -> str:
    """``:func:`text <target>``` reads ``text``; ``:class:`~a.B``` reads ``B``."""
    content = content.strip()
    if content.endswith(">") and "<" in content:
        return content[: content.rfind("<")].strip()
    if content.startswith("~"):
        return content[1:].rpartition(".")[2]
    return content.lstrip("!")

"""Plain text and files of languages without an extractor: identifiers only.

The overview of such a file is its leading comment, when it opens with one:
that is where authors of scripts and configuration files say what the file is.
"""
from __future__ import annotations

import re

from kwdocs.extract import not_doc
from kwdocs.extract.identifiers import find_identifiers, identifier_symbols

MAX_COMMENT_CHARS = 600
MAX_COMMENT_LINES = 40

# Comment lines that speak to tools, not readers.
# ``type``, ``pragma``, ``fmt`` ... are tool words only before a colon (``# type: ignore``):
# ``# Type of the widget.`` is documentation.
_DIRECTIVE = re.compile(
    r"^(?:-\*-|\s*(?:vim?|ex):|\s*(?:mypy|type|pylint|flake8|ruff|fmt|isort|pyright|pragma|cython|distutils)[ \t]*:"
    r"|\s*(?:noqa|pyre-\w+|clang-format|NOLINT\w*|SPDX-License-Identifier)\b)"
    r"|coding[:=]",
    re.IGNORECASE,
)
_LINE_COMMENT = re.compile(r"^\s*(?:#|//)")


def extract(text: str, path: str) -> dict:
    """Identifiers and the leading comment of any text file."""
    scan = find_identifiers(text)
    result: dict = {"symbols": identifier_symbols(scan),
                    "docstring": leading_comment(text) or _leading_prose(text)}
    if scan.note:
        result["problems"] = [{"message": scan.note}]
    return result


_PROSE_LINE = re.compile(r"^[^\W\d_][^\n]*\s[^\n]*[\w.)!?:]$")   # words, not a path, pin or setting


def _leading_prose(text: str) -> str:
    """A plain text file's first paragraph, when it reads as sentences (notes, a README without
    suffix), not as data (a requirements list, a table of settings)."""
    paragraph = text.lstrip("\ufeff\n\r\t ").split("\n\n", 1)[0].strip()
    lines = paragraph.split("\n")[:MAX_COMMENT_LINES]
    if not lines or not all(_PROSE_LINE.match(line.strip()) and len(line.split()) >= 3 for line in lines):
        return ""
    if not_doc.is_licence(text[:4000]):
        return ""   # a licence's text says nothing about this project
    return _shorten("\n".join(lines))


def leading_comment(text: str) -> str:
    """The first comment block a reader would call a description, or "".

    Only comments at the very start count (after a shebang and blank lines);
    tool directives (coding, mypy, noqa ...) and licence headers are skipped,
    since they say nothing about this particular file.
    """
    for block in _leading_comment_blocks(text):
        kept = [line for line in block if not _DIRECTIVE.match(line)]
        body = "\n".join(kept).strip()
        if body and not not_doc.is_licence(body):
            return _shorten(body)
    return ""


def _leading_comment_blocks(text: str) -> list[list[str]]:
    """Comment blocks (split at blank lines) before the first line of code."""
    lines = text.split("\n", MAX_COMMENT_LINES * 4)[: MAX_COMMENT_LINES * 4]
    blocks: list[list[str]] = [[]]
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if index == 0 and stripped.startswith("#!"):
            pass  # a shebang says how to run the file, not what it is
        elif not stripped:
            if blocks[-1]:
                blocks.append([])
        elif stripped.startswith("/*"):
            inner, index = _block_comment(lines, index)
            blocks[-1].extend(inner)
            blocks.append([])
        elif _LINE_COMMENT.match(stripped):
            blocks[-1].append(re.sub(r"^(?:#+|/{2,}!?)\s?", "", stripped))
        else:
            break
        index += 1
    return [block for block in blocks if block]


def _block_comment(lines: list[str], start: int) -> tuple[list[str], int]:
    """Text of a ``/* ... */`` comment starting at ``lines[start]``, and its last index."""
    inner: list[str] = []
    for index in range(start, len(lines)):
        line = lines[index].strip()
        if index == start:
            line = re.sub(r"^/\*+!?", "", line)
        end = line.find("*/")
        if end >= 0:
            line = line[:end]
        line = re.sub(r"^\*+\s?", "", line.strip()).strip()
        inner.append(line)
        if end >= 0:
            return inner, index
    return inner, len(lines) - 1


def _shorten(body: str) -> str:
    """At most MAX_COMMENT_CHARS, cut at a word boundary, with an ellipsis when cut."""
    lines = body.split("\n")[:MAX_COMMENT_LINES]
    body = "\n".join(line.rstrip() for line in lines).strip()
    if len(body) <= MAX_COMMENT_CHARS:
        return body
    cut = body[:MAX_COMMENT_CHARS].rsplit(None, 1)[0]
    return cut.rstrip(" ,;:") + " …"


# ---------------------------------------------------------------- comments above definitions

_DOC_KINDS = frozenset({"namespace", "class", "function", "method", "macro", "type", "constant", "key",
                        "target"})
_TRAILING_DOC = re.compile(r"(?://[/!]<|#<)\s?(.*)$")
_ABOVE_SKIP = re.compile(r"^\s*(?:template\s*<.*|\[\[.*\]\]\s*|__global__|__device__|__host__)\s*$")
MAX_DOC_LINES = 80
MAX_TEMPLATE_LINES = 8


def attach_comment_docs(text: str, symbols: list[dict], hash_comments: bool) -> None:
    """Give each definition the comment block right above it (or a ``///<`` after it) as ``doc``.

    C-family files (``hash_comments`` False): ``///``, ``//!``, ``//`` line blocks and
    ``/** */``, ``/*! */``, ``/* */`` blocks; ``template <...>`` lines between the comment
    and the name are looked past.  ``#`` files: the ``#`` lines right above.  Licence
    headers and tool directives are not documentation."""
    if not symbols:
        return
    lines = text.split("\n")
    for symbol in symbols:
        if symbol.get("kind") not in _DOC_KINDS or "doc" in symbol:
            continue
        line = symbol.get("line", 0)
        if not 0 < line <= len(lines):
            continue
        if not hash_comments:
            trailing = _TRAILING_DOC.search(lines[line - 1])
            if trailing and trailing.group(1).strip():
                symbol["doc"] = trailing.group(1).strip()
                continue
        doc = _comment_above(lines, line - 1, hash_comments)
        if doc:
            symbol["doc"] = doc


def _above_template_head(lines: list[str], index: int) -> int:
    """The line above a ``template <...>`` head written over several lines before ``lines[index]``,
    else the line right above it."""
    probe = index - 1
    while probe >= 0 and index - probe <= MAX_TEMPLATE_LINES:
        stripped = lines[probe].strip()
        if not stripped or stripped.startswith(("//", "/*", "*", "#")) or stripped.endswith((";", "{", "}")):
            break
        if stripped.startswith("template"):
            return probe - 1
        probe -= 1
    return index - 1


def _comment_above(lines: list[str], index: int, hash_comments: bool) -> str:
    """The comment block ending right above ``lines[index]``, markers stripped, or ""."""
    above = index - 1
    if not hash_comments:
        above = _above_template_head(lines, index)
        while above >= 0 and _ABOVE_SKIP.match(lines[above]):
            above -= 1
    if above < 0:
        return ""
    last = lines[above].strip()
    block: list[str] = []
    if hash_comments:
        while above >= 0 and lines[above].lstrip().startswith("#") and len(block) < MAX_DOC_LINES:
            stripped = lines[above].strip()
            if stripped.startswith("#!") and above == 0:
                break
            block.append(re.sub(r"^#+\s?", "", stripped))
            above -= 1
    elif last.startswith("//"):
        while above >= 0 and lines[above].lstrip().startswith("//") and len(block) < MAX_DOC_LINES:
            block.append(re.sub(r"^/{2,}[!/]?\s?", "", lines[above].strip()))
            above -= 1
    elif last.endswith("*/"):
        end = above
        while above >= 0 and "/*" not in lines[above] and end - above < MAX_DOC_LINES:
            above -= 1
        if above < 0 or end - above >= MAX_DOC_LINES:
            return ""
        first = lines[above].strip()
        if not first.startswith("/*"):
            return ""   # a block comment that closes code on its line
        inner, _ = _block_comment(lines, above)
        block = list(reversed(inner))
    else:
        return ""
    block.reverse()
    kept = [line for line in block if not _DIRECTIVE.match(line)]
    body = "\n".join(kept).strip()
    if not body or not_doc.is_licence(body):
        return ""
    return body

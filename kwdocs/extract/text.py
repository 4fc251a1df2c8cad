"""Plain text and files of languages without an extractor: identifiers only.

The overview of such a file is its leading comment, when it opens with one:
that is where authors of scripts and configuration files say what the file is.
"""
from __future__ import annotations

import re

from kwdocs.extract.identifiers import find_identifiers, identifier_symbols

MAX_COMMENT_CHARS = 600
MAX_COMMENT_LINES = 40

# Comment lines that speak to tools, not readers.
_DIRECTIVE = re.compile(
    r"^(?:-\*-|\s*(?:vim?|ex):|\s*(?:mypy|noqa|type|pylint|flake8|ruff|fmt|isort|pyre|pyright"
    r"|pragma|clang-format|NOLINT|cython|distutils|@generated|SPDX-License-Identifier)\b)"
    r"|coding[:=]",
    re.IGNORECASE,
)
_LICENSE = re.compile(r"\b(?:copyright|licen[cs]ed under|all rights reserved|spdx-license)\b",
                      re.IGNORECASE)
_LINE_COMMENT = re.compile(r"^\s*(?:#|//)")


def extract(text: str, path: str) -> dict:
    """Identifiers and the leading comment of any text file."""
    scan = find_identifiers(text)
    result: dict = {"symbols": identifier_symbols(scan), "docstring": leading_comment(text)}
    if scan.note:
        result["problems"] = [{"message": scan.note}]
    return result


def leading_comment(text: str) -> str:
    """The first comment block a reader would call a description, or "".

    Only comments at the very start count (after a shebang and blank lines);
    tool directives (coding, mypy, noqa ...) and licence headers are skipped,
    since they say nothing about this particular file.
    """
    for block in _leading_comment_blocks(text):
        kept = [line for line in block if not _DIRECTIVE.match(line)]
        body = "\n".join(kept).strip()
        if body and not _LICENSE.search(body):
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

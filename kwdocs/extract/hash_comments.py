"""What every ``#``-comment language shares (shell, CMake, YAML, TOML).

The opening comment used as a page's overview, and the sort-and-deduplicate
step the extractor interface requires.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kwdocs.extract import not_doc

# An opening comment longer than this is cut, with "…" saying so: it is an
# overview, and the whole file is on the page anyway.
DOC_MAX_LINES = 12

# Lines that are not prose: editor/linter directives, copyright lines, reST directives.
_DIRECTIVE = re.compile(r"^(?:-\*-.*-\*-|vim?:|shellcheck\s|type:\s*ignore|noqa\b|fmt:"
                        r"|copyright\b|\(c\)\s|spdx-license-identifier:|\.\.\s+[\w-]+::)",
                        re.IGNORECASE)
_BANNER = re.compile(r"^[-=*~_+#/\[\]<>.:| ]*$")   # ----, ====, #####, rst underlines
_BANNER_PREFIX = re.compile(r"^[-=*~]{2,}\[?\s*")  # PyTorch's "---[ glog"


def leading_comment(text: str) -> str:
    """The opening ``#`` comment of a file, cleaned and summarised, as its overview.

    Skips a shebang, editor and linter directives and licence/copyright
    blocks, then keeps paragraphs of the first remaining block until there
    are at least two lines of text, so a one-line title is followed by its
    explanation.
    """
    blocks: list[list[str]] = []
    current: list[str] = []
    for number, raw in enumerate(text.split("\n", 400)[:400]):
        line = raw.strip()
        if number == 0 and line.startswith("#!"):
            continue
        if line.startswith("#") and not line.startswith("#["):
            current.append(line.lstrip("#").strip())
            continue
        if current:
            blocks.append(current)
            current = []
        if line and line != "---":   # code (or a YAML document marker) ends the header
            break
    if current:
        blocks.append(current)
    for block in blocks:
        summary = summarize(block)
        if summary and not not_doc.is_licence(summary):
            return summary
    return ""


def summarize(lines: list[str]) -> str:
    """Comment text without its markup, cut to an overview (see ``leading_comment``)."""
    return _summary(_clean(lines))


def _clean(block: list[str]) -> list[str]:
    kept: list[str] = []
    for line in block:
        if _DIRECTIVE.match(line) or line == ".rst:":
            continue
        if line and _BANNER.match(line):
            continue
        kept.append(_BANNER_PREFIX.sub("", line))
    return kept


def _summary(lines: list[str]) -> str:
    """Whole paragraphs until two lines of text are kept; cut long ones visibly."""
    kept: list[str] = []
    for line in lines:
        if not line:
            if sum(1 for k in kept if k) >= 2:
                break
            if kept and kept[-1]:
                kept.append("")
            continue
        kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    if len(kept) > DOC_MAX_LINES:
        kept = kept[:DOC_MAX_LINES] + ["…"]
    return "\n".join(kept)


def unique_sorted(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Symbols or imports sorted by (line, name) with exact repeats dropped."""
    unique: dict[tuple, dict[str, Any]] = {}
    for item in items:
        key = (item["line"], item.get("name", item.get("module", "")),
               item.get("kind", ""))
        unique.setdefault(key, item)
    return [unique[key] for key in sorted(unique)]

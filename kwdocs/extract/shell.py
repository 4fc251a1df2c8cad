"""Shell scripts: functions, sourced files and the opening comment.

A line scanner, not a shell parser: scripts are read by people to find what a
file defines (``name() {``, ``function name``) and which helper scripts it
pulls in (``source x`` / ``. x``); here-documents and comments are skipped so
that text inside them is not taken for code.

This module also holds the two helpers every ``#``-comment language here
shares (shell, CMake, YAML, TOML): the opening comment used as the page's
overview, and the sort-and-deduplicate step the extractor interface requires.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# An opening comment longer than this is cut, with "…" saying so: it is an
# overview, and the whole file is on the page anyway.
DOC_MAX_LINES = 12

_BOILERPLATE = re.compile(r"copyright|licen[cs]e|spdx-license", re.IGNORECASE)
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
        if summary and not _BOILERPLATE.search(summary):
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


_FUNCTION_KEYWORD = re.compile(r"^\s*function\s+([^\s(){};|&<>]+)\s*(?:\(\s*\))?\s*(?:[{(#]|$)")
_FUNCTION_POSIX = re.compile(r"^\s*([A-Za-z_][\w.:-]*)\s*\(\s*\)\s*(?:[{(#]|$)")
_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(?:(['\"])(.+?)\2|\\?([A-Za-z_]\w*))")
# ``"$(dirname "$0")/lib.sh"``, ``${BASH_SOURCE%/*}/lib.sh``: the script's own folder, which is
# where a relative path is looked up anyway.
_SCRIPT_FOLDER = re.compile(
    r'^"?(?:\$\(\s*dirname\s+"?\$(?:0|\{?BASH_SOURCE(?:\[0\])?\}?)"?\s*\)'
    r'|`dirname\s+"?\$0"?`|\$\{(?:0|BASH_SOURCE(?:\[0\])?)%/\*\})"?/')
_SOURCE = re.compile(r"(?:^\s*|[;&|({]\s*|\b(?:then|do|else|elif)\s+)(?:source|\.)[ \t]+(?=\S)")


def extract(text: str, path: str) -> dict[str, Any]:
    """Functions and sourced scripts of a shell script."""
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    heredoc_end: str | None = None
    strip_tabs = False
    for number, line in enumerate(text.split("\n"), start=1):
        if heredoc_end is not None:
            if (line.lstrip("\t") if strip_tabs else line) == heredoc_end:
                heredoc_end = None
            continue
        code = _without_comment(line)
        if not code.strip():
            continue
        match = _FUNCTION_KEYWORD.match(code) or _FUNCTION_POSIX.match(code)
        if match:
            symbols.append({"name": match.group(1), "kind": "function", "line": number})
        for source in _SOURCE.finditer(code):
            target = _in_own_folder(_shell_word(code, source.end()))
            if target:
                imports.append({"module": target, "line": number, "kind": "include"})
                symbols.append({"name": target, "kind": "include", "line": number})
        heredoc = _HEREDOC.search(code) if "((" not in code else None
        if heredoc:
            strip_tabs = heredoc.group(1) == "-"
            heredoc_end = heredoc.group(3) or heredoc.group(4)
    return {"symbols": unique_sorted(symbols), "imports": unique_sorted(imports),
            "docstring": leading_comment(text)}


def _without_comment(line: str) -> str:
    """The line up to an unquoted ``#`` that starts a word (``$#`` and ``a#b`` are not comments)."""
    if "#" not in line:
        return line
    quote = ""
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\" and quote != "'":
            index += 1
        elif quote:
            if char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t;&|("):
            return line[:index]
        index += 1
    return line


def _shell_word(line: str, start: int) -> str:
    """One shell word from ``start``: quotes and ``$(...)``/``${...}`` may hold spaces."""
    depth = 0
    quote = ""
    index = start
    while index < len(line):
        char = line[index]
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "\\":
            index += 1
        elif line.startswith(("$(", "${"), index):
            depth += 1
            index += 1
        elif char in ")}" and depth:
            depth -= 1
        elif depth == 0 and (char.isspace() or char in ";&|)"):
            break
        index += 1
    return line[start:index]


def _in_own_folder(word: str) -> str:
    """The sourced path, unquoted, relative to the script's folder when written as such."""
    relative = _SCRIPT_FOLDER.sub("", word, count=1)
    if relative != word and word.startswith('"') and relative.endswith('"'):
        return relative[:-1]
    return _unquote(relative)


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word

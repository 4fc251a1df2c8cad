"""Shell scripts: functions, sourced files and the opening comment.

A line scanner, not a shell parser: scripts are read by people to find what a
file defines (``name() {``, ``function name``) and which helper scripts it
pulls in (``source x`` / ``. x``); here-documents, quoted strings that run
over several lines (an ``awk`` program, a script written to another file) and
comments are skipped so that text inside them is not taken for code.
"""
from __future__ import annotations

import re
from typing import Any

from kwdocs.extract.hash_comments import leading_comment, unique_sorted

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
    quote = ""  # the quote a string still open at the end of the last line began with
    for number, line in enumerate(text.split("\n"), start=1):
        if heredoc_end is not None:
            if (line.lstrip("\t") if strip_tabs else line) == heredoc_end:
                heredoc_end = None
            continue
        code, quote = _code_of(line, quote)
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


def _code_of(line: str, quote: str) -> tuple[str, str]:
    """The line's code and the quote still open at its end, given the quote open at its start.

    Code is what follows a string continued from the last line (none while the line is all
    inside it), up to an unquoted ``#`` that starts a word (``$#`` and ``a#b`` are not
    comments).  ``quote`` is ``'``, ``"`` or ``$'`` (in which a backslash escapes); a
    backquoted command is code, its quotes tracked as any others."""
    if not quote and "#" not in line and "'" not in line and '"' not in line:
        return line, ""
    continued = bool(quote)
    start = 0
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\" and quote != "'":
            index += 1
        elif quote:
            if char == quote[-1]:
                quote = ""
                if continued:
                    start, continued = index + 1, False
        elif char == "$" and line.startswith("$'", index):
            quote = "$'"
            index += 1
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t;&|(`"):
            return line[start:index], ""
        index += 1
    return ("", quote) if continued else (line[start:], quote)


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

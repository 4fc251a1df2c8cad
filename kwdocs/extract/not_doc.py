"""Comment lines that are nobody's documentation: section dividers, tool pragmas, author lines.

A file's purpose and a definition's doc are the author's words about it; these lines are
notes to readers of the source or to tools, so the table below says what they look like
and the helpers drop them.  One table, used by the C/C++ and tree-sitter extractors and
by the page model, so every language agrees on what a divider or a pragma is.
"""

from __future__ import annotations

import re

# What each kind of line looks like, once its comment markers are gone.
NOT_DOC: dict[str, str] = {
    # a rule of dashes, equals, stars, slashes or hashes, alone or around a title:
    # ``---- Errors ----``, ``////  parsing  ////``, ``==========``
    "divider": r"[-=*/#~_+]{3,}(?:[ \t]+[^\n]*?[ \t]*[-=*/#~_+]{3,})?|[-=*/#~_+ ]*",
    # notes for linters, formatters and type checkers, not for readers
    "pragma": (r"(?:NOLINT\w*|noqa\b|eslint-(?:disable|enable)|jshint|tslint:|prettier-ignore"
               r"|@allow-[\w-]+|@lint-\w+|@ts-\w+|istanbul ignore|c8 ignore|pylint:|type:\s*ignore"
               r"|clang-format (?:on|off)|@(?:no)?flow\b|@generated\b|@jsx\b|#\s*pragma\b)"),
    # who wrote it, not what it is
    "author": r"(?:@author\b|authors?:|(?:written|developed|created|maintained) by\b|maintainers?:)",
}
_WHOLE = re.compile(NOT_DOC["divider"])
_START = re.compile(rf"(?:{NOT_DOC['pragma']}|{NOT_DOC['author']})", re.I)
LABEL_WORDS = 3     # a lone ``//`` line of this many words or fewer above a definition is a section label


def is_divider(line: str) -> bool:
    """Is ``line`` (markers gone) a rule or a title between rules?"""
    return _WHOLE.fullmatch(line.strip()) is not None


def is_note(line: str) -> bool:
    """Is ``line`` (markers gone) a pragma or an author line?"""
    return _START.match(line.strip()) is not None


def is_label(text: str) -> bool:
    """A one-line comment of a few words without a sentence's punctuation (``// parsing``,
    ``// Helpers``): it names the group of definitions below it, not the first of them."""
    words = text.strip().split()
    return "\n" not in text.strip() and 0 < len(words) <= LABEL_WORDS and not re.search(r"[.!?:;,()`]", text)


def own_words(text: str) -> str:
    """``text`` without its dividers, pragmas and author lines (a paragraph left empty goes too)."""
    kept = [line for line in text.split("\n") if not line.strip() or not (is_divider(line) or is_note(line))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")

"""Comment lines that are nobody's documentation: section dividers, tool pragmas, author lines,
licence notices.

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
    # (DefinitelyTyped's ``Definitions by:`` header too: ``// Original definitions by: Alan Agius <...>``)
    "author": (r"(?:@author\b|authors?:|(?:written|developed|created|maintained) by\b|maintainers?:"
               r"|contributors?:|(?:original\s+)?definitions\s+by:)"),
    # a licence notice, anywhere in a line: its copyright line, its grant, its disclaimer, its
    # address (``http://www.apache.org/licenses/LICENSE-2.0``); a licence's own capitalized
    # ``the License`` (a docstring's "the license file" is documentation)
    "licence": (r"(?:copyright\b|\(c\)\s*\d{4}|©|licen[cs]ed\s+(?:under|to)\b|all\s+rights\s+reserved|spdx-license"
                r"|permission\s+is\s+hereby\s+granted|https?://\S*licen[cs]e|(?-i:\b(?:the|this)\s+Licen[cs]e\b)"
                r"|(?-i:\bLICEN[CS]E\b)|(?:^|\n)\s*licen[cs]e\s*:|governed\s+by\s+an?\s+[\w-]+\s+licen[cs]e"
                r"|\bunder\s+(?:the|an?)\s+[^\n.]{0,60}?\blicen[cs]e\b"
                r"|without\s+warranties\s+or\s+conditions|gnu\s+(?:lesser\s+)?general\s+public)"),
}
# what every licence notice holds one of, lower case: a text without any is not searched further
LICENCE_HINTS = ("copyright", "(c)", "©", "licen", "rights reserved", "spdx", "permission is hereby",
                 "warranties", "general public")
_WHOLE = re.compile(NOT_DOC["divider"])
_START = re.compile(rf"(?:{NOT_DOC['pragma']}|{NOT_DOC['author']})", re.I)
_LICENCE = re.compile(NOT_DOC["licence"], re.I)
_SENTENCE_MARKS = re.compile(r"[.!?:;,()`]")
LABEL_WORDS = 3     # a lone ``//`` line of this many words or fewer above a definition is a section label


def is_divider(line: str) -> bool:
    """Is ``line`` (markers gone) a rule or a title between rules?"""
    return _WHOLE.fullmatch(line.strip()) is not None


def is_note(line: str) -> bool:
    """Is ``line`` (markers gone) a pragma or an author line?"""
    return _START.match(line.strip()) is not None


def is_licence(text: str) -> bool:
    """Does ``text`` (a line, a paragraph or a comment) hold a licence notice's words?"""
    low = text.lower()
    # most text holds no hint: the one regex, tried at every character, only where one is
    return any(hint in low for hint in LICENCE_HINTS) and _LICENCE.search(text) is not None


def is_label(text: str) -> bool:
    """A one-line comment of a few words without a sentence's punctuation (``// parsing``,
    ``// Helpers``): it names the group of definitions below it, not the first of them."""
    return 0 < len(text.split()) <= LABEL_WORDS and "\n" not in text.strip() and not _SENTENCE_MARKS.search(text)


def own_words(text: str) -> str:
    """``text`` without its dividers, pragmas and author lines (a paragraph left empty goes too)."""
    kept = [line for line in text.split("\n") if not line.strip() or not (is_divider(line) or is_note(line))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")

"""Source highlighting for the site: tree-sitter's highlight queries first, Pygments after.

A language with a grammar kwdocs already parses with is highlighted through the
highlight query its grammar wheel ships (``HIGHLIGHTS_QUERY``): one parse and one
query in C, then a walk over the captured ranges.  The capture names map onto a few
of Pygments' short class names (``k``, ``s``, ``c`` ...), so one stylesheet, light and
dark, colours both kinds of output.  A language without a grammar goes through
Pygments; a large file without one is shown as plain escaped text (Pygments' regular
expressions take seconds on it).

The result is a list of lines of escaped HTML; a token is an ``<i>`` with its class (the
shortest element the stylesheet can colour: tokens are most of a page), and a token of many
lines (a docstring) is one element across them.  Given ``links`` (identifier -> href), an
identifier outside strings and comments is wrapped in a link to its definition.
"""
from __future__ import annotations

import importlib
import io
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from html import escape
from typing import Any

from tree_sitter import Language, Query, QueryCursor

from kwdocs.extract.treesitter import MAX_PARSE_BYTES, parser

# fence info string -> (grammar module, its language function, modules whose queries apply, in order):
# C++ and CUDA grammars extend C's, and C++'s own query only adds to C's
GRAMMARS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("tree_sitter_python", "language", ("tree_sitter_python",)),
    "c": ("tree_sitter_c", "language", ("tree_sitter_c",)),
    "cpp": ("tree_sitter_cpp", "language", ("tree_sitter_c", "tree_sitter_cpp")),
    "cuda": ("tree_sitter_cuda", "language", ("tree_sitter_c", "tree_sitter_cpp")),
    "javascript": ("tree_sitter_javascript", "language", ("tree_sitter_javascript",)),
    "typescript": ("tree_sitter_typescript", "language_typescript", ("tree_sitter_javascript",)),
    "tsx": ("tree_sitter_typescript", "language_tsx", ("tree_sitter_javascript",)),
    "go": ("tree_sitter_go", "language", ("tree_sitter_go",)),
    "rust": ("tree_sitter_rust", "language", ("tree_sitter_rust",)),
    "java": ("tree_sitter_java", "language", ("tree_sitter_java",)),
    "lua": ("tree_sitter_lua", "language", ("tree_sitter_lua",)),
    "makefile": ("tree_sitter_make", "language", ("tree_sitter_make",)),
    "bash": ("tree_sitter_bash", "language", ("tree_sitter_bash",)),
}

# capture name (or its first part) -> Pygments' short class; names not here get no span
CLASSES = {
    "keyword": "k", "conditional": "k", "repeat": "k", "include": "k", "exception": "k", "preproc": "k",
    "string": "s", "comment": "c", "number": "m", "boolean": "kc", "constant.builtin": "kc",
    "function.builtin": "nb", "type.builtin": "nb", "variable.builtin": "nb",
    "function": "nf", "method": "nf", "type": "nc", "attribute": "nd",
}
# which class a range captured twice keeps: strings and comments hold everything inside them
_RANK = {name: rank for rank, name in enumerate(("c", "s", "k", "kc", "nb", "nd", "nf", "nc", "m"))}
# classes whose text is an identifier that ``links`` may name
_NAMES = frozenset({"nf", "nc", "nb"})

PYGMENTS_LIMIT = 100_000
"""A file without a grammar and larger than this (in characters) is shown unhighlighted."""


_CAPTURE = re.compile(r"@([\w.]+)")
_CALL = re.compile(r"\(\s*\(?\s*\w*(?:call|invocation)\w*\b")    # a pattern whose node is a call


def _class_of(capture: str) -> str | None:
    return CLASSES.get(capture) or CLASSES.get(capture.split(".", 1)[0])


@cache
def _query(info: str) -> tuple[str, str, Query] | None:
    """The grammar and compiled highlight query for a fence info string, None when there is none
    (no grammar for it, or its wheel is not installed)."""
    found = GRAMMARS.get(info)
    if found is None:
        return None
    module, function, query_modules = found
    try:
        language = Language(getattr(importlib.import_module(module), function)())
        source = "\n".join(importlib.import_module(name).HIGHLIGHTS_QUERY for name in query_modules)
        query = Query(language, source)
    except (ImportError, AttributeError, ValueError, SyntaxError, NameError):
        return None
    for index in range(query.capture_count):
        name = query.capture_name(index)
        if _class_of(name) is None:     # operators, punctuation, plain variables: fewer nodes, fewer spans
            query.disable_capture(name)
    for index in range(query.pattern_count):
        text = source[query.start_byte_for_pattern(index):query.end_byte_for_pattern(index)]
        names = _CAPTURE.findall(text)
        # patterns that would capture only those (less matching), and calls: as in Pygments' output,
        # a definition's name is coloured, not every use of it (a span for each doubled the pages)
        if names and (all(_class_of(name) is None for name in names) or (
                _CALL.match(text) and all(_class_of(name) in (None, "nf") for name in names))):
            query.disable_pattern(index)
    return module, function, query


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _plain(text: str, links: Mapping[str, str] | None) -> str:
    """Escaped text, its known identifiers linked."""
    if not links:
        return escape(text, quote=False)
    out, position = [], 0
    for match in _IDENTIFIER.finditer(text):
        href = links.get(match.group())
        if href is not None:
            out.append(escape(text[position:match.start()], quote=False))
            out.append(f'<a href="{escape(href)}">{match.group()}</a>')
            position = match.end()
    out.append(escape(text[position:], quote=False))
    return "".join(out)


def _span(cls: str, text: str, links: Mapping[str, str] | None) -> str:
    """One highlighted token; a docstring or comment of many lines is one element across them (one
    per line was a tenth of a page).  Class names are word characters: no quotes needed."""
    href = links.get(text) if links and cls in _NAMES else None
    inner = f'<a href="{escape(href)}">{text}</a>' if href is not None else escape(text, quote=False)
    return f'<i class={cls}>{inner}</i>'


def _tree_sitter(text: str, info: str, links: Mapping[str, str] | None) -> str | None:
    found = _query(info)
    if found is None:
        return None
    module, function, query = found
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_PARSE_BYTES:
        return None
    tree = parser(module, function).parse(data)
    spans: list[tuple[int, int, int, str]] = []
    for capture, nodes in QueryCursor(query).captures(tree.root_node).items():
        cls = _class_of(capture)
        if cls is None:
            continue
        rank = _RANK[cls]
        spans.extend((node.start_byte, -node.end_byte, rank, cls) for node in nodes)
    spans.sort()
    # byte offsets are character offsets in an ASCII text: slice it rather than decode pieces
    piece = text.__getitem__ if len(data) == len(text) else _decoder(data)
    out: list[str] = []
    position = 0
    for start, negative_end, _, cls in spans:
        if start < position or start == -negative_end:
            continue    # inside (or across) a range already shown, or empty
        if start > position:
            out.append(_plain(piece(slice(position, start)), links))
        position = -negative_end
        out.append(_span(cls, piece(slice(start, position)), links))
    out.append(_plain(piece(slice(position, None)), links))
    return "".join(out)


def _decoder(data: bytes) -> Callable[[slice], str]:
    return lambda part: data[part].decode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- Pygments, for the rest

def _pygments_tokens(text: str, info: str) -> Iterator[tuple[Any, str]]:
    """Pygments' tokens, with blanks, plain names and punctuation as plain text: neither style
    colours them apart from the text, and a span around each made the page twice as large."""
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.token import Name, Punctuation, Text, Whitespace
    from pygments.util import ClassNotFound

    try:
        # blank lines at the start kept: each line keeps its number
        lexer = get_lexer_by_name(info, stripnl=False) if info else TextLexer(stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    for kind, value in lexer.get_tokens(text):
        yield (Text if kind is Name or kind is Punctuation or kind in Whitespace else kind), value


@cache
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter
    return HtmlFormatter(nowrap=True)


def _pygments(text: str, info: str) -> str:
    out = io.StringIO()
    _formatter().format(_pygments_tokens(text, info), out)
    # quotes need no escaping in text, and Pygments' own attributes (class names) hold none
    return out.getvalue().replace("&quot;", '"').replace("&#39;", "'")


def highlight(text: str, info: str, links: Mapping[str, str] | None = None) -> list[str]:
    """``text`` as lines of escaped, highlighted HTML (no line ends; a span may go on over lines).

    ``links`` maps an identifier to the href of its definition; identifiers outside strings and
    comments that it names become links (only with a grammar: Pygments' output is left as it is)."""
    if not text:
        return []
    body = _tree_sitter(text, info, links)
    if body is None:
        body = _pygments(text, info) if len(text) <= PYGMENTS_LIMIT else escape(text, quote=False)
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def grammar_packages() -> list[str]:
    """The distributions whose grammars and queries shape the highlighting."""
    modules = {module for grammar, _, queries in GRAMMARS.values() for module in (grammar, *queries)}
    return sorted(module.replace("_", "-") for module in modules)


def stylesheet() -> str:
    """The classes' colours, light and dark (the page's theme toggle, else the system's)."""
    from pygments.formatters import HtmlFormatter
    light, dark = HtmlFormatter(style="friendly"), HtmlFormatter(style="monokai")
    return (light.get_style_defs(".codehilite")
            + "\n" + dark.get_style_defs(':root[data-theme="dark"] .codehilite')
            + "\n@media (prefers-color-scheme: dark) {\n"
            + dark.get_style_defs(':root:not([data-theme="light"]) .codehilite') + "\n}\n")

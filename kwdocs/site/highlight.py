"""Source highlighting for the site: tree-sitter's highlight queries first, Pygments after.

A language says how its source is coloured (``kwdocs.languages.Highlight``, looked up by
the fence info string).  One with a tree-sitter grammar is highlighted through the
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
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterator, Mapping
from functools import cache
from html import escape
from typing import Any

from tree_sitter import Language, Query, QueryCursor

from kwdocs.extract.treesitter import MAX_PARSE_BYTES, parser
from kwdocs.languages import Highlight, built_in_highlights, highlight_of, loaded

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
_NAMES = frozenset({b"nf", b"nc", b"nb"})

PYGMENTS_LIMIT = 100_000
"""A file without a grammar and larger than this (in characters) is shown unhighlighted."""


_CAPTURE = re.compile(r"@([\w.]+)")
_CALL = re.compile(r"\(\s*\(?\s*\w*(?:call|invocation)\w*\b")    # a pattern whose node is a call


_TESTED = ".kwdocs_match_"     # the end of a capture renamed by ``_text_matched``


def _class_of(capture: str) -> str | None:
    capture = capture.partition(_TESTED)[0]
    return CLASSES.get(capture) or CLASSES.get(capture.split(".", 1)[0])


# a pattern's one text predicate on its one capture: ``((namespace_identifier) @type (#match? @type "^[A-Z]"))``
_TEXT_MATCH = re.compile(r'\(#match\?\s+@([\w.]+)\s+"((?:[^"\\]|\\.)*)"\s*\)')
Capture = tuple[int, bytes, "re.Pattern[bytes] | None"]   # rank, class, and what its text must match


def _text_matched(pattern: str, index: int) -> tuple[str, str, re.Pattern[bytes]] | None:
    """A pattern whose one capture is tested by one ``#match?`` as (the pattern without the test,
    its capture renamed, the new name, the test's expression); None for any other.  tree-sitter's
    bindings run such a test through Python for every node the pattern finds (a fifth of the C++
    query's time, on ``namespace_identifier``); ``_tokens`` tests the captured text itself."""
    found = _TEXT_MATCH.search(pattern)
    names = set(_CAPTURE.findall(pattern))
    if found is None or names != {found.group(1)} or pattern.count("(#") != 1:
        return None
    try:
        expression = re.compile(re.sub(r"\\(.)", r"\1", found.group(2)).encode())
    except re.error:
        return None
    name = f"{found.group(1)}{_TESTED}{index}"
    rest = pattern[:found.start()] + pattern[found.end():]
    return re.sub(rf"@{re.escape(found.group(1))}(?![\w.])", "@" + name, rest), name, expression


@cache
def _query(info: str) -> tuple[str, str, Query, dict[str, Capture]] | None:
    """The grammar and compiled highlight query for a fence info string (``_compiled``); None when
    there is none (no language declares a grammar for it, or its wheel is not installed)."""
    found = highlight_of(info)
    return _compiled(found) if found is not None and found.grammar else None


def _compiled(highlight: Highlight) -> tuple[str, str, Query, dict[str, Capture]] | None:
    """A grammar and its compiled highlight query, with each capture kept as (rank, class, a
    test of its text or None); None when its wheel is not installed."""
    module, function = highlight.grammar, highlight.function
    try:
        language = Language(getattr(importlib.import_module(module), function)())
        source = "\n".join(importlib.import_module(name).HIGHLIGHTS_QUERY for name in highlight.query_modules)
        query = Query(language, source)
        patterns = [source[query.start_byte_for_pattern(index):query.end_byte_for_pattern(index)]
                    for index in range(query.pattern_count)]
        tests: dict[str, re.Pattern[bytes]] = {}
        for index, text in enumerate(patterns):
            names = _CAPTURE.findall(text)
            matched = _text_matched(text, index) if any(_class_of(name) for name in names) else None
            if matched is not None:
                patterns[index], name, tests[name] = matched
        if tests:
            source = "\n".join(patterns)
            query = Query(language, source)
    except (ImportError, AttributeError, ValueError, SyntaxError, NameError):
        return None
    classes: dict[str, Capture] = {}
    for index in range(query.capture_count):
        name = query.capture_name(index)
        cls = _class_of(name)
        if cls is None:     # operators, punctuation, plain variables: fewer nodes, fewer spans
            query.disable_capture(name)
        else:
            classes[name] = (_RANK[cls], cls.encode(), tests.get(name))
    for index, text in enumerate(patterns):
        names = _CAPTURE.findall(text)
        # patterns that would capture only those (less matching), and calls: as in Pygments' output,
        # a definition's name is coloured, not every use of it (a span for each doubled the pages)
        if names and (all(_class_of(name) is None for name in names) or (
                _CALL.match(text) and all(_class_of(name) in (None, "nf") for name in names))):
            query.disable_pattern(index)
    return module, function, query, classes


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# bytes that continue a name in UTF-8 source (from 0x80: parts of letters beyond ASCII), by value
_WORD = bytes(byte >= 0x80 or chr(byte).isalnum() or byte == 0x5F for byte in range(256))


_WORDS = re.compile(rb"[\w\x80-\xff]+")
MANY_NAMES = 64     # more names than this are found by one scan over every word, fewer by a search for each


def _places(data: bytes, names: Collection[bytes]) -> list[tuple[int, int]]:
    """Where ``names`` stand in ``data`` as whole names, in order: a ``bytes.find`` per name (a
    scan in C each, where a pattern of them all was slower), or one pass over the words for many."""
    if len(names) > MANY_NAMES:
        wanted = set(names)
        return [match.span() for match in _WORDS.finditer(data) if match.group() in wanted]
    places = []
    size = len(data)
    for name in names:
        at = data.find(name)
        while at >= 0:
            end = at + len(name)
            if not (at and _WORD[data[at - 1]]) and not (end < size and _WORD[data[end]]):
                places.append((at, end))
            at = data.find(name, end)
    places.sort()
    return places


_SPECIAL = re.compile(rb"[&<>]")


def _escape(data: bytes) -> bytes:
    return data.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")


def _tokens(query: Query, root: Any, classes: Mapping[str, Capture], source: bytes) -> list[tuple[int, int, bytes]]:
    """The highlighted ranges (start byte, end byte, class) of the tree ``root`` parsed from ``source``,
    in order and apart: of ranges that overlap, the first and longest is kept (a string or comment
    holds everything inside it)."""
    spans: list[tuple[int, int, int, bytes]] = []
    for capture, nodes in QueryCursor(query).captures(root).items():
        found = classes.get(capture)
        if found is not None:
            rank, cls, test = found
            if test is not None:
                nodes = [node for node in nodes if test.search(source[node.start_byte:node.end_byte])]
            spans += [(node.start_byte, -node.end_byte, rank, cls) for node in nodes]
    spans.sort()
    kept, position = [], 0
    for start, negative_end, _, cls in spans:
        if start >= position and start != -negative_end:     # not inside (or across) one kept, nor empty
            position = -negative_end
            kept.append((start, position, cls))
    return kept


def _hrefs(links: Mapping[str, str] | None) -> dict[bytes, bytes]:
    """Each linked name (as bytes) -> the opening tag of its link."""
    return {name.encode("utf-8", "surrogatepass"): f'<a href="{escape(href)}">'.encode()
            for name, href in (links or {}).items()}


class _Source:
    """A source's bytes put out escaped, piece by piece in order: only a piece holding one of
    ``&<>`` is escaped (found by one search per such piece, not a test per piece), and the
    places of linked names (``_places``) become links."""

    def __init__(self, data: bytes, links: Mapping[str, str] | None) -> None:
        self.data = data
        self.hrefs = _hrefs(links)
        names = [name.encode("utf-8", "surrogatepass") for name in links or () if _IDENTIFIER.fullmatch(name)]
        self.places = _places(data, names) if names else []
        self.next_place = 0         # the first place not yet passed
        self.next_special = self.special_from(0)

    def special_from(self, position: int) -> int:
        """Where the first ``&``, ``<`` or ``>`` from ``position`` is (the length when none is)."""
        found = _SPECIAL.search(self.data, position)
        return len(self.data) if found is None else found.start()

    def piece(self, start: int, end: int) -> bytes:
        """``data[start:end]`` escaped (pieces are asked for in order)."""
        piece = self.data[start:end]
        if self.next_special < end:
            self.next_special = self.special_from(end)
            return _escape(piece)
        return piece

    def text(self, out: list[bytes], position: int, stop: int) -> None:
        """``data[position:stop]`` onto ``out``, escaped and its linked names linked."""
        places, data = self.places, self.data
        index = self.next_place
        while index < len(places) and places[index][0] < stop:
            begin, end = places[index]
            index += 1
            if begin >= position and end <= stop:
                name = data[begin:end]
                out += (self.piece(position, begin), self.hrefs[name], name, b"</a>")
                position = end
        self.next_place = index
        out.append(self.piece(position, stop))


Tokens = list[tuple[int, int, bytes]]     # (start byte, end byte, class), as ``_tokens`` gives them


def grammar_info(module: str, function: str, prepared: bool) -> str | None:
    """The fence info whose highlighting parses text with the grammar ``module.function``, prepared
    or as it is (what an extractor parsed so may serve the highlighting); None if none does."""
    return next((info for info, found in built_in_highlights().items()
                 if (found.grammar, found.function) == (module, function) and bool(found.prepare) == prepared),
                None)


def source_tokens(text: str, data: bytes, info: str) -> Tokens | None:
    """The highlighted ranges of ``text`` (``data``: it encoded) as ``info``; None when the highlighter
    has no grammar for it or the text is too large to parse."""
    found = _query(info)
    if found is None or len(data) > MAX_PARSE_BYTES:
        return None
    module, function, _, _ = found
    prepare = getattr(highlight_of(info), "prepare", "")
    if not prepare:
        return tree_tokens(info, parser(module, function).parse(data).root_node, text, data, data)
    source = loaded(prepare)(text).encode("utf-8", "surrogatepass")
    return tree_tokens(info, parser(module, function).parse(source).root_node, text, data, source)


def tree_tokens(info: str, root: Any, text: str, data: bytes, source: bytes) -> Tokens | None:
    """``_tokens`` of the tree ``root`` parsed from ``source`` (``data``, or the prepared text), as
    ranges of ``data`` (``text`` encoded); None when ``source_tokens`` would give None."""
    found = _query(info)
    if found is None or len(data) > MAX_PARSE_BYTES:
        return None
    tokens = _tokens(found[2], root, found[3], source)
    return tokens if len(source) == len(data) else _moved(tokens, text, source)


_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def _moved(tokens: Tokens, text: str, source: bytes) -> Tokens:
    """Ranges of the prepared ``source`` as ranges of ``text``'s bytes: preparing blanks a character
    with one space, so after a character of several bytes blanked the text's offsets run ahead."""
    prepared = source.decode("utf-8", "surrogatepass")
    after: list[int] = [0]      # offsets in source just past a blanked character, and how far the text runs ahead there
    ahead: list[int] = [0]
    at = last = 0
    for match in _NOT_ASCII.finditer(text):
        index = match.start()
        if prepared[index] != text[index]:
            at += len(prepared[last:index].encode("utf-8", "surrogatepass"))
            last = index
            after.append(at + 1)
            ahead.append(ahead[-1] + len(match.group().encode("utf-8", "surrogatepass")) - 1)
    return [(start + ahead[bisect_right(after, start) - 1], end + ahead[bisect_right(after, end) - 1], cls)
            for start, end, cls in tokens]


TokenLookup = Callable[[str, bytes], Tokens | None]
_kept: TokenLookup | None = None


def keep_tokens(lookup: TokenLookup | None) -> TokenLookup | None:
    """Take tokens from ``lookup(info, data)`` (those extraction made of exactly ``data``, see
    ``kwdocs.site.tokens``) before parsing, until called again; returns the lookup it replaces."""
    global _kept
    previous, _kept = _kept, lookup
    return previous


def _tree_sitter(text: str, info: str, links: Mapping[str, str] | None) -> str | None:
    if _query(info) is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    tokens = _kept(info, data) if _kept is not None else None
    if tokens is None:
        tokens = source_tokens(text, data, info)
        if tokens is None:
            return None
    source = _Source(data, links)
    hrefs, places, piece = source.hrefs, source.places, source.piece
    out: list[bytes] = []
    position = 0
    # the common case inline (a piece with nothing to escape or link): this loop runs per token
    for start, end, cls in tokens:
        if start > position:
            if source.next_place < len(places) and places[source.next_place][0] < start:
                source.text(out, position, start)
            elif source.next_special < start:
                out.append(piece(position, start))
            else:
                out.append(data[position:start])
        href = hrefs.get(data[start:end]) if cls in _NAMES else None
        if href is not None:
            out += (b"<i class=", cls, b">", href, piece(start, end), b"</a></i>")
        elif source.next_special < end:
            out += (b"<i class=", cls, b">", piece(start, end), b"</i>")
        else:
            out += (b"<i class=", cls, b">", data[start:end], b"</i>")
        position = end
    source.text(out, position, len(data))
    return b"".join(out).decode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- Python, by a lexer of its own

# Python's highlighting is lexical: a parse with tree-sitter and its query cost seven times one
# pass of this pattern (Python's facts come from ``ast``, so no tree is left over to reuse).  It
# runs over the escaped text, where ``<>&`` stand as ``&lt;`` ``&gt;`` ``&amp;``, none of them a
# quote or ``#``.  The first byte is matched by one set, and each branch checks it by looking
# behind: a pattern that starts with a set lets the regex engine skip in C to the next byte that
# can start a token, where branches that each start with a group were tried at every byte (three
# times slower).
_NAME_PATTERN = rb"[A-Za-z_\x80-\xff][\w\x80-\xff]*"
# a string's rest after its opening quote: triple-quoted to its end (or the file's), else to the line's
_AFTER_QUOTE = {quote: (rb"QQ[^Q\\]*(?:(?:\\.|Q(?!QQ))[^Q\\]*)*(?:QQQ|\Z)|[^Q\\\r\n]*(?:\\(?:\r\n|.)[^Q\\\r\n]*)*Q?"
                        .replace(b"Q", quote)) for quote in (b"'", b'"')}
_PYTHON = re.compile(rb"""[#'"A-Za-z_\x80-\xff0-9.:@-]
(?:
  (?<=[A-Za-z_\x80-\xff])(?P<n>[\w\x80-\xff]*+)(?!['"])
| (?<=\#)(?P<c>[^\r\n]*)
| (?<=')(?P<s>SINGLE)
| (?<=")(?P<q>DOUBLE)
| (?<=[rRbBuUfFtT])(?P<p>[rRbBfFtT]?(?:'(?:SINGLE)|"(?:DOUBLE)))
| (?<=\d)(?P<m>[xXoObB]\w*|[\d_]*(?:\.[\d_]*)?(?:[eE][+-]?\d[\d_]*)?[jJlL]?)
| (?<=\.)(?P<f>\d[\d_]*(?:[eE][+-]?\d[\d_]*)?[jJ]?)
| (?<=:)(?P<colon>)(?=[ \t]*[A-Za-z_\x80-\xff])
| (?<=-)(?P<arrow>&gt;)
| (?<=@)(?P<d>)
)""".replace(b"SINGLE", _AFTER_QUOTE[b"'"]).replace(b"DOUBLE", _AFTER_QUOTE[b'"']), re.X | re.S)

_PYTHON_KEYWORDS = frozenset(
    b"as assert async await break class continue def del elif else except finally for from global if"
    b" import lambda nonlocal pass raise return try while with yield".split())
_PYTHON_BUILTINS = frozenset(
    b"abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex"
    b" delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr"
    b" hash help hex id input int isinstance issubclass iter len list locals map max memoryview min next"
    b" object oct open ord pow print property range repr reversed round set setattr slice sorted"
    b" staticmethod str sum super tuple type vars zip __import__".split())
# a name's class by the name alone; "nb" only when called, "soft" and "entity" after a look around it
_PYTHON_WORDS: dict[bytes, bytes] = {
    **{word: b"k" for word in _PYTHON_KEYWORDS}, **{word: b"kc" for word in (b"None", b"True", b"False")},
    **{word: b"nb" for word in _PYTHON_BUILTINS},
    b"match": b"soft", b"case": b"soft", b"lt": b"entity", b"gt": b"entity", b"amp": b"entity"}
_LEXICAL = {"c": b"c", "s": b"s", "q": b"s", "p": b"s", "m": b"m", "f": b"m"}
_CALLED = re.compile(rb"[ \t]*\(")
_DECORATOR = re.compile(rb"@[ \t]*NAME(?:[ \t]*\.[ \t]*NAME)*".replace(b"NAME", _NAME_PATTERN))
# ``match x:`` / ``case [a, b]:`` at a statement's start (or a pattern going on over lines), not
# ``match = ...`` or ``match(x)``
_SOFT_KEYWORD = re.compile(rb"[ \t]+[^\s=.,:;)\]}](?:[^\r\n]*:|[^\r\n]*[(\[{\\][ \t]*(?:\r?\n|\Z))")
_STATEMENT_START = re.compile(rb"[ \t]*")
# a parameter's name before its annotation's ``:`` (in a ``def`` header), and ``self.size:`` at a
# statement's start (an annotated assignment)
_PARAMETER = re.compile(rb"[(,][ \t\r\n]*(?:\*{1,2}[ \t]*)?NAME[ \t]*\Z".replace(b"NAME", _NAME_PATTERN))
_ANNOTATED = re.compile(rb"[ \t]*(?:NAME[ \t]*\.[ \t]*)*(NAME)[ \t]*".replace(b"NAME", _NAME_PATTERN))
_BRACKETS = re.compile(rb"[()\[\]{}:]")
_ANNOTATION_MARKS = re.compile(rb"[()\[\]{},=:\r\n#]")
# a type named whole in an annotation: ``int``, both names of ``dict[str, Any]``, not ``torch.Tensor``
_TYPE_NAME = re.compile(rb"(?:\A|[\[,|])[ \t\r\n]*(NAME)(?=[ \t\r\n]*(?:[,\]|]|\Z))".replace(b"NAME", _NAME_PATTERN))
_SINGLE_TYPE = re.compile(rb"[ \t]*(NAME)[ \t]*(?:[,)=:\r\n#]|\Z)".replace(b"NAME", _NAME_PATTERN))
_LOOK = 4096        # how far a ``def`` header or an annotation is looked for


def _header_end(text: bytes, start: int) -> int:
    """Where the ``def`` header from ``start`` ends: its ``:`` outside brackets."""
    depth = 0
    for found in _BRACKETS.finditer(text, start, start + _LOOK):
        mark = found.group()
        if mark == b":":
            if depth <= 0:
                return found.start()
        elif mark in b"([{":
            depth += 1
        else:
            depth -= 1
    return start


def _annotation_end(text: bytes, start: int) -> int:
    """Where the annotation from ``start`` ends: at a ``,`` ``)`` ``=`` ``:`` or line end outside its brackets."""
    depth = 0
    for found in _ANNOTATION_MARKS.finditer(text, start, start + _LOOK):
        mark = found.group()
        if mark in b"([{":
            depth += 1
        elif mark in b")]}":
            depth -= 1
            if depth < 0:
                return found.start()
        elif depth == 0 or mark == b"#":
            return found.start()
    return min(len(text), start + _LOOK)


def _annotation(text: bytes, colon: int, header: tuple[int, int]) -> bool:
    """Whether the ``:`` at ``colon`` opens an annotation: of a parameter in the ``def`` header
    spanning ``header``, or of a name at a statement's start (``size: int = 0``, not a dict's
    ``key: value,`` on a line of its own, nor ``else:``)."""
    if header[0] < colon < header[1]:
        return _PARAMETER.search(text, max(0, colon - 200), colon) is not None
    line = text.rfind(b"\n", 0, colon) + 1
    named = _ANNOTATED.fullmatch(text, line, colon)
    if named is None or named.group(1) in _PYTHON_KEYWORDS:
        return False
    end = _annotation_end(text, colon + 1)
    return text[end:end + 1] in (b"=", b"\n", b"\r", b"#", b"")


def _types(text: bytes, start: int) -> set[int]:
    """Where the types named whole in the annotation from ``start`` begin."""
    single = _SINGLE_TYPE.match(text, start)     # half of them: ``x: int``, ``-> Tensor:``
    if single is not None:
        return {single.start(1)}
    end = _annotation_end(text, start)
    segment = text[start:end]
    return {start + found.start(1) for found in _TYPE_NAME.finditer(segment)}


def _at_statement_start(text: bytes, start: int) -> bool:
    line = text.rfind(b"\n", 0, start) + 1
    return _STATEMENT_START.fullmatch(text, line, start) is not None


def python_lexer(data: bytes, hrefs: Mapping[bytes, bytes]) -> bytes:
    """Python source (its ``Highlight.lexer``) as highlighted, escaped HTML by one regular expression:
    the classes tree-sitter's query gave (keywords, strings, comments, numbers, constants, the name a
    ``def`` defines, builtins called, types named whole in annotations), and a class's name and
    decorators as Pygments colours them; names in ``hrefs`` (``_hrefs``) linked, outside strings and comments."""
    text = _escape(data)
    out: list[bytes] = []
    position = skip = 0
    defines = None              # the class of the next name, after ``def`` or ``class``
    header = (0, 0)             # the last ``def`` header's span
    types: set[int] = set()     # where the type names of annotations begin
    words, get_href = _PYTHON_WORDS, hrefs.get
    for match in _PYTHON.finditer(text):
        start = match.start()
        if start < skip:        # inside a decorator already put out
            continue
        kind = match.lastgroup
        if kind == "n":
            end = match.end()
            word = text[start:end]
            cls = words.get(word)
            if cls is None and defines is None and start not in types:     # most names: plain text, or a link
                href = get_href(word)
                if href is None:
                    continue
            else:
                if cls == b"soft":
                    cls = b"k" if _SOFT_KEYWORD.match(text, end) and _at_statement_start(text, start) else None
                elif cls == b"entity":
                    if start and text[start - 1] == 0x26:      # the ``lt`` of ``&lt;``
                        continue
                    cls = None
                if start in types:
                    href = None
                    if cls != b"k" and cls != b"kc":
                        cls, href = b"nc", get_href(word)
                elif cls is None or cls == b"nb":
                    href = get_href(word)
                    if defines is not None:
                        cls, defines = defines, None
                    elif cls is None or not _CALLED.match(text, end) or (start and text[start - 1] == 0x2E):
                        if href is None:
                            continue
                        cls = None
                else:
                    href = None
                    if word == b"def":
                        defines = b"nf"
                        header = (end, _header_end(text, end))
                    elif word == b"class":
                        defines = b"nc"
        elif kind == "colon" or kind == "arrow":
            if kind == "arrow" or _annotation(text, start, header):
                types = _types(text, match.end())
            continue
        elif kind == "d":
            decorator = _DECORATOR.match(text, start)
            if decorator is None or not _at_statement_start(text, start):
                continue
            skip = decorator.end()
            out += (text[position:start], b"<i class=nd>", _linked(decorator.group(), hrefs), b"</i>")
            position = skip
            continue
        else:       # comments, strings, numbers
            end = match.end()
            href = None
            cls = _LEXICAL[kind or ""]
            word = text[start:end]
        out.append(text[position:start])
        if cls is None:
            out += (href or b"", word, b"</a>")
        elif href is None:
            out += (b"<i class=", cls, b">", word, b"</i>")
        else:
            out += (b"<i class=", cls, b">", href, word, b"</a></i>")
        position = end
    out.append(text[position:])
    return b"".join(out)


_NAME = re.compile(_NAME_PATTERN)


def _linked(text: bytes, hrefs: Mapping[bytes, bytes]) -> bytes:
    """``text`` with the names ``hrefs`` knows linked."""
    if not hrefs:
        return text
    return _NAME.sub(lambda found: hrefs[found.group()] + found.group() + b"</a>"
                     if found.group() in hrefs else found.group(), text)


@cache
def _lexer(info: str) -> Callable[[bytes, Mapping[bytes, bytes]], bytes] | None:
    """The lexer of its own a fence's language declares, taken before any grammar: (source bytes,
    ``_hrefs``) -> HTML."""
    found = highlight_of(info)
    return loaded(found.lexer) if found is not None and found.lexer else None


# ---------------------------------------------------------------- Pygments, for the rest

def _pygments_tokens(text: str, info: str) -> Iterator[tuple[Any, str]]:
    """Pygments' tokens, with blanks, plain names and punctuation as plain text: neither style
    colours them apart from the text, and a span around each made the page twice as large."""
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.token import Name, Punctuation, Text, Whitespace
    from pygments.util import ClassNotFound

    try:
        # blank lines at the start kept: each line keeps its number
        found = highlight_of(info) if info else None
        name = (found.pygments if found is not None else "") or info
        lexer = get_lexer_by_name(name, stripnl=False) if name else TextLexer(stripnl=False)
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


def highlighted(text: str, info: str, links: Mapping[str, str] | None = None) -> str:
    """``text`` as escaped, highlighted HTML: ``highlight``'s lines joined, made without splitting."""
    if not text:
        return ""
    lexer = _lexer(info)
    body = (lexer(text.encode("utf-8", "surrogatepass"), _hrefs(links)).decode("utf-8", "surrogatepass")
            if lexer is not None else _tree_sitter(text, info, links))
    if body is None:
        body = _pygments(text, info) if len(text) <= PYGMENTS_LIMIT else escape(text, quote=False)
    return body[:-1] if body.endswith("\n") else body


def highlight(text: str, info: str, links: Mapping[str, str] | None = None) -> list[str]:
    """``text`` as lines of escaped, highlighted HTML (no line ends; a span may go on over lines).

    ``links`` maps an identifier to the href of its definition; identifiers outside strings and
    comments that it names become links (only with a grammar: Pygments' output is left as it is)."""
    return highlighted(text, info, links).split("\n") if text else []


def declared() -> list[tuple[str, Highlight]]:
    """The built-in languages' highlighting, by fence (an installed language's version is in the
    facts' fingerprint: its files' pages are made again when it changes)."""
    return sorted(built_in_highlights().items())


def grammar_packages() -> list[str]:
    """The distributions whose grammars and queries shape the highlighting."""
    modules = {module for _, found in declared() for module in (found.grammar, *found.query_modules) if module}
    return sorted(module.replace("_", "-") for module in modules)


def stylesheet() -> str:
    """The classes' colours, light and dark (the page's theme toggle, else the system's)."""
    from pygments.formatters import HtmlFormatter
    light, dark = HtmlFormatter(style="friendly"), HtmlFormatter(style="monokai")
    return (light.get_style_defs(".codehilite")
            + "\n" + dark.get_style_defs(':root[data-theme="dark"] .codehilite')
            + "\n@media (prefers-color-scheme: dark) {\n"
            + dark.get_style_defs(':root:not([data-theme="light"]) .codehilite') + "\n}\n")

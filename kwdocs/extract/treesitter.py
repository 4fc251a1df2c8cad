"""What the tree-sitter extractors of JS/TS, Go, Rust, Java, Lua and Make share.

Each language module walks its own grammar's tree; this module builds a
parser once per grammar and process (the grammar wheel is imported only then,
so start-up never pays for a language the tree does not hold), and turns nodes
into the symbols of a facts record: name, kind, line, signature (the
declaration up to its body) and the doc comment written just above it.
"""
from __future__ import annotations

import importlib
import re
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

from tree_sitter import Language, Node, Parser, Tree

from kwdocs.extract import not_doc, text as plain
from kwdocs.extract.shell import unique_sorted

MAX_PARSE_BYTES = 4_000_000
"""Beyond this a file is not parsed: its page lists identifiers only, and says so."""
MAX_SIGNATURE = 240
MAX_DOC = 12000


@cache
def parser(module: str, function: str = "language") -> Parser:
    """A parser for the grammar ``module.function()``, built once per process."""
    grammar = importlib.import_module(module)
    return Parser(Language(getattr(grammar, function)()))


def parse(text: str, module: str, function: str = "language") -> tuple[Tree, bytes] | None:
    """The tree and the bytes it indexes, or None when the file is too large to parse."""
    source = text.encode("utf-8", "surrogatepass")
    if len(source) > MAX_PARSE_BYTES:
        return None
    tree = parser(module, function).parse(source)
    parsed(text, tree.root_node, source, module, function, False)
    return tree, source


TreeHook = Callable[[str, Node, bytes, str, str, bool], None]
"""What ``observing`` calls with each tree an extractor parsed: the text, the root, the bytes
parsed (the text encoded, or prepared with macros blanked: then ``prepared`` is True), and the
grammar (``module.function``)."""

# The hook of the ``observing`` block this thread is in.  A context variable, not an argument:
# extractors are called through ``Language.extract(text, path)``, which a language from another
# package implements too; the variable is set for the block only, and in its own thread only.
_observer: ContextVar[TreeHook | None] = ContextVar("kwdocs_tree_observer", default=None)


@contextmanager
def observing(hook: TreeHook) -> Iterator[None]:
    """Have ``hook`` called with every tree an extractor parses inside, in this thread (an HTML
    build's extraction records highlight tokens from them: ``kwdocs.site.tokens``)."""
    token = _observer.set(hook)
    try:
        yield
    finally:
        _observer.reset(token)


def parsed(text: str, root: Node, source: bytes, module: str, function: str, prepared: bool) -> None:
    """Tell the ``observing`` hook of a tree an extractor parsed (``parse`` does; an extractor
    parsing bytes of its own calls this itself)."""
    hook = _observer.get()
    if hook is not None:
        hook(text, root, source, module, function, prepared)


Walk = Callable[[bytes, Node, list[dict[str, Any]], list[dict[str, Any]]], None]
"""An extractor's walk of its tree: the bytes parsed and the root; it appends to the symbols and imports."""


def extract_tree(text: str, grammar: str, walk: Walk,
                 docstring: Callable[[bytes, Node], str] | None = None) -> dict[str, Any]:
    """What a tree-sitter extractor returns: ``text`` parsed with ``grammar`` (too large to parse:
    ``too_large``), ``walk`` over it filling the symbols and imports, and ``finish`` with the
    file's doc comment (``docstring(source, root)``, ``leading_doc`` by default)."""
    parsed = parse(text, grammar)
    if parsed is None:
        return too_large(text)
    tree, source = parsed
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    walk(source, tree.root_node, symbols, imports)
    return finish(symbols, imports, (docstring or leading_doc)(source, tree.root_node), tree)


def too_large(text: str) -> dict[str, Any]:
    """The result for a file not parsed: its identifiers, and a line saying why."""
    found = plain.extract(text, "")
    found["problems"] = [{"message": f"larger than {MAX_PARSE_BYTES:,} bytes: not parsed, "
                                     "identifiers only"}]
    found["parsed"] = False
    return found


def text_of(source: bytes, node: Node | None) -> str:
    if node is None:
        return ""
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def line_of(node: Node) -> int:
    return node.start_point[0] + 1


_SPACE = re.compile(r"\s+")


def signature(source: bytes, node: Node, body: Node | None) -> str:
    """The declaration as written up to its body (or all of it), on one line."""
    end = body.start_byte if body is not None else node.end_byte
    text = _SPACE.sub(" ", source[node.start_byte:end].decode("utf-8", "replace")).strip()
    text = text.rstrip(" {=:;").rstrip()
    if len(text) > MAX_SIGNATURE:
        text = text[:MAX_SIGNATURE].rsplit(" ", 1)[0] + " …"
    return text


# one blank after the marker is the comment's; a tab is the text's (a Go doc comment's code block)
_COMMENT_MARK = re.compile(r"^\s*(?:/\*+!?|\*+/|\*(?!/)|///?!?|--+\[*=*\[*|#+|;+) ?")
_BLOCK_MARK = re.compile(r"^\s*(?:\*+/|\*(?!/)) ?")     # a ``/* */`` line's own ``*``, or its end
_COMMENT_END = re.compile(r"\s*(?:\*+/|\]=*\])\s*$")
_DIRECTIVE = re.compile(r"^(?:go:|nolint|eslint|@ts-|prettier-|jshint|istanbul |tslint|shellcheck |@(?:no)?flow\b)")


def doc_comment(source: bytes, node: Node, labels: bool = True) -> str:
    """The comment lines directly above ``node`` (no blank line between), without markers; a
    short ``//`` label is a section's unless ``labels`` is False (Go, whose ``//`` comment
    above a name is its doc, as go doc reads it)."""
    lines: list[str] = []
    expected = node.start_point[0]
    sibling = node.prev_sibling
    while sibling is not None and "comment" in sibling.type and sibling.end_point[0] >= expected - 1:
        if source.startswith((b"//!", b"/*!", b"#!"), sibling.start_byte):
            break  # a file's or module's own comment, not this declaration's
        if _after_code(source, sibling):
            break  # ``X = 1 // the x`` above: the line's own comment, not the next one's doc
        # a Rust line comment's node holds its line's end: no blank line between its lines
        lines[:0] = text_of(source, sibling).rstrip("\r\n").split("\n")
        expected = sibling.start_point[0]
        sibling = sibling.prev_sibling
    doc = clean_comment(lines)
    if lines and all(line.lstrip().startswith("//") and not line.lstrip().startswith(("///", "//!"))
                     for line in lines) and labels and not_doc.is_label(doc):
        return ""   # ``// parsing`` names the section below, not its first definition
    return "" if not_doc.is_licence(doc) else doc


def _after_code(source: bytes, comment: Node) -> bool:
    """Whether ``comment`` ends a line of code (``X = 1 // the x``)."""
    start = comment.start_byte
    return bool(source[source.rfind(b"\n", 0, start) + 1:start].strip())


def trailing_comment(source: bytes, node: Node) -> str:
    """The comment after ``node`` on its last line (``X = 1 // the x``), without markers: the
    line's own words on it, as Go's ``Comment`` of a value or field."""
    sibling = node.next_sibling
    while sibling is not None and not sibling.is_named and sibling.start_point[0] == node.end_point[0]:
        sibling = sibling.next_sibling     # a ``,`` or ``;`` before the comment
    if sibling is None or "comment" not in sibling.type or sibling.start_point[0] != node.end_point[0]:
        return ""
    doc = clean_comment(text_of(source, sibling).rstrip("\r\n").split("\n"))
    return "" if not_doc.is_licence(doc) else doc


def clean_comment(lines: list[str]) -> str:
    """Comment text without ``//``, ``/** */``, ``--``, ``#`` markers or tool directives."""
    kept: list[str] = []
    in_block = False    # inside a ``/* */``: a line's ``//`` or ``#`` is its text (``//=> false``)
    for line in lines:
        opens = not in_block and line.lstrip().startswith("/*")
        closes = "*/" in (line[line.index("/*") + 2:] if opens else line)
        line = (_BLOCK_MARK if in_block else _COMMENT_MARK).sub("", line, count=1)
        in_block = (opens or in_block) and not closes
        line = _COMMENT_END.sub("", line).rstrip()
        if _DIRECTIVE.match(line.strip()) or not_doc.is_note(line):
            continue
        kept.append("" if not_doc.is_divider(line) else line)   # a banner is no one's words
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    # indentation the lines share is the comment's, not its text's: a code block keeps its own
    doc = textwrap.dedent("\n".join(kept))
    if len(doc) > MAX_DOC:
        doc = doc[:MAX_DOC].rsplit(" ", 1)[0] + " …"
    return doc


def leading_doc(source: bytes, root: Node, declarations: frozenset[str] = frozenset()) -> str:
    """The file's opening comment block (after a shebang), unless it is only a licence, or it
    sits right on a node of a type in ``declarations`` (then it is that declaration's doc,
    unless a ``@file``-like tag says it is the file's)."""
    lines: list[str] = []
    last = -1
    for child in root.children:
        if "comment" not in child.type:
            declares = child.type in declarations and (
                child.type != "export_statement" or child.child_by_field_name("declaration") is not None)
            if lines and declares and child.start_point[0] <= last + 1 and not _FILE_TAG.search("\n".join(lines)):
                return ""
            break
        if lines and child.start_point[0] > last + 1:
            if not not_doc.is_licence("\n".join(lines)):
                break
            lines = []
        text = text_of(source, child)
        if not (child.start_point[0] == 0 and text.startswith("#!")):
            lines.extend(text.split("\n"))
        last = child.end_point[0]
    paragraphs = _without_block_tags(clean_comment(lines)).split("\n\n")
    return "\n\n".join(part for part in paragraphs if not not_doc.is_licence(part)).strip()


_BLOCK_TAG = re.compile(r"^@(\w+)\s*(.*)$")
_FILE_TAG = re.compile(r"@(?:file|fileoverview|overview|module|packageDocumentation)\b")
_DESCRIBING_TAGS = frozenset({"file", "fileoverview", "overview", "description", "desc", "summary"})


def _without_block_tags(doc: str) -> str:
    """A file comment's prose: JSDoc/Javadoc/LDoc block tags (``@module x``, ``@author``) and the
    lines they run on to are left out, but the words of ``@file``/``@fileoverview`` are prose."""
    if "@" not in doc:
        return doc
    kept: list[str] = []
    in_tag = False
    for line in doc.split("\n"):
        tag = _BLOCK_TAG.match(line)
        if tag:
            in_tag = tag.group(1).lower() not in _DESCRIBING_TAGS
            if not in_tag:
                kept.append(tag.group(2))
        elif not line:
            in_tag = False
            kept.append(line)
        elif not in_tag:
            kept.append(line)
    return "\n".join(kept).strip("\n")



def last_line(node: Node) -> int:
    """The 1-based line ``node`` ends on: a node taking in its line break ends at the next line's
    column 0, which is not one of its lines (a Makefile's variable, say)."""
    row, column = node.end_point
    return max(node.start_point[0] + 1, row + 1 if column else row)


def definition(source: bytes, name: str, kind: str, node: Node, *, anchor: Node | None = None,
               body: Node | None = None, parent: str = "", detail: str = "",
               with_signature: bool = True, labels: bool = True) -> dict[str, Any]:
    """A symbol for ``node``; ``anchor`` is the outermost node the doc comment sits above
    (an ``export`` or attribute wrapping the declaration); ``labels`` as ``doc_comment``'s."""
    named = node.child_by_field_name("name")  # past annotations and modifiers, as ctags counts
    symbol: dict[str, Any] = {"name": name, "kind": kind, "line": line_of(named or node)}
    if last_line(node) > symbol["line"]:     # its last line: a page links its lines in the source
        symbol["end"] = last_line(node)
    if with_signature:
        text = signature(source, node, body)
        if text:
            symbol["signature"] = text
    if parent:
        symbol["parent"] = parent
    if detail:
        symbol["detail"] = detail
    doc = doc_comment(source, anchor or node, labels)
    if doc:
        symbol["doc"] = doc
    return symbol


def unquote(text: str) -> str:
    """A string literal's content (``"a"``, ``'a'``, ```a```)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    return text


def finish(symbols: list[dict[str, Any]], imports: list[dict[str, Any]], docstring: str,
           tree: Tree) -> dict[str, Any]:
    """The extractor's result, sorted, with a problem when the parse failed badly."""
    # a name the parser took across lines (an unclosed string, a broken rule) names nothing
    symbols = [symbol for symbol in symbols if _one_line(symbol["name"])]
    imports = [entry for entry in imports if _one_line(entry["module"])]
    result: dict[str, Any] = {"symbols": unique_sorted(symbols), "imports": unique_sorted(imports),
                              "docstring": docstring}
    root = tree.root_node
    if root.has_error and _error_lines(root) >= 20:
        result["problems"] = [{"message": "parts of this file did not parse; "
                                          "definitions there may be missing"}]
    return result


def _one_line(name: str) -> bool:
    return bool(name.strip()) and "\n" not in name and "\r" not in name


def _error_lines(root: Node) -> int:
    """Lines covered by top-level parse errors."""
    return sum(child.end_point[0] - child.start_point[0] + 1
               for child in root.children if child.type == "ERROR")

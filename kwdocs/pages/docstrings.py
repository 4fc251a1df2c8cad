"""A definition's own documentation as a page shows it: a summary and blocks.

Python docstrings are parsed by griffe's docstring parsers (Google, NumPy and
Sphinx styles, told apart by griffe's heuristics), their prose read as Markdown when
the docstring is written in Markdown (``is_markdown``), else as reStructuredText;
Rust's doc comments are Markdown (``rust_doc``); Doxygen comments are read by their
commands (``\\brief``, ``@param``, ``@return``, ``\\code``, ``\\rst`` ...); any
other comment is prose.  The result is plain data for the templates:

- ``summary``: spans (see below), the first paragraph or ``\\brief``;
- ``blocks``: ``{"t": "text", "spans": [...]}``, ``{"t": "code", "v": text, "lang": "python"}``,
  ``{"t": "list", "items": [spans, ...]}`` (``"start": 1`` too when numbered),
  ``{"t": "heading", "level": 4, "spans": [...]}``,
  ``{"t": "table", "head": [spans per cell], "rows": [[spans per cell]], "align": ["", "left", ...]}`` and
  ``{"t": "fields", "title": "Parameters", "rows": [{"name", "type", "spans"}]}``.

A span is ``{"t": "text", "v": ...}`` or ``{"t": "code", "v": ..., "link": ...}``: reST roles
(``:class:`~torch.nn.Module```), literals and backticked names become code, linked when
``resolve`` knows the name.  Markdown adds ``{"t": "link", "v": words, "link": address}`` (a
web address made safe, or a definition's anchor) and the marks of emphasis around spans,
``{"t": "em" or "strong", "v": "", "end": False or True}``, always paired and nested.
Nothing here escapes: the templates' filters do.
"""
from __future__ import annotations

import inspect
import logging
import re
import textwrap
from collections.abc import Callable
from typing import Any

Resolver = Callable[[str], str]   # a name -> a link to its definition, or ""
MAX_BODY_CHARS = 12000            # a definition's documentation beyond its summary, at most

_OFF = {"warnings": False}
# Google's ``Returns: Tensor: the output`` names the type, not the value
_STYLE_OPTIONS = {"google": {**_OFF, "returns_named_value": False}, "numpy": _OFF, "sphinx": _OFF}
_FIELD_TITLES = {
    "parameters": "Parameters", "other_parameters": "Other parameters", "type_parameters": "Type parameters",
    "attributes": "Attributes", "returns": "Returns", "yields": "Yields", "receives": "Receives",
    "raises": "Raises", "warns": "Warns",
}

# :role:`target`, ``literal``, `interpreted`; a role may have a domain (:py:class:).  Each
# alternative starts with its colon or backtick (the lookbehind after it), so the search skips
# to those characters instead of trying every position
_INLINE = re.compile(r"(?P<role>(?::[A-Za-z][\w+.-]*)+:)`(?P<target>[^`]+)`"
                     r"|``(?P<literal>[^`]+?)``"
                     r"|`(?<![\w`]`)(?P<plain>[^`\n]+)`(?!`)")
# roles whose target is no name of the code: a Sphinx label (``:ref:`first result <firstresult>```
# is a section of the docs, not a field ``firstresult``), a document, a glossary term, a key, a
# file, a variable of the environment, a PEP: shown as code, never linked to a definition
_NOT_CODE_ROLES = ("math", "ref", "numref", "doc", "term", "download", "kbd", "file", "envvar", "samp", "pep",
                   "rfc", "abbr", "dfn", "option", "program", "command", "guilabel", "menuselection", "manpage",
                   "mimetype", "regexp", "token")
_NOT_CODE_SUFFIXES = tuple(f":{role}:" for role in _NOT_CODE_ROLES)
# the same as ``(?<![\w`])(?::(?!math:)...)+:`...``, written to start with the colon so the
# search skips to each colon instead of trying the lookbehind at every character; a role whose
# target is not code stays, for ``spans`` to show it unlinked
_NOT_CODE_ROLE = "(?!(?:" + "|".join(_NOT_CODE_ROLES) + "):)"
_ROLE_PREFIX = re.compile(rf":(?<![\w`]:){_NOT_CODE_ROLE}[A-Za-z][\w+.-]*(?::{_NOT_CODE_ROLE}[A-Za-z][\w+.-]*)*"
                          r":`(?=[^`\n]+`)")
_TITLED = re.compile(r"(?P<title>.*?)\s*<(?P<target>[^<>]+)>\s*$", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+(?P<name>[\w:-]+)::\s*(?P<rest>.*)$")
_DIRECTIVE_LABELS = {"versionadded": "New in version", "versionchanged": "Changed in version",
                     "deprecated": "Deprecated since version", "seealso": "See also"}
_RST_ESCAPE = re.compile(r"\\ |(?<=`)\\(?=s\b)")   # ``:func:`f`\s``: an escaped space, a plural
_FIELD_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+[\w:-]+::", re.MULTILINE)
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "testcode", "doctest", "math",
                              "testsetup", "literalinclude", "highlight"})
_LANGUAGE = re.compile(r"[\w+#-]{1,20}")
_SPECIAL_ANYWHERE = re.compile(r">>>|```|~~~|::[ \t]*$|^[ \t]*(?:\.\.[ \t]|[-*+•][ \t]|\d+[.)][ \t]|#\.[ \t])"
                               r"|\n[ \t]*\n(?: {4}|\t)", re.MULTILINE)
CODE_INDENT = 4   # a block this much deeper than the paragraph before it is code, as pdoc reads it
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#\.)\s+(?=\S)")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\w*)")


def _no_resolver(name: str) -> str:
    return ""


def rest_spans(text: str, resolve: Resolver = _no_resolver) -> list[dict]:
    """reST's words (``spans``: roles, literals, backticked names as code) with its ``*emphasis*``
    and ``**strong**`` as marks around text, as pdoc and Sphinx render them."""
    found = spans(text, resolve)
    if "*" not in text:
        return found
    return [piece for span in found for piece in (_rest_emphasis(span["v"]) if span["t"] == "text" else [span])]


# reST's ``*emphasis*`` and ``**strong**``: opened after a blank or an opening mark, closed before
# a blank or punctuation, words inside; ``*args`` and ``**kwargs`` open nothing
_REST_EMPHASIS = re.compile(r"(?<![^\s'\"(\[{<\-/:])(\*{1,3})(?=[^\s*])([^*\n]*?[^\s*\\])\1"
                            r"(?=[\s'\")\]}>\-/:.,;!?\\]|$)")


def _rest_emphasis(text: str) -> list[dict]:
    """A text span with reST's emphasis in it as text and mark spans."""
    pieces: list[dict] = []
    position = 0
    for match in _REST_EMPHASIS.finditer(text):
        # ``***x***``: both marks, as Sphinx's and Markdown's renderings show it
        kinds = {1: ["em"], 2: ["strong"], 3: ["em", "strong"]}[len(match.group(1))]
        if match.start() > position:
            pieces.append({"t": "text", "v": text[position:match.start()]})
        pieces += [*({"t": kind, "v": "", "end": False} for kind in kinds), {"t": "text", "v": match.group(2)},
                   *({"t": kind, "v": "", "end": True} for kind in reversed(kinds))]
        position = match.end()
    if position < len(text):
        pieces.append({"t": "text", "v": text[position:]})
    return pieces


def spans(text: str, resolve: Resolver = _no_resolver) -> list[dict]:
    """Prose split into text and code spans; roles, literals and backticked names become code."""
    if "`" not in text:   # most text: nothing inline to find
        return [{"t": "text", "v": _RST_ESCAPE.sub("", text) if "\\" in text else text}] if text else []
    result: list[dict] = []
    position = 0
    if "\\" in text:
        text = _RST_ESCAPE.sub("", text)
    for match in _INLINE.finditer(text):
        if match.start() > position:
            result.append({"t": "text", "v": text[position:match.start()]})
        position = match.end()
        if match.group("literal") is not None:
            shown = match.group("literal")
            result.append({"t": "code", "v": shown, "link": _link(shown, resolve)})
            continue
        target = match.group("target") if match.group("role") else match.group("plain")
        titled = _TITLED.match(target)
        # ``title <target>``, but a title holding ``<`` is none: ```<host>:<port>``` is code, whole
        if titled and titled.group("title") and "<" not in titled.group("title"):
            shown, target = titled.group("title"), titled.group("target")
        else:
            target = target.strip().lstrip("!")
            shown = target.lstrip("~.")
            if target.startswith("~"):
                shown = shown.rpartition(".")[2]
            target = target.lstrip("~.")
        role = match.group("role") or ""
        link = "" if role.endswith(_NOT_CODE_SUFFIXES) else _link(target, resolve)
        result.append({"t": "code", "v": shown, "link": link})
    if position < len(text):
        result.append({"t": "text", "v": text[position:]})
    return result


def _link(name: str, resolve: Resolver) -> str:
    name = name.strip().removesuffix("()")
    return resolve(name) if _NAME.fullmatch(name) else ""


def prose_blocks(text: str, resolve: Resolver = _no_resolver,
                 inline: Callable[[str, Resolver], list[dict]] | None = None) -> list[dict]:
    """reST or Markdown prose as paragraphs and code: ``>>>`` sessions, ``::`` literal blocks,
    ``.. code-block::`` and fenced blocks become code; other directives a labelled paragraph.
    ``inline`` reads a paragraph's words (``spans``, reST's, unless given)."""
    read = spans if inline is None else inline
    if not _SPECIAL_ANYWHERE.search(text):   # prose only (most text): paragraphs at blank lines
        return [{"t": "text", "spans": read(" ".join(paragraph.split()), resolve)}
                for paragraph in _BLANK_LINE.split(text) if paragraph.strip()]
    lines = text.expandtabs().split("\n")
    blocks: list[dict] = []
    index = 0
    paragraph_indent = -1   # the indentation of the paragraph just read, -1 after any other block
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            index += 1
            continue
        # (a directive or a list in a quote is read below as reST reads it)
        if paragraph_indent >= 0 and _indent(line) >= paragraph_indent + CODE_INDENT and not lines[index - 1].strip() \
                and not _DIRECTIVE.match(line) and not _BULLET.match(line):
            # ``Example usage:`` then an indented block: code in Markdown, which pdoc reads
            code, index = _indented(lines, index, paragraph_indent)
            blocks.append({"t": "code", "v": code, "lang": "python" if code.startswith(">>>") else ""})
            paragraph_indent = -1
            continue
        paragraph_indent = -1
        if stripped.startswith(">>>"):
            end = index
            while end < len(lines) and lines[end].strip():
                end += 1
            blocks.append({"t": "code", "v": textwrap.dedent("\n".join(lines[index:end])), "lang": "python"})
            index = end
            continue
        fence = _FENCE.match(line)
        if fence:
            end = index + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            blocks.append({"t": "code", "v": textwrap.dedent("\n".join(lines[index + 1:end])).strip("\n"),
                           "lang": fence.group(2)})
            index = end + 1
            continue
        directive = _DIRECTIVE.match(line)
        if directive:
            name = directive.group("name").rpartition(":")[2]
            body, index = _indented(lines, index + 1, _indent(line))
            if name in _CODE_DIRECTIVES:
                code = body or directive.group("rest")
                if code.strip():
                    lang = _language(directive.group("rest")) if name in ("code-block", "code", "sourcecode") else ""
                    blocks.append({"t": "code", "v": code, "lang": "python" if name.startswith("test") else lang})
                continue
            label = _DIRECTIVE_LABELS.get(name) or name.replace("-", " ").capitalize()
            rest = directive.group("rest").strip()
            if name in _DIRECTIVE_LABELS and name != "seealso" and rest:   # the version, in the label
                version, _, rest = rest.partition(" ")     # ``.. versionchanged:: 2.0 what changed``
                label, rest = f"{label} {version}", rest.strip()
            words = " ".join(part for part in (rest, body) if part.strip())
            if words.strip():
                blocks.append({"t": "text", "spans": [{"t": "text", "v": f"{label}: "}]
                               + read(" ".join(words.split()), resolve)})
            else:   # ``.. versionadded:: 2.0`` alone
                blocks.append({"t": "text", "spans": [{"t": "text", "v": f"{label}."}]})
            continue
        if _BULLET.match(line):
            items, index = _bullets(lines, index, resolve, read)
            blocks.append(_list_block(line, items))
            continue
        start = end = index
        while end < len(lines) and lines[end].strip() and not lines[end].strip().startswith(">>>") \
                and not _DIRECTIVE.match(lines[end]) and not (end > index and _FENCE.match(lines[end])) \
                and not (end > index and _BULLET.match(lines[end])):
            end += 1
        paragraph = " ".join(part.strip() for part in lines[index:end])
        index = end
        if paragraph.endswith("::"):
            paragraph = paragraph[:-2].rstrip() + ("" if paragraph[:-2].endswith(" ") or
                                                   paragraph == "::" else ":")
            code, index = _indented(lines, index, _indent(lines[end - 1]))
            if paragraph.strip():
                blocks.append({"t": "text", "spans": read(paragraph, resolve)})
            if code.strip():
                blocks.append({"t": "code", "v": code, "lang": "python" if code.startswith(">>>") else ""})
            continue
        blocks.append({"t": "text", "spans": read(paragraph, resolve)})
        # a docstring's first line lost its indentation to ``inspect.cleandoc``: nothing to measure by
        paragraph_indent = _indent(lines[end - 1]) if start else -1
    return blocks


_ORDERED = re.compile(r"\s*(\d{1,9})[.)]\s")


def _list_block(first: str, items: list[list[dict]]) -> dict:
    """A list block of ``items``, numbered from its first item's number when that is one
    (``1. Parse JSON``: ``"start": 1``), as every documentation tool shows it."""
    numbered = _ORDERED.match(first)
    return {"t": "list", "items": items, "start": int(numbered.group(1))} if numbered else {"t": "list", "items": items}


def _bullets(lines: list[str], index: int, resolve: Resolver,
             read: Callable[[str, Resolver], list[dict]] = spans) -> tuple[list[list[dict]], int]:
    """A bullet list from ``lines[index]``: its items' spans, and where it ends (a blank line
    or a line indented less than the bullets)."""
    base = _indent(lines[index])
    items: list[list[str]] = []
    while index < len(lines) and lines[index].strip():
        line = lines[index]
        bullet = _BULLET.match(line)
        if bullet and _indent(line) == base:
            items.append([line[bullet.end():].strip()])
        elif _indent(line) > base and items:
            items[-1].append(line.strip())
        else:
            break
        index += 1
    return [read(" ".join(item), resolve) for item in items], index


def _language(written: str) -> str:
    """A code block's language as a fence's info string can hold it: a plain word or nothing."""
    word = written.strip().strip("{}. ")
    return word if _LANGUAGE.fullmatch(word) else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented(lines: list[str], start: int, base: int) -> tuple[str, int]:
    """The block indented deeper than ``base`` from ``start`` (blank lines inside kept), dedented."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return textwrap.dedent("\n".join(lines[start:end])).strip("\n"), end


def _summary(blocks: list[dict]) -> tuple[list[dict], list[dict]]:
    """The first paragraph as the summary, and the blocks after it."""
    if blocks and blocks[0]["t"] == "text":
        return blocks[0]["spans"], blocks[1:]
    return [], blocks


def _capped(blocks: list[dict]) -> list[dict]:
    """Blocks up to MAX_BODY_CHARS of text; the rest is in the source shown above."""
    if len(blocks) < 2:   # the first block is kept whatever its size
        return list(blocks)
    kept: list[dict] = []
    used = 0
    for block in blocks:
        kind = block["t"]
        if kind == "text" or kind == "heading":
            size = sum(len(span["v"]) for span in block["spans"])
        elif kind == "code":
            size = len(block["v"])
        elif kind == "list":
            size = sum(len(span["v"]) for item in block["items"] for span in item)
        elif kind == "table":
            size = sum(len(span["v"]) for row in [block["head"], *block["rows"]] for cell in row for span in cell)
        else:
            size = sum(len(row["name"]) + sum(len(span["v"]) for span in row["spans"]) for row in block["rows"])
        if used and used + size > MAX_BODY_CHARS:
            kept.append({"t": "text", "spans": [{"t": "text", "v": "(The rest is in the source above.)"}]})
            break
        kept.append(block)
        used += size
    return kept


_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")
# what the walk of a signature reads: brackets, the marks opening and closing an annotation, and
# a name where one starts (not inside a word or a dotted name, nor right after a quote)
_SIGNATURE_TOKEN = re.compile(r"[([{)\]}:=,]|->|(?<![\w.'\"])[A-Za-z_][\w.]*")


def signature_spans(signature: str, resolve: Resolver) -> list[dict] | None:
    """A Python signature as code spans, the names in its annotations (after ``:`` and ``->``)
    linked where ``resolve`` knows them; None when nothing in it is linked (nor any name in it
    as written: ``x: a.b.`` links no ``a.b``)."""
    pieces: list[dict] = []
    linked = written = False
    position = 0
    depth = 0
    annotation = False
    for token in _SIGNATURE_TOKEN.finditer(signature):    # token by token: a signature is mostly names
        first = token.group()[0]
        if first in "([{":
            depth += 1
        elif first in ")]}":
            depth -= 1
        elif first == ":":
            annotation = annotation or depth == 1
        elif first == "-":
            annotation = annotation or depth == 0
        elif first in "=,":
            annotation = annotation and depth != 1
        elif annotation:
            name = token.group().rstrip(".")
            link = resolve(name)
            if link:
                start = token.start()
                if start > position:
                    pieces.append({"t": "code", "v": signature[position:start], "link": ""})
                pieces.append({"t": "code", "v": name, "link": link})
                linked = True
                written = written or name == token.group()
                position = start + len(name)
    if not linked or not (written or any(resolve(name) for name in set(_IDENTIFIER.findall(signature)))):
        return None
    if position < len(signature):
        pieces.append({"t": "code", "v": signature[position:], "link": ""})
    return pieces


# ---------------------------------------------------------------- Markdown doc comments

# A docstring is read as Markdown when it has Markdown's marks (a fence, ``**strong**``, a
# ``[link](...)``) and none of reStructuredText's (a role, ````literal````, a directive, a ``::``
# block, a title's underline): both styles' ``*emphasis*`` look alike.  A ``# heading`` is no
# mark: most are comments of the examples of Google-style docstrings
_MARKDOWN_MARKS = re.compile(r"^[ \t]*(?:```|~~~)|\*\*[^\s*](?:[^*\n]*[^\s*])?\*\*|\]\(",
                             re.MULTILINE)
# (a reference ```text`_`` closes a span: ```_private``` opening one is Markdown's code too)
_REST_MARKS = re.compile(r"(?<!`)``(?!`)|:[\w.+-]+:`|^[ \t]*\.\.[ \t]+\S|::[ \t]*$|(?<=[^\s`])`__?(?![\w`])"
                         r"|^[ \t]*(?:[-=^\"'+*#]{3,})[ \t]*$", re.MULTILINE)
_HEADING = re.compile(r"^[ ]{0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_REFERENCE_DEFINITION = re.compile(r"^[ ]{0,3}\[(?P<label>[^\]\n]+)\]:[ \t]*<?(?P<target>[^\s>]+)>?[ \t]*$",
                                   re.MULTILINE)
HEADING_DEMOTION = 3   # a doc's ``#`` sits below the page's ``#``, ``##`` and ``###``
# GFM: a table's delimiter row (``| --- | :-: |``), a footnote's definition and its reference
_TABLE_DELIMITER = re.compile(r"^[ ]{0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_FOOTNOTE_DEFINITION = re.compile(r"^[ ]{0,3}\[\^(?P<label>[^\]\s]+)\]:[ \t]*(?P<text>.*)$")
_FOOTNOTE_REFERENCE = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")   # a footnote's mark, as rustdoc raises it
_BLANKS = re.compile(r"[ \t]{2,}")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
# what a link's address may not hold as written: a Markdown page's ``(`` ``)`` ``<`` ``>`` end
# or open it, blanks end it, ``{`` opens python-markdown's attribute lists
_URL_UNSAFE = re.compile(r"[\x00-\x20\x7f()<>{}\"'`\\|^]")
# a Rust path rustdoc resolves: ``Parser``, ``crate::Parser``, ``Self::new``, ``fn@run``, ``vec!``, ``f()``
_RUST_PATH = re.compile(r"(?:(?:struct|enum|trait|union|mod|module|const|constant|fn|function|method|derive|"
                        r"type|value|macro|prim|primitive|tymethod|field|variant)@)?"
                        r"(?P<path>[A-Za-z_][\w]*(?:::[A-Za-z_][\w]*)*)(?:!|\(\))?")
_AUTOLINK = re.compile(r"<((?:https?://|mailto:)[^\s<>]*)>", re.IGNORECASE)
_PYTHON_PATH = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")
_RUST_CODE = frozenset({"", "rust", "no_run", "ignore", "should_panic", "compile_fail", "test_harness",
                        "edition2015", "edition2018", "edition2021", "edition2024"})


_REFERENCE_USE = re.compile(r"\]\[(?P<label>[^\]\n]+)\]")
# what any of Markdown's marks above holds (a fence, strong text, an inline or a reference link)
_MARKDOWN_NEEDS = ("```", "~~~", "**", "](", "][")


def is_markdown(text: str) -> bool:
    """Whether a docstring is written in Markdown rather than reStructuredText: a fence, strong
    text, an inline link, or a reference link (``[text][0]``) with its ``[0]: url`` line."""
    if not any(mark in text for mark in _MARKDOWN_NEEDS):    # most docstrings: no mark to weigh
        return False
    if _REST_MARKS.search(text) or ("~~~" in text and _rest_tilde_title(text)):
        return False
    if _MARKDOWN_MARKS.search(text):
        return True
    defined = {match["label"].lower() for match in _REFERENCE_DEFINITION.finditer(text)}
    return any(match["label"].lower() in defined for match in _REFERENCE_USE.finditer(text))


def _rest_tilde_title(text: str) -> bool:
    """A reST title underlined with ``~`` (requests' ``requests.api`` over ``~~~~~~~~~~~~``): the
    first run of tildes sits right under a line of text no longer than it, where a Markdown
    fence opens after a blank line (and a closing one follows an opening one)."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("~~~"):
            above = lines[index - 1].strip() if index else ""
            return not stripped.strip("~") and bool(above) and len(above) <= len(stripped)
    return False


def safe_url(url: str) -> str:
    """A link's address as a page may hold it: web and mail addresses only (no ``javascript:``,
    no paths that lead nowhere on the pages), percent-encoding what would end or open Markdown."""
    if not url.lower().startswith(_SAFE_SCHEMES):
        return ""
    return _URL_UNSAFE.sub(lambda match: f"%{ord(match.group(0)):02X}", url)


# a page of rustdoc's output, relative (``struct.Record.html#method.level``), as older crates link items
_RUSTDOC_PAGE = re.compile(r"(?:struct|enum|trait|fn|macro|type|constant|static|union)\.(\w+)\.html"
                           r"(?:#(?:method|tymethod|variant|structfield|associatedtype|associatedconstant)\.(\w+))?")


def _rustdoc_page_path(target: str) -> str | None:
    """The item a link to a rustdoc page names (``Record::level``), None for another link: the
    pages kwdocs writes are not rustdoc's, so such a link is to its item's definition or to none."""
    found = _RUSTDOC_PAGE.fullmatch(target)
    if found is None:
        return None
    return f"{found.group(1)}::{found.group(2)}" if found.group(2) else found.group(1)


def _cross_reference(target: str, resolve: Resolver, rust: bool) -> str | None:
    """A link's target read as a name (rustdoc's intra-doc links, mkdocstrings' cross-references):
    the name's link, "" when kwdocs knows no definition of it, None when it is not a name."""
    if rust:
        match = _RUST_PATH.fullmatch(target)
        if not match:
            return None
        path = match.group("path").removeprefix("self::").removeprefix("Self::")
        # ``crate::x::Y`` and ``super::Y`` name places kwdocs does not map: never one of this file's names
        return "" if path.startswith(("crate::", "super::")) else _link(path.replace("::", "."), resolve)
    return _link(target, resolve) if _PYTHON_PATH.fullmatch(target) else None


def _code_text(text: str) -> str:
    """A code span's text as CommonMark reads it: line ends as blanks, one blank each side dropped."""
    text = text.replace("\n", " ")
    if len(text) > 2 and text.startswith(" ") and text.endswith(" ") and text.strip():
        text = text[1:-1]
    return text


def _run(text: str, start: int, char: str) -> int:
    """How many ``char`` follow one another from ``start``."""
    end = start
    while end < len(text) and text[end] == char:
        end += 1
    return end - start


def _closing_parenthesis(text: str, start: int) -> int:
    """Where the ``)`` closing the ``(`` at ``start`` is (parentheses nested), or -1."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _one_code_span(label: str) -> bool:
    """Whether a link's text is one code span and nothing else (``[`Parser`]``)."""
    run = _run(label, 0, "`") if label.startswith("`") else 0
    return bool(run) and len(label) > 2 * run and _closing_ticks(label, run, run) == len(label) - run


def _closing_ticks(text: str, start: int, run: int) -> int:
    """Where the run of exactly ``run`` backticks closing a code span opened before ``start`` is, or -1."""
    for match in re.finditer(r"`+", text[start:]):
        if len(match.group(0)) == run:
            return start + match.start()
    return -1


def _closing_bracket(text: str, start: int) -> int:
    """Where the ``]`` closing the ``[`` at ``start`` is (brackets nested, code spans skipped), or -1."""
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "`":
            run = _run(text, index, "`")
            end = _closing_ticks(text, index + run, run)
            if end >= 0:
                index = end + run
                continue
            index += run
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def markdown_spans(text: str, resolve: Resolver = _no_resolver, *, rust: bool = False,
                   references: dict[str, str] | None = None, cross_references: bool = True) -> list[dict]:
    """Markdown inline text as spans: code spans, links (web addresses, or names kwdocs links:
    ``[`Parser`]``, ``[text][crate::Parser]``), and ``*emphasis*``/``**strong**`` as the
    marks ``{"t": "em"|"strong", "v": "", "end": bool}`` around text; anything else is text.
    Without ``cross_references``, ``[text][label]`` with no ``[label]: url`` line is text as
    written, as CommonMark reads it (Doxygen's ``[val1*][holder]``)."""
    pieces: list[dict] = []   # spans, and delimiter runs {"t": "delim", "char", "n", "open", "close"}
    plain: list[str] = []
    references = references or {}

    def flush() -> None:
        if plain:   # blanks in a row show as one (code spans keep theirs)
            pieces.append({"t": "text", "v": _BLANKS.sub(" ", "".join(plain))})
            plain.clear()

    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char == "\\" and index + 1 < length and text[index + 1] in _PUNCTUATION:
            plain.append(text[index + 1])
            index += 2
        elif char == "`":
            run = _run(text, index, "`")
            end = index + run
            close = _closing_ticks(text, end, run)
            if close < 0:
                plain.append("`" * run)
                index = end
                continue
            flush()
            shown = _code_text(text[end:close])
            # ``.min(1)``, a method as JavaScript's docs write it, links to ``min``
            pieces.append({"t": "code", "v": shown, "link": _link(shown.removeprefix("."), resolve)})
            index = close + run
        elif char == "[" or (char == "!" and text.startswith("[", index + 1)):
            image = char == "!"
            opening = index + 1 if image else index
            closing = _closing_bracket(text, opening)
            if closing < 0:
                plain.append(text[index:opening + 1])
                index = opening + 1
                continue
            label = text[opening + 1:closing]
            after = closing + 1
            target: str | None = None
            if text.startswith("(", after):
                end = _closing_parenthesis(text, after)
                if end >= 0:
                    target = text[after + 1:end].strip().split(" ", 1)[0].strip("<>")
                    after = end + 1
            elif text.startswith("[", after):
                end = text.find("]", after)
                if end >= 0 and (cross_references or (text[after + 1:end] or label).lower() in references):
                    name = text[after + 1:end] or label
                    target = references.get(name.lower(), name.strip("`"))
                    after = end + 1
            elif label.lower() in references:
                target = references[label.lower()]
            elif _one_code_span(label):
                target = label.strip("`")    # ``[`Parser`]``: a name, a link when kwdocs knows it
            if target is None:
                plain.append(text[index:opening + 1])
                index = opening + 1
                continue
            flush()
            code = _one_code_span(label)    # ``[`reviver` option of `JSON.parse()`](...)`` is words
            shown = _code_text(label.strip("`")) if code else "".join(
                span["v"] for span in markdown_spans(label, rust=rust))
            written = _rustdoc_page_path(target) if rust else None     # ``struct.Record.html#method.level``
            name_link = None if image else _cross_reference(written or target.split("#", 1)[0], resolve, rust)
            if name_link is not None and code:   # a name: code, linked where kwdocs knows it
                pieces.append({"t": "code", "v": shown, "link": name_link})
            elif name_link is not None:          # ``[the parser][crate::Parser]``: its words
                pieces.append({"t": "link", "v": shown, "link": name_link} if name_link and shown
                              else {"t": "text", "v": shown})
            elif code:
                pieces.append({"t": "code", "v": shown, "link": "" if image else safe_url(target)})
            else:
                url = "" if image else safe_url(target)
                pieces.append({"t": "link", "v": shown, "link": url} if url and shown else {"t": "text", "v": shown})
            index = after
        elif char == "<" and _AUTOLINK.match(text, index):
            autolink = _AUTOLINK.match(text, index)
            assert autolink is not None
            flush()
            pieces.append({"t": "link", "v": autolink.group(1), "link": safe_url(autolink.group(1))})
            index = autolink.end()
        elif char in "*_":
            run = _run(text, index, char)
            before = text[index - 1] if index else " "
            after_char = text[index + run] if index + run < length else " "
            left = not after_char.isspace() and (after_char not in _PUNCTUATION or before.isspace()
                                                 or before in _PUNCTUATION)
            right = not before.isspace() and (before not in _PUNCTUATION or after_char.isspace()
                                              or after_char in _PUNCTUATION)
            if char == "_":   # no emphasis inside words: ``snake_case_name``
                left, right = left and (not right or before in _PUNCTUATION), right and (
                    not left or after_char in _PUNCTUATION)
            flush()
            pieces.append({"t": "delim", "char": char, "n": run, "open": left, "close": right})
            index += run
        else:
            # up to the next character that may open markup: a text run at once, not a character at a time
            run_end = _PLAIN_RUN.match(text, index + 1)
            end = run_end.end() if run_end else index + 1
            plain.append(text[index:end])
            index = end
    flush()
    return _emphasis(pieces)


_PLAIN_RUN = re.compile(r"[^\\`\[!<*_]*")   # no character markdown_spans' loop reads as markup


def _emphasis(pieces: list[dict]) -> list[dict]:
    """Delimiter runs matched into emphasis marks (CommonMark's rule, nearest opener first);
    the rest of each run is text."""
    opened: dict[int, list[dict]] = {}   # a closer's index -> marks opened before it at its opener
    closed: dict[int, list[dict]] = {}
    for position, piece in enumerate(pieces):
        if piece["t"] != "delim" or not piece["close"]:
            continue
        while piece["n"]:
            for back in range(position - 1, -1, -1):
                opener = pieces[back]
                if opener["t"] == "delim" and opener["open"] and opener["n"] and opener["char"] == piece["char"] \
                        and not ((opener["close"] or piece["open"]) and (opener["n"] + piece["n"]) % 3 == 0
                                 and not (opener["n"] % 3 == 0 and piece["n"] % 3 == 0)):
                    break
            else:
                break
            size = 2 if opener["n"] >= 2 and piece["n"] >= 2 else 1
            kind = "strong" if size == 2 else "em"
            opener["n"] -= size
            piece["n"] -= size
            # marks opened later close first: the opener's newest mark is innermost
            opened.setdefault(back, []).append({"t": kind, "v": "", "end": False})
            closed.setdefault(position, []).append({"t": kind, "v": "", "end": True})
            # delimiters between the two are text now
            for middle in range(back + 1, position):
                if pieces[middle]["t"] == "delim":
                    pieces[middle]["open"] = pieces[middle]["close"] = False
    result: list[dict] = []
    for position, piece in enumerate(pieces):
        if piece["t"] != "delim":
            if piece["t"] == "text" and result and result[-1]["t"] == "text":
                result[-1] = {"t": "text", "v": result[-1]["v"] + piece["v"]}
            else:
                result.append(piece)
            continue
        marks_closed = closed.get(position, [])
        marks_opened = list(reversed(opened.get(position, [])))
        left_over = piece["char"] * piece["n"]
        result.extend(marks_closed)
        if left_over:
            if result and result[-1]["t"] == "text":
                result[-1] = {"t": "text", "v": result[-1]["v"] + left_over}
            else:
                result.append({"t": "text", "v": left_over})
        result.extend(marks_opened)
    return result


def _rust_code(body: str) -> str:
    """A Rust example as rustdoc shows it: without its hidden lines (``# `` at the line's start,
    or ``#`` alone), ``##`` read as ``#``."""
    shown = []
    for line in body.split("\n"):
        stripped = line.lstrip()
        if stripped == "#" or stripped.startswith("# "):
            continue
        shown.append(line.replace("##", "#", 1) if stripped.startswith("##") else line)
    return "\n".join(shown).strip("\n")


def _fence_language(info: str, rust: bool) -> tuple[str, bool]:
    """A fence's language as a page writes it, and whether it is Rust (rustdoc's default)."""
    words = [word.strip() for word in info.replace(",", " ").split()]
    if rust and all(word in _RUST_CODE or word.startswith("edition") for word in words):
        return "rust", True
    return (_language(words[0]) if words else ""), False


_ADMONITION = re.compile(r'^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+(?P<kind>[\w-]+)(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$')
_QUOTE = re.compile(r"^(?:>(?!>>)[ \t]?)+")


def markdown_blocks(text: str, resolve: Resolver = _no_resolver, *, rust: bool = False) -> list[dict]:
    """Markdown (a Markdown docstring, a rustdoc comment) as blocks: paragraphs with their
    wrapped lines joined, lists whose items keep their continuation lines, headings (demoted
    below the page's), fenced and indented code (a Rust example without its hidden lines)."""
    references: dict[str, str] = {}
    if "]:" in text:
        def keep(match: re.Match) -> str:
            references.setdefault(match.group("label").lower(), match.group("target"))
            return ""
        text = _REFERENCE_DEFINITION.sub(keep, text)

    lines, footnotes = _footnotes(text.expandtabs().split("\n"))

    def inline(words: str) -> list[dict]:
        if footnotes and "[^" in words:   # a footnote's reference: its number, raised
            words = _FOOTNOTE_REFERENCE.sub(
                lambda match: str(footnotes[match[1]][0]).translate(_SUPERSCRIPT) if match[1] in footnotes
                else match[0], words)
        return markdown_spans(words, resolve, rust=rust, references=references)

    blocks: list[dict] = []
    index = 0
    after_blank = True
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            index += 1
            after_blank = True
            continue
        fence = _FENCE.match(line)
        if fence:
            marks = fence.group(1)
            info = line.strip()[len(marks):]
            end = index + 1
            while end < len(lines) and not (lines[end].strip().startswith(marks)
                                            and not lines[end].strip().strip(marks[0])):
                end += 1
            body = textwrap.dedent("\n".join(lines[index + 1:end])).strip("\n")
            language, is_rust = _fence_language(info, rust)
            if is_rust:
                body = _rust_code(body)
            if body.strip():
                blocks.append({"t": "code", "v": body, "lang": language})
            index, after_blank = end + 1, True
            continue
        heading = _HEADING.match(line)
        if heading:
            blocks.append({"t": "heading", "level": min(6, len(heading.group(1)) + HEADING_DEMOTION),
                           "spans": inline(heading.group(2))})
            index, after_blank = index + 1, True
            continue
        admonition = None if rust else _ADMONITION.match(line)
        if admonition:
            # ``!!! note "Title"`` (MkDocs' admonition): its title in bold, then its indented body
            title = admonition.group("title") or admonition.group("kind").capitalize()
            blocks.append({"t": "text", "spans": [{"t": "strong", "v": "", "end": False}, *inline(title),
                                                  {"t": "strong", "v": "", "end": True}]})
            end = index + 1
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > _indent(line)):
                end += 1
            blocks += markdown_blocks(textwrap.dedent("\n".join(lines[index + 1:end])), resolve)
            index, after_blank = end, True
            continue
        if after_blank and _indent(line) >= 4 and (not blocks or blocks[-1]["t"] != "list"):
            body, index = _indented(lines, index, 3)
            blocks.append({"t": "code", "v": _rust_code(body) if rust else body,
                           "lang": "rust" if rust else ("python" if body.startswith(">>>") else "")})
            after_blank = True
            continue
        if not rust and stripped.startswith(">>>"):
            end = index
            while end < len(lines) and lines[end].strip():
                end += 1
            blocks.append({"t": "code", "v": textwrap.dedent("\n".join(lines[index:end])), "lang": "python"})
            index, after_blank = end, True
            continue
        if _BULLET.match(line):
            items, index = _markdown_items(lines, index)
            blocks.append(_list_block(line, [inline(item) for item in items]))
            after_blank = True
            continue
        if "|" in line and index + 1 < len(lines) and _TABLE_DELIMITER.match(lines[index + 1]):
            head, align = _table_cells(line), _table_cells(lines[index + 1])
            if len(head) == len(align):
                end = index + 2
                rows = []
                while end < len(lines) and lines[end].strip() and "|" in lines[end]:
                    cells = _table_cells(lines[end])[:len(head)]
                    rows.append([inline(cell) for cell in cells + [""] * (len(head) - len(cells))])
                    end += 1
                blocks.append({"t": "table", "head": [inline(cell) for cell in head], "rows": rows,
                               "align": [_ALIGNS[(cell.startswith(":"), cell.endswith(":"))] for cell in align]})
                index, after_blank = end, True
                continue
        end = index + 1
        while end < len(lines) and lines[end].strip() and not _FENCE.match(lines[end]) \
                and not _HEADING.match(lines[end]) and not _BULLET.match(lines[end]):
            end += 1
        # a block quote's ``>`` marks are not its words
        words = " ".join(_QUOTE.sub("", part.strip()) for part in lines[index:end])
        blocks.append({"t": "text", "spans": inline(words)})
        index, after_blank = end, False
    # the footnotes at the doc's end, numbered, as rustdoc lists them
    for number, words in sorted(footnotes.values()):
        blocks.append({"t": "text", "spans": [{"t": "text", "v": str(number).translate(_SUPERSCRIPT) + " "},
                                              *inline(words)]})
    return blocks


_ALIGNS = {(False, False): "", (True, False): "left", (False, True): "right", (True, True): "center"}


def _table_cells(line: str) -> list[str]:
    """A GFM table row's cells: split at each ``|`` outside code spans (``\\|`` is a pipe)."""
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    cells: list[str] = []
    current: list[str] = []
    in_code = False
    index = 0
    while index < len(row):
        char = row[index]
        if char == "\\" and row.startswith("|", index + 1):
            current.append("|")
            index += 2
            continue
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        index += 1
    cells.append("".join(current).strip())
    return cells


def _footnotes(lines: list[str]) -> tuple[list[str], dict[str, tuple[int, str]]]:
    """The lines without their GFM footnote definitions (``[^1]: text``, its indented lines
    after it), and each footnote's number (in the order first referred to) and words."""
    if not any("[^" in line for line in lines):
        return lines, {}
    kept: list[str] = []
    words: dict[str, str] = {}
    index = 0
    while index < len(lines):
        found = _FOOTNOTE_DEFINITION.match(lines[index])
        if not found:
            kept.append(lines[index])
            index += 1
            continue
        text = [found["text"].strip()]
        index += 1
        while index < len(lines) and lines[index].strip() and _indent(lines[index]) >= 2:
            text.append(lines[index].strip())
            index += 1
        words.setdefault(found["label"], " ".join(text))
    order = [label for line in kept for label in _FOOTNOTE_REFERENCE.findall(line) if label in words]
    order += list(words)
    numbers = {label: number for number, label in enumerate(dict.fromkeys(order), start=1)}
    return kept, {label: (numbers[label], text) for label, text in words.items()}


def _markdown_items(lines: list[str], index: int) -> tuple[list[str], int]:
    """A Markdown list from ``lines[index]``: its items' text (a bullet's wrapped lines, lazy
    or indented, and its indented paragraphs joined to it; a nested bullet an item of its own),
    and where the list ends."""
    base = _indent(lines[index])
    items: list[list[str]] = []
    blank = False
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            blank = True
            index += 1
            continue
        bullet = _BULLET.match(line)
        if _FENCE.match(line) or _HEADING.match(line) or _indent(line) < base:
            break
        if bullet:
            items.append([line[bullet.end():].strip()])
        elif blank and _indent(line) <= base:
            break   # a paragraph after the list
        else:
            items[-1].append(line.strip())
        blank = False
        index += 1
    while index > 0 and not lines[index - 1].strip():
        index -= 1
    return [" ".join(item) for item in items], index


def rust_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A rustdoc comment (``///``, ``//!``), which is Markdown, as summary and blocks."""
    summary, body = _summary(markdown_blocks(text, resolve, rust=True))
    return {"summary": summary, "blocks": _capped(body)}


# a Go doc link: ``[Command]``, ``[strings.Split]``, ``[*bytes.Buffer]``, ``[Command.Execute]``
_GO_DOC_LINK = re.compile(r"\[\*?([A-Za-z_]\w*(?:[./][A-Za-z_]\w*)*)\](?![(\[:])")
_GO_LIST_ITEM = re.compile(r"\s*(?:[-*+\u2022]|\d+[.)])\s")
# what Markdown reads as markup in a line of Go doc text, which has none but doc links and headings
_GO_MARKUP = re.compile(r"[\\`*_<>|\[\]]")
# what opens a Markdown list or heading at a line's start; in Go only an indented line is a list
# item and a ``# `` line alone a heading, so an unindented ``- x`` or ``1. x`` is text
_GO_BLOCK_MARK = re.compile(r"^(\d*)([-+#.)])")


def go_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A Go doc comment (go.dev/doc/comment) as summary and blocks: ``# `` headings, indented
    lists, other indented lines as code, ``[Name]`` doc links as names; its text is plain, so
    characters Markdown would read as markup are shown as written."""
    lines = text.split("\n")
    markdown: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line[:1].isspace() or not line.strip():
            heading = line.startswith("# ") and (index == 0 or not lines[index - 1].strip()) and (
                index + 1 == len(lines) or not lines[index + 1].strip())
            markdown.append("# " + _go_text(line[2:]) if heading else _GO_BLOCK_MARK.sub(r"\1\\\2", _go_text(line)))
            index += 1
            continue
        end = index
        while end < len(lines) and (lines[end][:1].isspace() or not lines[end].strip()):
            end += 1
        while not lines[end - 1].strip():   # blank lines after the block are the paragraph break
            end -= 1
        block = lines[index:end]
        if _GO_LIST_ITEM.match(block[0]):
            markdown += [_go_text(item.strip()) if _GO_LIST_ITEM.match(item) else "  " + _go_text(item.strip())
                         for item in block if item.strip()]
        else:
            code = textwrap.dedent("\n".join(block).expandtabs(4))
            fence = "~" * max([3, *(len(run) + 1 for run in re.findall(r"~+", code))])
            markdown += ["", fence, code, fence, ""]
        index = end
    summary, body = _summary(markdown_blocks("\n".join(markdown), resolve))
    return {"summary": summary, "blocks": _capped(body)}


def _go_text(line: str) -> str:
    """A line of Go doc text as Markdown shows it as written, its doc links as linked names."""
    pieces = []
    position = 0
    for match in _GO_DOC_LINK.finditer(line):
        pieces.append(_GO_MARKUP.sub(lambda m: "\\" + m.group(), line[position:match.start()]))
        pieces.append(f"[`{match.group(1)}`]")
        position = match.end()
    pieces.append(_GO_MARKUP.sub(lambda m: "\\" + m.group(), line[position:]))
    return "".join(pieces)


# ---------------------------------------------------------------- Python

def _griffe():
    import griffe  # imported on first use: a build without docstrings never pays for it
    logging.getLogger("griffe").setLevel(logging.ERROR)
    return griffe


_parser = None
# A line that may open a section in some style: ``:param x:`` (Sphinx), ``Args:`` (Google), a
# title over ``---`` (NumPy).  griffe tells styles apart by such lines only (keyword lines of the
# cleaned docstring, a subset of these lines of the raw one), and finding none gives the whole
# docstring as one text section.
_MAY_HAVE_SECTIONS = re.compile(r"\n\s*(?::|\w[\w \t]*:|---)")
# a Sphinx field at a line's start once the docstring's indentation is off (``:param x:``, ``:rtype:``)
_SPHINX_FIELD = re.compile(r":(?:param|parameter|arg|argument|key|keyword|type|raises?|except|exception|var|ivar"
                           r"|cvar|vartype|returns?|rtype|yields?|ytype)\b[^\n]*:")


def _after_fields(value: str) -> tuple[str, str]:
    """A cleaned docstring split where its Sphinx field list ends, and the rest: reST ends one at
    a paragraph starting, after a blank line, where the fields start (requests' ``Usage::`` after
    ``:rtype:``), which griffe would read as the last field's text; ``(value, "")`` if none."""
    lines = value.split("\n")
    in_fields = False
    for index, line in enumerate(lines):
        if _SPHINX_FIELD.match(line):
            in_fields = True
        elif in_fields and line[:1].strip() and not lines[index - 1].strip():
            return "\n".join(lines[:index]).rstrip(), "\n".join(lines[index:])
    return value, ""


_META_FIELD = re.compile(r"^[ \t]*:meta[ \t]+[\w-]+:[ \t]*(?:\n|$)", re.MULTILINE)


def python_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A docstring as summary and blocks, its sections (Args, Returns ...) as fields."""
    # roles as plain backticked names: a role in ``x (:class:`T`): ...`` splits griffe's fields
    # (every role ends in ":`": most docstrings have none to find)
    if ":meta " in text:    # Sphinx's ``:meta private:`` is metadata for autodoc, never shown
        text = _META_FIELD.sub("", text)
    plain = _ROLE_PREFIX.sub("`", text) if ":`" in text else text
    markdown = is_markdown(text)
    if not _MAY_HAVE_SECTIONS.search(plain):
        # one text section, as griffe gives it, without importing and running the parser
        value = inspect.cleandoc(plain.rstrip())   # what griffe.Docstring holds
        blocks = _prose(value, resolve, markdown) if value else []
    else:
        sections, tail = _sections(plain)
        if sections is None:
            blocks = _prose(text, resolve, markdown)
        else:
            blocks = [block for section in sections for block in _section_blocks(section, resolve, markdown)]
            if tail:
                blocks += _prose(tail, resolve, markdown)
    summary, body = _summary(blocks)
    return {"summary": summary, "blocks": _capped(body)}


def _sections(plain: str) -> tuple[list | None, str]:
    """griffe's sections of a docstring (its roles made plain), and the reST paragraphs after
    its Sphinx field list, read apart (``_after_fields``); None if griffe failed on it."""
    global _parser
    if _parser is None:
        _parser = _griffe()
    griffe = _parser
    # cleaned only when a Sphinx field may end before a paragraph (most sectioned docstrings have none)
    head, tail = _after_fields(inspect.cleandoc(plain)) if _SPHINX_FIELD.search(plain) else (plain, "")
    if not tail:
        head = plain    # as griffe cleans it (cleaning twice may take a first line's indentation off)
    try:
        sections = griffe.parse_auto(griffe.Docstring(head), per_style_options=_STYLE_OPTIONS)
        if tail and all(section.kind.value == "text" for section in sections):
            # a last field with no words (``:param x:``) griffe reads only with text after it
            sections, tail = griffe.parse_auto(griffe.Docstring(plain), per_style_options=_STYLE_OPTIONS), ""
    except Exception:  # noqa: BLE001 - a parser bug on one odd docstring: show it as prose
        return None, ""
    return sections, tail


_REST_ESCAPE = re.compile(r"\\(.)")


def _prose(text: str, resolve: Resolver, markdown: bool) -> list[dict]:
    """A docstring's prose as blocks, read as Markdown or as reStructuredText."""
    return markdown_blocks(text, resolve) if markdown else prose_blocks(text, resolve, rest_spans)


def _section_blocks(section, resolve: Resolver, markdown: bool = False) -> list[dict]:
    kind = section.kind.value
    value = section.value
    words = markdown_spans if markdown else rest_spans
    if kind == "text":
        return _prose(value, resolve, markdown)
    if kind in _FIELD_TITLES:
        rows = []
        after: list[dict] = []   # ``.. versionchanged::`` in a field's text: a note after the list
        for item in value:
            name = getattr(item, "name", "") or ""
            annotation = getattr(item, "annotation", None)
            annotation = str(annotation) if annotation else ""
            if kind in ("raises", "warns"):
                name, annotation = annotation, ""
            description = item.description or ""
            directive = _FIELD_DIRECTIVE.search(description)
            if directive:
                after.extend(prose_blocks(textwrap.dedent(description[directive.start():]), resolve, rest_spans))
                description = description[:directive.start()]
            # ``:param \\*\\*kwargs:``: reST's escapes are not part of the name (nor of a code span)
            name = _REST_ESCAPE.sub(r"\1", name)
            rows.append({"name": name, "type": spans(f"`{annotation}`", resolve) if annotation else [],
                         "spans": words(" ".join(description.split()), resolve)})
        fields = [{"t": "fields", "title": section.title or _FIELD_TITLES[kind], "rows": rows}] if rows else []
        return fields + after
    if kind == "examples":
        blocks: list[dict] = []
        for part_kind, part in value:
            if getattr(part_kind, "value", part_kind) == "examples":
                blocks.append({"t": "code", "v": part, "lang": "python"})
            else:
                blocks.extend(_prose(part, resolve, markdown))
        return blocks
    if kind == "admonition":
        title = section.title or str(getattr(value, "kind", "")).capitalize()
        inner = _prose(getattr(value, "contents", "") or "", resolve, markdown)
        if inner and inner[0]["t"] == "text":
            inner[0] = {"t": "text", "spans": [{"t": "text", "v": f"{title}: "}] + inner[0]["spans"]}
            return inner
        return [{"t": "text", "spans": [{"t": "text", "v": f"{title}:"}]}] + inner
    if kind == "deprecated":
        version = getattr(value, "version", "")
        return [{"t": "text", "spans": [{"t": "text", "v": f"Deprecated since {version}: "}]
                 + words(getattr(value, "description", "") or "", resolve)}]
    return []


# ---------------------------------------------------------------- Doxygen and plain comments

_COMMAND = re.compile(r"^[\\@](?P<name>[a-zA-Z]+)(?:\[(?P<dir>[^\]]*)\])?\s*(?P<rest>.*)$")
_INLINE_COMMAND = re.compile(r"[\\@](?:c|p|a|e|em|b|ref|link|copydoc)\s+([\w:.~()<>]*[\w)>])")
# JSDoc's and Javadoc's ``{@link Target}``, ``{@link Target|text}``, ``{@code x}``: the text, else the name as code
_BRACED_INLINE = re.compile(r"(?:\[(?P<label>[^\]\n]+)\])?\{@(?P<tag>link|linkcode|linkplain|code|literal)\s+"
                            r"(?P<target>[^}|\s]+)(?:(?:\s*\|\s*|\s+)(?P<text>[^}]*))?\}")
_LINK_END = re.compile(r"[\\@]endlink\b")
_FIELD_COMMANDS = {"param": "Parameters", "arg": "Parameters", "argument": "Parameters",
                   "tparam": "Template parameters", "template": "Type parameters", "typeParam": "Type parameters",
                   "property": "Properties", "prop": "Properties",
                   "return": "Returns", "returns": "Returns", "result": "Returns", "retval": "Return values",
                   "yield": "Yields", "yields": "Yields",
                   "throw": "Throws", "throws": "Throws", "exception": "Throws"}
_NAMED_FIELDS = frozenset({"param", "arg", "argument", "tparam", "template", "typeParam", "property", "prop",
                           "retval", "throw", "throws", "exception"})
_THROWS = frozenset({"throw", "throws", "exception"})   # named by their type: JSDoc's in braces
_LABELS = {"note": "Note", "warning": "Warning", "attention": "Attention", "see": "See also",
           "sa": "See also", "deprecated": "Deprecated", "since": "Since", "pre": "Precondition",
           "post": "Postcondition", "invariant": "Invariant", "todo": "To do", "bug": "Bug",
           "remark": "Remark", "remarks": "Remark", "details": "", "par": "", "default": "Default",
           "defaultValue": "Default"}
# JSDoc tags that say what a comment documents (the page says it already), not prose
_TYPED = frozenset({"type", "typedef", "enum"})
_STRUCTURAL = frozenset({"name", "module", "namespace", "memberof", "memberOf", "function", "func", "method",
                         "kind", "class", "constructor", "constructs", "callback", "access", "private", "public",
                         "protected", "package", "static", "instance", "inner", "global", "readonly", "abstract",
                         "virtual", "override", "inheritdoc", "exports", "alias", "lends", "ignore", "hideconstructor",
                         "async", "generator", "event", "fires", "emits", "listens", "mixin", "mixes", "interface",
                         "implements", "augments", "extends", "const", "constant", "variation", "fileoverview",
                         "overview", "file", "author", "version", "license", "copyright", "internal", "hidden",
                         "category", "group", "this", "fn", "var", "def", "struct", "union",
                         # Doxygen's grouping: the groups it names are Doxygen's outline, not the page's
                         "ingroup", "addtogroup", "weakgroup", "defgroup"})
# TSDoc's modifier tags take no argument: words after one on its line are prose (TypeDoc's summary)
_MODIFIERS = frozenset({"internal", "hidden", "private", "public", "protected", "package", "readonly", "abstract",
                        "virtual", "override", "static", "async", "generator", "sealed", "alpha", "beta",
                        "experimental"})
_BLOCK_ENDS = {"code": "endcode", "verbatim": "endverbatim", "rst": "endrst", "f[": "f]"}


def _braced_inline(match: re.Match) -> str:
    text = match.group("label") or (match.group("text") or "").strip()
    return text if text else f"`{match.group('target')}`"


def _braced_markdown(match: re.Match) -> str:
    """``{@link Target | text}`` as the Markdown link TypeDoc makes of it: to the address, or to
    the name's definition where kwdocs knows it; ``{@link Target}`` as its name in code."""
    target = match.group("target")
    if match.group("tag") in ("code", "literal"):
        return f"`{' '.join(part for part in (target, match.group('text')) if part)}`"
    text = (match.group("label") or match.group("text") or "").strip()
    if not text:
        return f"<{target}>" if safe_url(target) else f"`{target}`"
    return f"[{text}]({target})" if safe_url(target) else f"[{text}][{target}]"


def _jsdoc_type(rest: str) -> tuple[str, str]:
    """A JSDoc ``{Type}`` opening ``rest`` (its braces balanced), and the words after it."""
    if not rest.startswith("{") or rest.startswith("{@"):
        return "", rest
    depth = 0
    for index, char in enumerate(rest):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return rest[1:index].strip(), rest[index + 1:].lstrip()
    return "", rest


def _jsdoc_name(name: str) -> tuple[str, str]:
    """A parameter name as written and the note it carries: ``[opts.x=1]`` is optional, default 1."""
    if not (name.startswith("[") and name.endswith("]")):
        return name, ""
    name, equals, default = name[1:-1].partition("=")
    return name, f"Optional, default `{default}`. " if equals else "Optional. "


def comment_doc(text: str, resolve: Resolver = _no_resolver, *, markdown: bool = False,
                markdown_blocks_too: bool = False) -> dict:
    """A doc comment (its markers already stripped) as summary and blocks: Doxygen commands
    as fields and labelled paragraphs, ``\\code`` and ``\\rst`` blocks as code and prose;
    with ``markdown``, its prose is read as Markdown: its words only (``*emphasis*``, links:
    Doxygen's), or with ``markdown_blocks_too`` its blocks too (lists, fences: JSDoc's and TSDoc's)."""
    whole = markdown and markdown_blocks_too
    words = (markdown_spans if whole else _markdown_words) if markdown else spans

    def read(prose: str) -> list[dict]:
        return markdown_blocks(prose, resolve) if whole else prose_blocks(prose, resolve, words)

    if "\\" not in text and "@" not in text:
        summary, body = _summary(read(text))
        return {"summary": summary, "blocks": _capped(body)}
    if "{@" in text:
        text = _BRACED_INLINE.sub(_braced_markdown if whole else _braced_inline, text)
    text = _INLINE_COMMAND.sub(lambda match: f"`{match.group(1)}`", _LINK_END.sub("", text))
    brief: list[dict] = []
    blocks: list[dict] = []
    fields: dict[str, dict] = {}
    prose: list[str] = []
    current: dict | None = None   # the field row or labelled paragraph continuation lines go to

    def flush() -> None:
        if prose:
            blocks.extend(read("\n".join(prose)))
            prose.clear()

    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        command = _COMMAND.match(line)
        if not command:
            if not line:
                current = None
                prose.append("")
            elif current is not None:
                current["words"].append(line)
            else:
                prose.append(lines[index - 1])
            continue
        name, rest = command.group("name"), command.group("rest")
        if name == "example":   # JSDoc: the lines up to the next tag are code
            flush()
            end = index
            while end < len(lines) and not _COMMAND.match(lines[end].strip()):
                end += 1
            inner = textwrap.dedent("\n".join(lines[index:end])).strip("\n")
            index = end
            if rest:
                blocks.append({"t": "text", "spans": words(rest, resolve)})
            if inner and whole and any(_FENCE.match(line) for line in inner.split("\n")):  # TSDoc: Markdown
                blocks.extend(markdown_blocks(inner, resolve))
            elif inner:
                blocks.append({"t": "code", "v": inner, "lang": ""})
            current = None
        elif name in _STRUCTURAL:
            current = None
            if name in _MODIFIERS and rest:
                prose.append(rest)
        elif name in _TYPED:
            flush()
            shown, _ = _jsdoc_type(rest)
            current = None
            if shown:
                blocks.append({"t": "text", "spans": [{"t": "text", "v": "Type: "},
                                                      {"t": "code", "v": shown, "link": _link(shown, resolve)}]})
        elif name in ("code", "verbatim", "rst"):
            flush()
            end = index
            while end < len(lines) and not re.match(rf"\s*[\\@]{_BLOCK_ENDS[name]}\b", lines[end]):
                end += 1
            inner = textwrap.dedent("\n".join(lines[index:end])).strip("\n")
            index = end + 1
            if name == "rst":
                blocks.extend(prose_blocks(inner, resolve, rest_spans if markdown else None))
            elif inner:
                language = _language(rest) if name == "code" else ""
                blocks.append({"t": "code", "v": inner, "lang": language})
            current = None
        elif name == "brief" or name == "short":
            flush()
            current = {"words": [rest], "brief": True}
            brief.append(current)
        elif name in _FIELD_COMMANDS:
            flush()
            title = _FIELD_COMMANDS[name]
            row_type, rest = _jsdoc_type(rest)
            row_name = note = ""
            if name in _NAMED_FIELDS and not (row_type and name in _THROWS):
                row_name, _, rest = rest.replace("\t", " ").partition(" ")
                rest = rest.lstrip()
                row_name, note = _jsdoc_name(row_name)
            if command.group("dir"):
                row_name = f"{row_name} [{command.group('dir')}]"
            field = fields.get(title)
            if field is None:
                field = fields[title] = {"t": "fields", "title": title, "rows": []}
                blocks.append(field)
            rest = rest.removeprefix("- ") if rest != "-" else ""   # JSDoc's ``name - text``
            current = {"name": row_name, "type": row_type, "words": [note + rest]}
            field["rows"].append(current)
        elif name in _LABELS:
            flush()
            label = _LABELS[name]
            current = {"words": [f"{label}: {rest}" if label else rest]}
            blocks.append({"t": "para", "row": current})
        else:
            prose.append(line[1:])   # an unknown command: its words, without the marker
    flush()
    finished = []
    for block in blocks:
        if block["t"] == "fields":
            block["rows"] = [{"name": row["name"],
                              "type": [{"t": "code", "v": row["type"], "link": _link(row["type"], resolve)}]
                              if row["type"] else [],
                              "spans": words(" ".join(" ".join(row["words"]).split()), resolve)}
                             for row in block["rows"]]
            finished.append(block)
        elif block["t"] == "para":
            finished.append({"t": "text", "spans": words(" ".join(" ".join(block["row"]["words"]).split()),
                                                          resolve)})
        else:
            finished.append(block)
    if brief:
        summary = words(" ".join(" ".join(" ".join(item["words"]) for item in brief).split()), resolve)
        return {"summary": summary, "blocks": _capped(finished)}
    summary, body = _summary(finished)
    return {"summary": summary, "blocks": _capped(body)}


def doxygen_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A C/C++ doc comment: ``comment_doc``, its words read as Markdown, as Doxygen reads them
    (``*without*``, ``**SEGMENTATION FAULTS**``)."""
    return comment_doc(text, resolve, markdown=True)


_MARKDOWN_INLINE = re.compile(r"[\\`\[<*_]")   # what can open Markdown's inline markup
# Doxygen shows ``\/``, ``\:``, ``\?``, ``\'``, ``\,``, ``\;``, ``\^`` as written (none is one of its
# escapes): their backslash, doubled outside code spans, reads as itself
_DOXYGEN_LITERAL = re.compile(r"(`+).*?(?<!`)\1(?!`)|(?<!\\)\\(?=[',/:;?^])", re.S)


def _markdown_words(text: str, resolve: Resolver = _no_resolver) -> list[dict]:
    """A Doxygen comment's words, read as Doxygen reads their Markdown."""
    if not _MARKDOWN_INLINE.search(text):   # most words: text alone, read without the character loop
        return [{"t": "text", "v": _BLANKS.sub(" ", text)}] if text else []
    if "\\" in text:
        text = _DOXYGEN_LITERAL.sub(lambda match: match.group() if match.group(1) else "\\\\", text)
    return markdown_spans(text, resolve, cross_references=False)


def summary_text(doc: dict) -> str:
    """The summary's words, as plain text (for sentences that quote it)."""
    return "".join(span["v"] for span in doc.get("summary", ()))


def spans_text(spans: Any) -> str:
    """The words of a run of spans, marks and links dropped."""
    if isinstance(spans, str):
        return spans
    return "".join(span.get("v", "") for span in spans or () if isinstance(span, dict))


def block_text(block: dict) -> str:
    """A block's words as plain text: code as written, a list's items as ``- `` lines."""
    kind = block.get("t")
    if kind == "code":
        return block.get("v", "")
    if kind == "list":
        start = block.get("start")
        return "\n".join(f"{'-' if start is None else f'{start + number}.'} {spans_text(item)}"
                         for number, item in enumerate(block.get("items", ())))
    if kind == "table":
        return "\n".join(" | ".join(map(spans_text, row)) for row in [block.get("head", ()), *block.get("rows", ())])
    if kind == "fields":
        rows = [f"{row.get('name', '')}: {spans_text(row.get('spans'))}" for row in block.get("rows", ())]
        return "\n".join([f"{block.get('title', '')}:", *rows])
    return spans_text(block.get("spans"))


def doc_text(doc: dict) -> str:
    """A parsed doc's words as plain text, its summary then its blocks, a blank line apart."""
    return "\n\n".join(part for part in [spans_text(doc.get("summary")), *map(block_text, doc.get("blocks") or ())]
                       if part)


def structured_doc(parser: str, text: str) -> dict | None:
    """A file's own documentation parsed as its definitions' are, when its style has structure a
    page must keep (rustdoc's and Markdown docstrings' Markdown, go doc's headings and code);
    None for the styles whose file comments are prose (reST docstrings, C and JS comments)."""
    if parser == "rust_doc" or parser == "go_doc" or (parser == "python_doc" and is_markdown(text)):
        return PARSERS[parser](text)
    return None


def jsdoc_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A JSDoc or TSDoc comment: its tags as ``comment_doc`` reads them, its prose as Markdown,
    blocks and words, as TypeDoc and JSDoc's own templates render it."""
    return comment_doc(text, resolve, markdown=True, markdown_blocks_too=True)


PARSERS: dict[str, Callable[..., dict]] = {"python_doc": python_doc, "rust_doc": rust_doc, "go_doc": go_doc,
                                           "comment_doc": comment_doc, "doxygen_doc": doxygen_doc,
                                           "jsdoc_doc": jsdoc_doc}
"""The doc-comment styles a language names (``Language.doc_parser``): a doc's text and a name
resolver -> summary and blocks."""

"""A definition's own documentation as a page shows it: a summary and blocks.

Python docstrings are parsed by griffe's docstring parsers (Google, NumPy and
Sphinx styles, told apart by griffe's heuristics); Doxygen comments by their
commands (``\\brief``, ``@param``, ``@return``, ``\\code``, ``\\rst`` ...); any
other comment is prose.  The result is plain data for the templates:

- ``summary``: spans (see below), the first paragraph or ``\\brief``;
- ``blocks``: ``{"t": "text", "spans": [...]}``, ``{"t": "code", "v": text, "lang": "python"}``,
  ``{"t": "list", "items": [spans, ...]}`` and
  ``{"t": "fields", "title": "Parameters", "rows": [{"name", "type", "spans"}]}``.

A span is ``{"t": "text", "v": ...}`` or ``{"t": "code", "v": ..., "link": ...}``: reST roles
(``:class:`~torch.nn.Module```), literals and backticked names become code, linked when
``resolve`` knows the name.  Nothing here escapes: the templates' filters do.
"""
from __future__ import annotations

import inspect
import logging
import re
import textwrap
from collections.abc import Callable

Resolver = Callable[[str], str]   # a name -> a link to its definition, or ""
MAX_BODY_CHARS = 2400             # a definition's documentation beyond its summary, at most

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
# the same as ``(?<![\w`])(?::(?!math:)...)+:`...``, written to start with the colon so the
# search skips to each colon instead of trying the lookbehind at every character
_ROLE_PREFIX = re.compile(r":(?<![\w`]:)(?!math:)[A-Za-z][\w+.-]*(?::(?!math:)[A-Za-z][\w+.-]*)*:`(?=[^`\n]+`)")
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
_SPECIAL_ANYWHERE = re.compile(r">>>|```|~~~|::[ \t]*$|^[ \t]*(?:\.\.[ \t]|[-*+•][ \t]|\d+[.)][ \t]|#\.[ \t])",
                               re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#\.)\s+(?=\S)")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\w*)")


def _no_resolver(name: str) -> str:
    return ""


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
        if titled and titled.group("title"):
            shown, target = titled.group("title"), titled.group("target")
        else:
            target = target.strip().lstrip("!")
            shown = target.lstrip("~.")
            if target.startswith("~"):
                shown = shown.rpartition(".")[2]
            target = target.lstrip("~.")
        role = match.group("role") or ""
        link = "" if role.endswith(("math:", "kbd:", "file:", "envvar:", "samp:")) else _link(target, resolve)
        result.append({"t": "code", "v": shown, "link": link})
    if position < len(text):
        result.append({"t": "text", "v": text[position:]})
    return result


def _link(name: str, resolve: Resolver) -> str:
    name = name.strip().removesuffix("()")
    return resolve(name) if _NAME.fullmatch(name) else ""


def prose_blocks(text: str, resolve: Resolver = _no_resolver) -> list[dict]:
    """reST or Markdown prose as paragraphs and code: ``>>>`` sessions, ``::`` literal blocks,
    ``.. code-block::`` and fenced blocks become code; other directives a labelled paragraph."""
    if not _SPECIAL_ANYWHERE.search(text):   # prose only (most text): paragraphs at blank lines
        return [{"t": "text", "spans": spans(" ".join(paragraph.split()), resolve)}
                for paragraph in _BLANK_LINE.split(text) if paragraph.strip()]
    lines = text.expandtabs().split("\n")
    blocks: list[dict] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            index += 1
            continue
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
                               + spans(" ".join(words.split()), resolve)})
            else:   # ``.. versionadded:: 2.0`` alone
                blocks.append({"t": "text", "spans": [{"t": "text", "v": f"{label}."}]})
            continue
        if _BULLET.match(line):
            items, index = _bullets(lines, index, resolve)
            blocks.append({"t": "list", "items": items})
            continue
        end = index
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
                blocks.append({"t": "text", "spans": spans(paragraph, resolve)})
            if code.strip():
                blocks.append({"t": "code", "v": code, "lang": "python" if code.startswith(">>>") else ""})
            continue
        blocks.append({"t": "text", "spans": spans(paragraph, resolve)})
    return blocks


def _bullets(lines: list[str], index: int, resolve: Resolver) -> tuple[list[list[dict]], int]:
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
    return [spans(" ".join(item), resolve) for item in items], index


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
        if kind == "text":
            size = sum(len(span["v"]) for span in block["spans"])
        elif kind == "code":
            size = len(block["v"])
        elif kind == "list":
            size = sum(len(span["v"]) for item in block["items"] for span in item)
        else:
            size = sum(len(row["name"]) + sum(len(span["v"]) for span in row["spans"]) for row in block["rows"])
        if used and used + size > MAX_BODY_CHARS:
            kept.append({"t": "text", "spans": [{"t": "text", "v": "(The rest is in the source above.)"}]})
            break
        kept.append(block)
        used += size
    return kept


_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")


def signature_spans(signature: str, resolve: Resolver) -> list[dict] | None:
    """A Python signature as code spans, the names in its annotations (after ``:`` and ``->``)
    linked where ``resolve`` knows them; None when nothing in it is linked."""
    for name in set(_IDENTIFIER.findall(signature)):
        if resolve(name):
            break
    else:
        return None   # most signatures name nothing linkable: no need to walk them
    pieces: list[dict] = []
    linked = False
    position = 0
    depth = 0
    annotation = False
    index = 0
    while index < len(signature):
        char = signature[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 1 and not annotation:
            annotation = True
        elif char == "-" and signature.startswith("->", index) and depth == 0:
            annotation = True
            index += 1
        elif (char == "=" or char == ",") and depth == 1:
            annotation = False
        elif annotation and (char.isalpha() or char == "_") and (index == 0 or not (
                signature[index - 1].isalnum() or signature[index - 1] in "_.'\"")):
            match = _IDENTIFIER.match(signature, index)
            assert match is not None   # it starts at a letter or "_"
            name = match.group(0).rstrip(".")
            link = resolve(name)
            if link:
                if index > position:
                    pieces.append({"t": "code", "v": signature[position:index], "link": ""})
                pieces.append({"t": "code", "v": name, "link": link})
                linked = True
                position = index + len(name)
            index += len(name)
            continue
        index += 1
    if not linked:
        return None
    if position < len(signature):
        pieces.append({"t": "code", "v": signature[position:], "link": ""})
    return pieces


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


def python_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A docstring as summary and blocks, its sections (Args, Returns ...) as fields."""
    global _parser
    # roles as plain backticked names: a role in ``x (:class:`T`): ...`` splits griffe's fields
    # (every role ends in ":`": most docstrings have none to find)
    plain = _ROLE_PREFIX.sub("`", text) if ":`" in text else text
    if not _MAY_HAVE_SECTIONS.search(plain):
        # one text section, as griffe gives it, without importing and running the parser
        value = inspect.cleandoc(plain.rstrip())   # what griffe.Docstring holds
        blocks = prose_blocks(value, resolve) if value else []
    else:
        if _parser is None:
            _parser = _griffe()
        griffe = _parser
        try:
            sections = griffe.parse_auto(griffe.Docstring(plain), per_style_options=_STYLE_OPTIONS)
        except Exception:  # noqa: BLE001 - a parser bug on one odd docstring: show it as prose
            sections = None
        if sections is None:
            blocks = prose_blocks(text, resolve)
        else:
            blocks = [block for section in sections for block in _section_blocks(section, resolve)]
    summary, body = _summary(blocks)
    return {"summary": summary, "blocks": _capped(body)}


_REST_ESCAPE = re.compile(r"\\(.)")


def _section_blocks(section, resolve: Resolver) -> list[dict]:
    kind = section.kind.value
    value = section.value
    if kind == "text":
        return prose_blocks(value, resolve)
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
                after.extend(prose_blocks(textwrap.dedent(description[directive.start():]), resolve))
                description = description[:directive.start()]
            # ``:param \\*\\*kwargs:``: reST's escapes are not part of the name (nor of a code span)
            name = _REST_ESCAPE.sub(r"\1", name)
            rows.append({"name": name, "type": spans(f"`{annotation}`", resolve) if annotation else [],
                         "spans": spans(" ".join(description.split()), resolve)})
        fields = [{"t": "fields", "title": section.title or _FIELD_TITLES[kind], "rows": rows}] if rows else []
        return fields + after
    if kind == "examples":
        blocks: list[dict] = []
        for part_kind, part in value:
            if getattr(part_kind, "value", part_kind) == "examples":
                blocks.append({"t": "code", "v": part, "lang": "python"})
            else:
                blocks.extend(prose_blocks(part, resolve))
        return blocks
    if kind == "admonition":
        title = section.title or str(getattr(value, "kind", "")).capitalize()
        inner = prose_blocks(getattr(value, "contents", "") or "", resolve)
        if inner and inner[0]["t"] == "text":
            inner[0] = {"t": "text", "spans": [{"t": "text", "v": f"{title}: "}] + inner[0]["spans"]}
            return inner
        return [{"t": "text", "spans": [{"t": "text", "v": f"{title}:"}]}] + inner
    if kind == "deprecated":
        version = getattr(value, "version", "")
        return [{"t": "text", "spans": [{"t": "text", "v": f"Deprecated since {version}: "}]
                 + spans(getattr(value, "description", "") or "", resolve)}]
    return []


# ---------------------------------------------------------------- Doxygen and plain comments

_COMMAND = re.compile(r"^[\\@](?P<name>[a-zA-Z]+)(?:\[(?P<dir>[^\]]*)\])?\s*(?P<rest>.*)$")
_INLINE_COMMAND = re.compile(r"[\\@](?:c|p|a|e|em|b|ref|link|copydoc)\s+([\w:.~()<>]*[\w)>])")
# JSDoc's and Javadoc's ``{@link Target}``, ``{@link Target|text}``, ``{@code x}``: the text, else the name as code
_BRACED_INLINE = re.compile(r"(?:\[(?P<label>[^\]\n]+)\])?\{@(?:link|linkcode|linkplain|code|literal)\s+"
                            r"(?P<target>[^}|\s]+)(?:[|\s]\s*(?P<text>[^}]*))?\}")
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
                         "category", "group", "this", "fn", "var", "def", "struct", "union"})
_BLOCK_ENDS = {"code": "endcode", "verbatim": "endverbatim", "rst": "endrst", "f[": "f]"}


def _braced_inline(match: re.Match) -> str:
    text = match.group("label") or (match.group("text") or "").strip()
    return text if text else f"`{match.group('target')}`"


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


def comment_doc(text: str, resolve: Resolver = _no_resolver) -> dict:
    """A doc comment (its markers already stripped) as summary and blocks: Doxygen commands
    as fields and labelled paragraphs, ``\\code`` and ``\\rst`` blocks as code and prose."""
    if "\\" not in text and "@" not in text:
        summary, body = _summary(prose_blocks(text, resolve))
        return {"summary": summary, "blocks": _capped(body)}
    if "{@" in text:
        text = _BRACED_INLINE.sub(_braced_inline, text)
    text = _INLINE_COMMAND.sub(lambda match: f"`{match.group(1)}`", _LINK_END.sub("", text))
    brief: list[dict] = []
    blocks: list[dict] = []
    fields: dict[str, dict] = {}
    prose: list[str] = []
    current: dict | None = None   # the field row or labelled paragraph continuation lines go to

    def flush() -> None:
        if prose:
            blocks.extend(prose_blocks("\n".join(prose), resolve))
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
                blocks.append({"t": "text", "spans": spans(rest, resolve)})
            if inner:
                blocks.append({"t": "code", "v": inner, "lang": ""})
            current = None
        elif name in _STRUCTURAL:
            current = None
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
                blocks.extend(prose_blocks(inner, resolve))
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
                              "spans": spans(" ".join(" ".join(row["words"]).split()), resolve)}
                             for row in block["rows"]]
            finished.append(block)
        elif block["t"] == "para":
            finished.append({"t": "text", "spans": spans(" ".join(" ".join(block["row"]["words"]).split()),
                                                          resolve)})
        else:
            finished.append(block)
    if brief:
        summary = spans(" ".join(" ".join(" ".join(item["words"]) for item in brief).split()), resolve)
        return {"summary": summary, "blocks": _capped(finished)}
    summary, body = _summary(finished)
    return {"summary": summary, "blocks": _capped(body)}


def summary_text(doc: dict) -> str:
    """The summary's words, as plain text (for sentences that quote it)."""
    return "".join(span["v"] for span in doc.get("summary", ()))

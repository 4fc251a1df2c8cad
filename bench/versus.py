"""kwdocs beside each language's own documentation tool, on a real project (issue 32).

Usage: python bench/versus.py --project NAME [--list N] [--fetch] [--keep DIR]
       python bench/versus.py --all [--list N] [--fetch]

For each project, the language's own tool says which entities it documents (a name, a kind, a
file, a doc comment): pdoc's Python API for httpx, Doxygen's XML for ujson's C and C++ (with a
Doxyfile written here, EXTRACT_ALL=NO), TypeDoc's JSON for zod, ``go doc -all`` for cobra, and
for clap, which has no rustdoc JSON without a nightly compiler, rustdoc's conventions read with
tree-sitter-rust (public items, variants, public fields and trait items with ``///`` comments).
kwdocs then builds the same tree into a temporary folder, and for each entity the script looks
on the docs page of its file (any file of the package for Go, whose tool names no file) for:

- shown: a definition with the same name, of a kind of the same family (a class or a type, a
  function, method or function-like macro, a variable, constant, field or enumerator);
- same first sentence: the first sentence of its documentation on the page has the words of
  the tool's (markup, link targets and case left out);
- rendered well: its documentation on the page has no escaped Markdown (``\\*\\*``, an escaped
  list or heading marker) and no paragraph broken at a source line (a paragraph that ends
  without punctuation followed by one that starts in lower case).

It prints a table (project, tool, entities, shown, same first sentence, rendered well) and lists
up to ``--list`` entities per project that kwdocs misses or says differently, each with why.

Nothing is downloaded unless ``--fetch`` is given: then pip, npm and apt-get's packages are
read into ``bench/.versus-cache/`` (git-ignored), as bench/README.md says.  The Debian packages
(doxygen, golang-go, golang-github-spf13-cobra-dev, librust-clap-dev) are installed by hand.
"""
from __future__ import annotations

import argparse
import glob
import html
import inspect
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
CACHE = HERE / ".versus-cache"

# kwdocs' definition kinds (the anchors' middle word) a tool's kind may be shown as
TYPES = frozenset({"class", "type"})
CALLABLES = frozenset({"function", "method", "macro"})
VALUES = frozenset({"variable", "constant", "macro"})
NAMESPACES = frozenset({"namespace", "class", "type"})


@dataclass(frozen=True)
class Entity:
    """One entity a documentation tool shows, with its doc comment as the tool read it."""
    path: str            # the file that defines it, relative to the tree; "dir/" = any file there
    name: str            # its qualified name as the tool spells it (``Client.send``, ``a::B::c``)
    kind: str            # the tool's word for it
    accepts: frozenset[str]  # kwdocs kinds it may be shown as
    doc: str             # its documentation, plain text or the tool's markup
    line: int = 0        # where the tool says it is (0: not known)
    body: tuple[str, int] = ("", 0)   # where its definition is, when apart from its declaration
    rendered: bool = False   # its doc is the tool's rendering (Doxygen's XML): marks left in it show as written

    @property
    def short(self) -> str:
        """The last part of its name, the name kwdocs' pages show (a C++ specialization's
        template arguments left out)."""
        return self.parts[-1]

    @property
    def parts(self) -> list[str]:
        """Its name's parts, outer scopes first, without template arguments."""
        name = self.name
        while True:
            bare = re.sub(r"<[^<>]*>", "", name)
            if bare == name:
                break
            name = bare
        return [part.strip() for part in re.split(r"::|\.", name)]


@dataclass
class Definition:
    """One definition on a kwdocs docs page, with the Markdown of its documentation."""
    path: str
    name: str
    kind: str
    line: int
    parents: tuple[str, ...]
    doc: str = ""


@dataclass
class Outcome:
    """What the comparison found for one project."""
    entities: int = 0
    shown: int = 0
    same: int = 0
    rendered: int = 0
    misses: list[tuple[Entity, str]] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)


# ---- kwdocs' pages -------------------------------------------------------------------------------

_ENTRY = re.compile(r'^(?P<indent> *)- <a id="l(?P<line>\d+)-(?P<kind>[a-z]+)-[^"]*"></a>'
                    r'[^*\n]*\*\*`(?P<name>[^`]+)`\*\*')
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def read_page(text: str, path: str) -> list[Definition]:
    """The definitions a docs page lists under Detailed Analysis, nested by indentation, each with
    the lines under its entry (its documentation) up to the next entry or heading."""
    found: list[Definition] = []
    stack: list[tuple[int, str]] = []
    current: Definition | None = None
    body: list[str] = []
    indent = 0
    fence = ""       # the open code fence: it closes on a line of the same marks, at least as many

    def close() -> None:
        if current is not None:
            current.doc = "\n".join(body).strip("\n")

    for raw in text.splitlines():
        marks = _FENCE.match(raw)
        if marks and not fence:
            fence = marks[1]
        elif marks and marks[1].startswith(fence) and not raw.strip()[len(marks[1]):].strip():
            fence = ""
        elif not fence:
            entry = _ENTRY.match(raw)
            if entry or raw.startswith("#"):
                close()
                current, body = None, []
                if not entry:
                    stack = []
                    continue
                indent = len(entry["indent"])
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                current = Definition(path, entry["name"], entry["kind"], int(entry["line"]),
                                     tuple(name for _, name in stack))
                found.append(current)
                stack.append((indent, entry["name"]))
                continue
        if current is not None:
            # the documentation is indented two past its bullet; fenced code may start at column 0
            body.append(raw[indent + 2:] if raw.startswith(" " * (indent + 2)) else raw.lstrip(" "))
    close()
    return found


def read_pages(out: Path) -> dict[str, list[Definition]]:
    """Every docs page of a kwdocs output folder, by its source file's path."""
    pages: dict[str, list[Definition]] = {}
    for page in sorted(out.rglob("*_docs.md")):
        source = page.relative_to(out).as_posix()[: -len("_docs.md")]
        pages[source] = read_page(page.read_text(encoding="utf-8", errors="replace"), source)
    return pages


# ---- documentation text --------------------------------------------------------------------------

_CODE_BLOCK = re.compile(r"^\s*(```|~~~).*?^\s*\1[^\n]*$", re.MULTILINE | re.DOTALL)
_MD_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_ROLE = re.compile(r":[\w:.-]+:`~?(?:[^`<]*<)?([^`>]*)>?`")
_JSDOC_LINK = re.compile(r"\{@(?:link|linkcode|linkplain)\s+([^}|\s]+)(?:[\s|]+([^}]*))?\}")
_HTML_TAG = re.compile(r"</?(?:a|b|i|em|strong|code|pre|p|br|span|div|sup|sub|kbd|tt|ul|ol|li|img)\b[^>]*>",
                       re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def first_paragraph(text: str) -> str:
    """The first paragraph of a doc text, code blocks, tags lines (``@param``) and headings aside."""
    text = _CODE_BLOCK.sub("\n\n", text)
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.strip().splitlines()
                 if not re.match(r"\s*(@\w|#{1,6}\s|[-=]{3,}\s*$|Examples?:?\s*$)", line)]
        if any(_WORD.search(line) for line in lines):
            return " ".join(line.strip() for line in lines)
    return ""


def plain(text: str) -> str:
    """A doc text without its markup: links' and roles' targets, tags, emphasis and code marks."""
    text = _JSDOC_LINK.sub(lambda m: m[2] or m[1], text)
    text = _ROLE.sub(lambda m: m[1].rsplit(".", 1)[-1] if m[0].find("~") >= 0 else m[1], text)
    text = _MD_LINK.sub(r"\1", text)
    text = html.unescape(_HTML_TAG.sub(" ", text))
    return text.replace("\\", "")


def first_sentence(text: str) -> tuple[str, ...]:
    """The words of a doc text's first sentence, lower case, without its markup."""
    paragraph = plain(first_paragraph(text))
    end = _SENTENCE_END.search(paragraph)
    return tuple(word.lower() for word in _WORD.findall(paragraph[: end.start()] if end else paragraph))


# bold, emphasis, code marks, a list or heading marker, a link: Markdown a page printed as text
# (not ``\\_\\_init\\_\\_`` or ``\\*\\*kwargs``, which a plain-text comment means literally)
_ESCAPED = re.compile(r"\\\*\\\*[^*\n]+?\\\*\\\*|\\\*\w[^*\n]*\\\*|\\`|^\s*\\[#*+-]\s|^\s*\d+\\\.\s"
                      r"|\\\[[^\]\n]*\\\](?:\\\[|\(|:)", re.MULTILINE)
_ENDS_SENTENCE = re.compile(r"[.:;!?,)\]`*>|]\s*$")


_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.+)$", re.MULTILINE)
_TOOL_CODE = re.compile(r"```|~~~|^\s*>>> |(?:\A|\n[ \t]*\n)(?: {4,}|\t)\S|@code\b|@example\b")
_PAGE_CODE = re.compile(r"```|~~~|(?:\A|\n[ \t]*\n)(?: {4,}|\t)\S")


def rendering_problem(markdown: str, tool_doc: str = "", rendered: bool = False) -> str:
    """Why a definition's documentation on a page does not read as its author wrote it: escaped
    Markdown, the code of the tool's doc (a fenced or indented block, a doctest) run into the
    prose, a code line shown as a heading, or a paragraph broken at each source line; "" when it
    reads well."""
    text = _CODE_BLOCK.sub("\n\n", markdown)
    text = re.sub(r"`[^`\n]*`", "CODE", text)  # escapes inside code spans are literal text
    if _escaped(text, tool_doc, rendered):
        return "escaped Markdown"
    if _TOOL_CODE.search(_without_quoted_lists(inspect.cleandoc(tool_doc), markdown)) \
            and not _PAGE_CODE.search(markdown):
        return "code run into the text"
    # a heading the tool's doc does not have: a hidden doctest line (rustdoc's ``# use x;``) as a heading
    headings = {h.strip() for h in _HEADING.findall(_CODE_BLOCK.sub("", tool_doc))}
    for heading in _HEADING.findall(_CODE_BLOCK.sub("\n\n", markdown)):
        if heading.strip() not in headings and plain(heading).strip() not in headings:
            return "code line shown as a heading"
    # paragraphs the tool's doc has too (a summary without a full stop) are the author's
    starts = {_words(block)[:3] for block in re.split(r"\n\s*\n", inspect.cleandoc(tool_doc))}
    blocks = [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip()]
    for before, after in itertools.pairwise(blocks):
        last = before.splitlines()[-1]
        if (not _ENDS_SENTENCE.search(last) and re.match(r"[a-z]", after)
                and not re.match(r"\s*(\||#|>)", last) and _words(after)[:3] not in starts):
            return "split per line"
    return ""


_INDENTED_BLOCK = re.compile(r"(?:\A|(?<=\n))[ \t]*\n((?:(?: {4,}|\t)[^\n]*(?:\n|\Z))+)")
_BULLET_LINE = re.compile(r"\s*[-*+]\s+(.*\S)")


def _without_quoted_lists(tool_doc: str, markdown: str) -> str:
    """The tool's doc without the indented blocks that are bullet lists the page shows as a list,
    each item its own (reST reads them so; pdoc, reading Markdown, shows them as code): no code
    is run into the text there."""
    def shown_as_list(match: re.Match) -> str:
        items = [_BULLET_LINE.fullmatch(line) for line in match.group(1).rstrip("\n").split("\n")]
        listed = all(item and re.search(rf"^\s*- {re.escape(item.group(1))}\s*$", markdown, re.MULTILINE)
                     for item in items)
        return "\n" if listed else match.group(0)
    return _INDENTED_BLOCK.sub(shown_as_list, tool_doc)


def _escaped(text: str, tool_doc: str, rendered: bool) -> bool:
    """Does ``text`` show Markdown escaped that the tool shows as markup?  Marks a rendered tool
    doc still holds (Doxygen's ``[val1*][holder]``, no link) are written so there too; in a tool's
    source doc (pdoc, TypeDoc), so is what its Markdown shows literally."""
    if rendered:
        return any(match[0].replace("\\", "").strip() not in tool_doc for match in _ESCAPED.finditer(text))
    return _ESCAPED.search(_literal_in_tool(text, tool_doc)) is not None


def _literal_in_tool(text: str, tool_doc: str) -> str:
    """``text`` without the escapes of what the tool's own doc shows literally, so they are not
    counted as escaped Markdown: a backtick left unpaired in its paragraph (``(i.e. `x))``), and
    ``[a][b]`` whose ``b`` names no link (``[ host ][port]`` in a drawing)."""
    prose = [re.sub(r"``[^`]*``", "", block)
             for block in re.split(r"\n\s*\n", _CODE_BLOCK.sub("", inspect.cleandoc(tool_doc)))]
    if any(block.count("`") % 2 for block in prose):
        text = text.replace("\\`", "`")
    # a label defined (``[b]: url``) or linked inline (``[b](url)``) is a link in the tool's Markdown
    defined = {label.lower() for pair in re.findall(r"^\s*\[([^\]\n]+)\]:|\[([^\]\n]+)\]\(", tool_doc, re.MULTILINE)
               for label in pair if label}

    def unlinked(match: re.Match) -> str:
        label = match.group(2) or match.group(1)
        return match.group(0) if label.strip().lower() in defined else "[]"
    return re.sub(r"\\\[([^\]\n]*)\\\]\\\[([^\]\n]*)\\\]", unlinked, text)


def _words(text: str) -> tuple[str, ...]:
    return tuple(word.lower() for word in _WORD.findall(plain(text)))


# ---- the comparison ------------------------------------------------------------------------------

def find_definition(entity: Entity, pages: dict[str, list[Definition]]) -> Definition | None:
    """The definition on the entity's page (or its package's pages) that shows it: the same name,
    an accepted kind, its parent's name when the tool gives one, the nearest line first."""
    if entity.path.endswith("/") or not entity.path:  # a folder: any file directly in it
        files = [path for path in pages if path.startswith(entity.path) and "/" not in path[len(entity.path):]]
    else:
        files = [entity.path]
    parts = entity.parts
    parent = parts[-2] if len(parts) > 1 else ""
    candidates = [definition for path in files for definition in pages.get(path, ())
                  if definition.name in (entity.short, entity.name) and definition.kind in entity.accepts]
    if not candidates:
        return None

    def rank(definition: Definition) -> tuple[int, int]:
        in_parent = not parent or parent in definition.parents or definition.name == entity.name
        return (0 if in_parent else 1, abs(definition.line - entity.line) if entity.line else 0)

    return min(candidates, key=rank)


def compare(entities: Iterable[Entity], pages: dict[str, list[Definition]]) -> Outcome:
    """Count, for each documented entity, whether kwdocs shows it, with the same first sentence,
    rendered well; keep what it misses or says differently, with why."""
    outcome = Outcome()
    for entity in sorted(set(entities), key=lambda e: (e.path, e.line, e.name)):
        wanted = first_sentence(entity.doc)
        if not wanted:
            continue
        outcome.entities += 1
        definition = find_definition(entity, pages)
        if entity.body[0] and (definition is None or not first_sentence(definition.doc)):
            definition = find_definition(replace(entity, path=entity.body[0], line=entity.body[1]),
                                         pages) or definition
        if definition is None:
            outcome.misses.append((entity, "not shown"))
            outcome.reasons[f"not shown: {entity.kind}"] += 1
            continue
        outcome.shown += 1
        said = first_sentence(definition.doc)
        if said == wanted or (said and said[: len(wanted)] == wanted):
            outcome.same += 1
        else:
            why = "no documentation" if not said else "says: " + " ".join(said[:16])
            outcome.misses.append((entity, why))
            outcome.reasons[f"{'no documentation' if not said else 'different first sentence'}: {entity.kind}"] += 1
        problem = rendering_problem(definition.doc, entity.doc, entity.rendered) if definition.doc else ""
        if problem:
            outcome.misses.append((entity, problem))
            outcome.reasons[problem] += 1
        else:
            outcome.rendered += 1
    return outcome


# ---- the tools -----------------------------------------------------------------------------------

def pdoc_entities(tree: Path, package: str) -> list[Entity]:
    """What pdoc documents of a package: public modules, their members (``__all__`` when there is
    one) and those members' own members, each at the file that defines it, read with its API."""
    import pdoc.doc  # the bench extra; imported here so the rest runs without it

    sys.path.insert(0, str(tree))
    try:
        root = pdoc.doc.Module.from_name(package)
    finally:
        sys.path.remove(str(tree))
    entities: list[Entity] = []
    seen: set[tuple[str, str]] = set()

    def location(doc: pdoc.doc.Doc) -> tuple[str, int]:  # type: ignore[type-arg]
        """The file and line that define it: httpx sets its classes' ``__module__`` to the package,
        where pdoc's source_file points, so a class is looked for in the package's modules."""
        files = [doc.source_file] if doc.source_file else []
        if isinstance(doc, pdoc.doc.Class):
            files = [Path(m.__file__) for n, m in sorted(sys.modules.items())
                     if (n == package or n.startswith(package + ".")) and getattr(m, "__file__", None)
                     and vars(m).get(doc.name) is doc.obj] + files
        for source in files:
            try:
                relative = Path(source).resolve().relative_to(tree.resolve()).as_posix()
            except ValueError:
                continue
            text = (tree / relative).read_text(encoding="utf-8")
            defined = re.search(rf"^[ \t]*class {re.escape(doc.name)}\b", text, re.MULTILINE)
            if not isinstance(doc, pdoc.doc.Class):
                return relative, doc.source_lines[0] if doc.source_lines else 0
            if defined:
                return relative, text.count("\n", 0, defined.start()) + 1
        return "", 0

    def visit(namespace: pdoc.doc.Namespace, all_names: tuple[str, ...]) -> None:  # type: ignore[type-arg]
        """pdoc's is_public: a name without ``_``, ``__init__``, or one ``__all__`` names."""
        members = namespace.members if isinstance(namespace, pdoc.doc.Module) else namespace.own_members
        for member in (members.values() if isinstance(members, dict) else members):
            if member.name.startswith("_") and member.name != "__init__" and member.name not in all_names:
                continue
            if isinstance(member, pdoc.doc.Module) or member.taken_from in seen:
                continue
            seen.add(member.taken_from)
            path, line = location(member)
            if not path:
                continue
            if isinstance(member, pdoc.doc.Class):
                kind, accepts = "class", TYPES
            elif isinstance(member, pdoc.doc.Function):
                kind, accepts = "function", CALLABLES
            else:
                # a type alias and a property are variables to pdoc
                kind, accepts = "variable", VALUES | CALLABLES | {"type"}
            own = getattr(member.obj, "__doc__", None) if kind != "variable" else member.docstring
            if kind == "class" and own == getattr(type(member.obj), "__doc__", None):
                own = ""          # a class without a docstring shows its metaclass's
            entities.append(Entity(path, member.taken_from[1], kind, accepts, member.docstring if own else "", line))
            if isinstance(member, pdoc.doc.Class):
                visit(member, all_names)

    def modules(module: pdoc.doc.Module) -> Iterator[pdoc.doc.Module]:
        yield module
        for sub in module.submodules:
            yield from modules(sub)

    for module in modules(root):
        visit(module, tuple(getattr(module.obj, "__all__", ())))
    return entities


DOXYFILE = """\
INPUT = {inputs}
RECURSIVE = YES
EXCLUDE_PATTERNS = */test/* */tests/*
FILE_PATTERNS = *.c *.h *.cc *.cpp *.hpp
GENERATE_XML = YES
GENERATE_HTML = NO
GENERATE_LATEX = NO
EXTRACT_ALL = NO
EXTRACT_STATIC = YES
QUIET = YES
WARNINGS = NO
OUTPUT_DIRECTORY = {output}
STRIP_FROM_PATH = {tree}
ALIASES = "rst=\\verbatim" "endrst=\\endverbatim"
"""


def _xml_text(node: ET.Element | None) -> str:
    """A Doxygen description as text, one paragraph per ``<para>`` (a verbatim block keeps its
    lines), parameter lists and return sections left out (their words are not the summary)."""
    if node is None:
        return ""
    paragraphs = []
    for para in node.iter("para"):
        parts: list[str] = [para.text or ""]
        for child in para:
            if child.tag == "verbatim":
                parts.append("\n\n" + (child.text or "") + "\n\n")
            elif child.tag in ("itemizedlist", "orderedlist"):
                parts.append("\n\n")   # a list is blocks of its own (its items' paras are read below)
            elif child.tag not in ("parameterlist", "simplesect", "programlisting", "para"):
                parts.append("".join(child.itertext()))
            parts.append(child.tail or "")
        for block in re.split(r"\n[ \t]*\n", "".join(parts)):
            text = "\n".join(" ".join(line.split()) for line in block.strip().splitlines())
            if text:
                paragraphs.append(text)
    return "\n\n".join(paragraphs)


def _relative(tree: Path, path: str) -> str:
    path = Path(path).as_posix() if path else ""
    return path[len(tree.as_posix()) + 1:] if path.startswith(tree.as_posix() + "/") else path


def doxygen_entities(tree: Path, inputs: list[str], work: Path) -> list[Entity]:
    """The entities Doxygen documents (EXTRACT_ALL=NO), read from its XML."""
    (work / "Doxyfile").write_text(DOXYFILE.format(inputs=" ".join(str(tree / i) for i in inputs),
                                                   output=work, tree=tree))
    subprocess.run(["doxygen", str(work / "Doxyfile")], cwd=work, check=True, capture_output=True)
    entities: dict[str, Entity] = {}
    kinds = {"class": TYPES, "struct": TYPES, "union": TYPES, "namespace": NAMESPACES, "function": CALLABLES,
             "define": CALLABLES | VALUES, "variable": VALUES, "enum": TYPES, "enumvalue": VALUES,
             "typedef": TYPES, "friend": CALLABLES}

    def add(ident: str, name: str, kind: str, node: ET.Element) -> None:
        where = node.find("location")
        if kind not in kinds or where is None or ident in entities:
            return
        doc = "\n\n".join(filter(None, (_xml_text(node.find("briefdescription")),
                                        _xml_text(node.find("detaileddescription")))))
        path, body = (_relative(tree, where.get(attribute, "")) for attribute in ("file", "bodyfile"))
        # a function declared in one file and defined in another: Doxygen joins the comments of both
        apart = (body, int(where.get("bodystart", "0"))) if body and body != path else ("", 0)
        entities[ident] = Entity(path, name, kind, kinds[kind], doc, int(where.get("line", "0")), apart, True)

    for xml in sorted((work / "xml").glob("*.xml")):
        if xml.name == "index.xml":
            continue
        for compound in ET.parse(xml).getroot().iter("compounddef"):
            kind = compound.get("kind", "")
            scope = compound.findtext("compoundname") or ""
            if kind != "file":
                add(compound.get("id", ""), scope, kind, compound)
            for member in compound.iter("memberdef"):
                qualified = member.findtext("name") or ""
                if kind != "file":
                    qualified = f"{scope}::{qualified}"
                add(member.get("id", ""), qualified, member.get("kind", ""), member)
                for value in member.iter("enumvalue"):
                    value_where = ET.SubElement(value, "location", member.find("location").attrib)  # type: ignore[union-attr]
                    value_where.set("line", member.find("location").get("line", "0"))  # type: ignore[union-attr]
                    add(value.get("id", ""), f"{qualified}::{value.findtext('name')}", "enumvalue", value)
    return list(entities.values())


# TypeDoc's ReflectionKind numbers
_TS_KINDS = {2: ("module", NAMESPACES), 4: ("namespace", NAMESPACES), 8: ("enum", TYPES),
             16: ("enum member", VALUES), 32: ("variable", VALUES | CALLABLES), 64: ("function", CALLABLES),
             128: ("class", TYPES), 256: ("interface", TYPES), 512: ("constructor", CALLABLES),
             1024: ("property", VALUES | CALLABLES), 2048: ("method", CALLABLES), 262144: ("accessor", CALLABLES),
             2097152: ("type alias", TYPES)}


def _ts_comment(reflection: dict) -> str:  # type: ignore[type-arg]
    """A reflection's summary text (its own, or its first signature's, where TypeDoc keeps a
    function's comment)."""
    comment = reflection.get("comment")
    for signature in list(reflection.get("signatures", ())) + ([reflection["getSignature"]]
                                                         if "getSignature" in reflection else []):
        comment = comment or signature.get("comment")
    if not comment:
        return ""
    return "".join(part.get("text", "") for part in comment.get("summary", ()))


def typedoc_entities(tree: Path, project: dict, parents: tuple[str, ...] = ()) -> list[Entity]:  # type: ignore[type-arg]
    """The entities of TypeDoc's JSON: every reflection it documents with a comment, at its source,
    once (entry points re-export the same declarations)."""
    found = {(e.path, e.line, e.short, e.kind): e for e in _typedoc_reflections(tree, project, parents)}
    return list(found.values())


def _own_comment(tree: Path, path: str, line: int) -> bool:
    """Whether a doc comment ends right above the line (TypeDoc copies an overridden member's
    comment to a member without one)."""
    try:
        lines = (tree / path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return True
    return line >= 2 and lines[line - 2].rstrip().endswith("*/")


def _declared_override(tree: Path, path: str, line: int) -> bool:
    """Whether the member on the line is declared ``override`` (TypeScript's keyword)."""
    try:
        lines = (tree / path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return 1 <= line <= len(lines) and re.search(r"\boverride\b", lines[line - 1]) is not None


def _typedoc_reflections(tree: Path, project: dict, parents: tuple[str, ...]) -> list[Entity]:  # type: ignore[type-arg]
    entities: list[Entity] = []
    for child in project.get("children", ()):
        kind, accepts = _TS_KINDS.get(child.get("kind", 0), ("", frozenset()))
        sources = child.get("sources") or [{}]
        path, line = sources[0].get("fileName", ""), sources[0].get("line", 0)
        inherited = "inheritedFrom" in child   # listed on each subclass; counted where it is written
        if kind and path and kind != "module" and not inherited and not child.get("flags", {}).get("isExternal"):
            path = path[path.index("src/"):] if "src/" in path else path
            # a member without a comment of its own shows the one it overrides in TypeDoc: not
            # documented here (pdoc's inherited docstrings are not counted either); an ``override``
            # of a library's member (``toString``) has no "overwrites" in the JSON, but the same copy
            copied = ("overwrites" in child or _declared_override(tree, path, line)) and not _own_comment(
                tree, path, line)
            entities.append(Entity(path, ".".join(parents + (child["name"],)), kind, accepts,
                                   "" if copied else _ts_comment(child), line))
        entities.extend(_typedoc_reflections(tree, child, parents + ((child["name"],) if kind != "module" else ())))
    return entities


def godoc_entities(text: str, package_dir: str) -> list[Entity]:
    """The entities ``go doc -all`` prints: functions, types and methods with their doc, and the
    names of documented ``const``/``var`` declarations; Go's tool names no file, so the package's
    folder is where they are looked for."""
    entities: list[Entity] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        declaration = re.match(r"(func|type|const|var)\b(.*)", line)
        index += 1
        if not declaration:
            continue
        names: list[tuple[str, str, frozenset[str]]] = []
        if declaration[1] == "func":
            method = re.match(r" \(\w*\s*\*?(\w+)(?:\[[^\]]*\])?\) (\w+)", declaration[2])
            plain_func = re.match(r" (\w+)", declaration[2])
            if method:
                names.append((f"{method[1]}.{method[2]}", "method", CALLABLES))
            elif plain_func:
                names.append((plain_func[1], "function", CALLABLES))
        elif declaration[1] == "type":
            match = re.match(r" (\w+)", declaration[2])
            if match:
                names.append((match[1], "type", TYPES))
        grouped = declaration[2].strip() in ("(", "{") or declaration[2].rstrip().endswith(("(", "{"))
        if grouped:   # a block: its names (const/var), up to the closing line
            while index < len(lines) and not lines[index].startswith((")", "}")):
                member = re.match(r"\t(\w+)\b", lines[index])
                if member and declaration[1] in ("const", "var") and member[1][0].isupper():
                    names.append((member[1], declaration[1], VALUES))
                index += 1
            index += 1
        elif declaration[1] in ("const", "var"):
            match = re.match(r" (\w+)", declaration[2])
            if match:
                names.append((match[1], declaration[1], VALUES))
        doc: list[str] = []
        while index < len(lines) and (lines[index].startswith("    ") or not lines[index].strip()):
            if not lines[index].strip() and index + 1 < len(lines) and not lines[index + 1].startswith("    "):
                break
            doc.append(lines[index][4:])
            index += 1
        for name, kind, accepts in names:
            if name.split(".")[-1][0].isupper():
                entities.append(Entity(package_dir, name, kind, accepts, "\n".join(doc).strip()))
    return entities


_RUST_ITEMS = {"function_item": ("fn", CALLABLES), "function_signature_item": ("fn", CALLABLES),
               "struct_item": ("struct", TYPES), "enum_item": ("enum", TYPES), "union_item": ("union", TYPES),
               "trait_item": ("trait", TYPES), "const_item": ("const", VALUES), "static_item": ("static", VALUES),
               "type_item": ("type", TYPES), "associated_type": ("type", TYPES), "mod_item": ("mod", NAMESPACES),
               "macro_definition": ("macro_rules!", CALLABLES), "enum_variant": ("variant", VALUES | TYPES),
               "field_declaration": ("field", VALUES)}


def rust_entities(tree: Path, files: Iterable[Path]) -> list[Entity]:
    """Rust items rustdoc would document with a ``///`` comment: ``pub`` items (not ``pub(crate)``),
    ``#[macro_export]`` macros, variants of public enums, ``pub`` fields, trait items and ``pub``
    items of inherent impls, read with tree-sitter-rust."""
    import tree_sitter_rust
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_rust.language()))
    entities: list[Entity] = []
    for source in files:
        entities.extend(_rust_file(parser, source.read_bytes(), source.relative_to(tree).as_posix()))
    return entities


def _rust_file(parser, data: bytes, relative: str) -> list[Entity]:  # type: ignore[no-untyped-def]
    """The documented public items of one Rust file."""
    entities: list[Entity] = []

    def text(node) -> str:  # type: ignore[no-untyped-def]
        return data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def docs_and_attributes(node) -> tuple[str, str]:  # type: ignore[no-untyped-def]
        """The ``///`` comment above a node (attributes between them skipped) and its attributes."""
        doc: list[str] = []
        attributes: list[str] = []
        sibling = node.prev_sibling
        while sibling is not None and sibling.type in ("line_comment", "block_comment", "attribute_item"):
            body = text(sibling)
            if sibling.type == "attribute_item":
                attributes.append(body)
            elif body.startswith("///") and not body.startswith("////"):
                doc.append(body[3:].rstrip("\n"))
            elif body.startswith("/**") and not body.startswith("/***"):
                doc.append(re.sub(r"(?m)^\s*\* ?", "", body[3:-2]))
            else:
                break
            sibling = sibling.prev_sibling
        lines = [line[1:] if line.startswith(" ") else line for line in reversed(doc)]
        return "\n".join(lines), " ".join(attributes)

    def public(node) -> bool:  # type: ignore[no-untyped-def]
        for child in node.children:
            if child.type == "visibility_modifier":
                return text(child) == "pub"
        return False

    def name_of(node) -> str:  # type: ignore[no-untyped-def]
        named = node.child_by_field_name("name")
        return text(named) if named is not None else ""

    def walk(node, scope: tuple[str, ...], exposed: str) -> None:  # type: ignore[no-untyped-def]
        """``exposed``: "all" inside a trait or a public enum, "pub" where ``pub`` decides."""
        for child in node.named_children:
            kind = _RUST_ITEMS.get(child.type)
            name = name_of(child)
            if kind and name:
                doc, attributes = docs_and_attributes(child)
                shown = (exposed == "all" or public(child)
                         or (child.type == "macro_definition" and "macro_export" in attributes))
                if shown and "doc(hidden)" not in attributes:
                    entities.append(Entity(relative, "::".join(scope + (name,)), kind[0], kind[1], doc,
                                           child.start_point[0] + 1))
                    if child.type in ("trait_item", "enum_item"):
                        walk(child.child_by_field_name("body") or child, scope + (name,), "all")
                    elif child.type in ("struct_item", "union_item"):
                        walk(child.child_by_field_name("body") or child, scope + (name,), "pub")
                    elif child.type == "mod_item" and child.child_by_field_name("body") is not None:
                        walk(child.child_by_field_name("body"), scope + (name,), "pub")
            elif child.type == "impl_item" and child.child_by_field_name("trait") is None:
                target = child.child_by_field_name("type")
                base = re.sub(r"<.*", "", text(target)) if target is not None else ""
                walk(child.child_by_field_name("body") or child, scope + (base,), "pub")
            elif child.type in ("declaration_list", "field_declaration_list", "enum_variant_list"):
                walk(child, scope, exposed)

    walk(parser.parse(data).root_node, (), "pub")
    return entities


# ---- the projects --------------------------------------------------------------------------------

def _run(command: list[str], cwd: Path | None = None) -> None:
    print("+", " ".join(command), file=sys.stderr)
    subprocess.run(command, cwd=cwd, check=True)


def _unpack(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


def _python_with_pip() -> str:
    """The first of this interpreter, its venv's base interpreter and ``python3`` whose pip runs."""
    for python in (sys.executable, getattr(sys, "_base_executable", ""), shutil.which("python3") or ""):
        if python and subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return python
    raise Missing("no Python with pip to download sdists with (Debian: apt-get install python3-pip)")


def _sdist(name: str, version: str, fetch: bool) -> Path:
    """A PyPI sdist unpacked in the cache (downloaded with pip when ``fetch``)."""
    pattern = f"{name}-{version}" if version else f"{name}-[0-9]*"
    found = sorted(path for path in CACHE.glob(pattern) if path.is_dir())
    if not found and fetch:
        CACHE.mkdir(exist_ok=True)
        spec = f"{name}=={version}" if version else name
        # this interpreter's pip, or its base interpreter's (a venv made --without-pip has none,
        # and "python3" on PATH is that venv's once it is activated)
        pip = [_python_with_pip(), "-m", "pip"]
        _run([*pip, "download", "-q", "--no-binary", ":all:", "--no-deps", spec, "-d", str(CACHE)])
        for archive in sorted(CACHE.glob(f"{pattern}.tar.gz")):
            _unpack(archive, CACHE)
        found = sorted(path for path in CACHE.glob(pattern) if path.is_dir())
    if not found:
        raise Missing(f"no {name} sdist in {CACHE} (run with --fetch)")
    return found[-1]


class Missing(Exception):
    """A project or tool is not on this machine."""


def _need(program: str, package: str) -> None:
    if shutil.which(program) is None:
        raise Missing(f"{program} is not installed (apt-get install -y {package})")


def _kwdocs(tree: Path, out: Path, includes: list[str]) -> dict[str, list[Definition]]:
    command = [sys.executable, "-m", "kwdocs", "build", "--src", str(tree), "--out", str(out), "-q"]
    for pattern in includes:
        command += ["--include", pattern]
    subprocess.run(command, check=True, cwd=out.parent)
    return read_pages(out)


def httpx_project(fetch: bool, work: Path) -> tuple[Path, list[str], list[Entity]]:
    tree = _sdist("httpx", "0.28.1", fetch)
    return tree, ["httpx/**"], pdoc_entities(tree, "httpx")


def ujson_project(fetch: bool, work: Path) -> tuple[Path, list[str], list[Entity]]:
    _need("doxygen", "doxygen")
    tree = _sdist("ujson", "", fetch)
    inputs = [i for i in ("lib", "python", "src/ujson") if (tree / i).is_dir()]
    return tree, [f"{i}/**" for i in inputs], doxygen_entities(tree, inputs, work)


def pybind11_project(fetch: bool, work: Path) -> tuple[Path, list[str], list[Entity]]:
    """A C++ project with Doxygen comments, beside ujson, whose sources have none for Doxygen."""
    _need("doxygen", "doxygen")
    tree = _sdist("pybind11", "", fetch)
    return tree, ["include/**"], doxygen_entities(tree, ["include"], work)


def zod_project(fetch: bool, work: Path) -> tuple[Path, list[str], list[Entity]]:
    typedoc = CACHE / "typedoc" / "node_modules" / "typedoc" / "bin" / "typedoc"
    found = sorted(path for path in CACHE.glob("zod-[0-9]*") if path.is_dir())
    if fetch and not found:
        CACHE.mkdir(exist_ok=True)
        _run(["npm", "pack", "--silent", "zod"], cwd=CACHE)
        archive = sorted(CACHE.glob("zod-*.tgz"))[-1]
        _unpack(archive, work)
        shutil.move(str(work / "package"), CACHE / archive.name[: -len(".tgz")])
        found = sorted(path for path in CACHE.glob("zod-[0-9]*") if path.is_dir())
    if fetch and not typedoc.exists():
        (CACHE / "typedoc").mkdir(parents=True, exist_ok=True)
        _run(["npm", "install", "--silent", "typedoc", "typescript"], cwd=CACHE / "typedoc")
    if not found or not typedoc.exists():
        raise Missing(f"no zod package or typedoc in {CACHE} (run with --fetch)")
    tree = found[-1]
    entries = [str(tree / "src" / e) for e in ("index.ts", "v4/core/index.ts", "v4/mini/index.ts", "v3/index.ts")]
    (work / "tsconfig.json").write_text(json.dumps({
        "compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
                            "strict": True, "skipLibCheck": True, "noEmit": True, "lib": ["ES2022", "DOM"]},
        "include": [str(tree / "src" / "**" / "*.ts")]}))
    _run(["node", str(typedoc), "--tsconfig", str(work / "tsconfig.json"), "--entryPoints", *entries,
          "--skipErrorChecking", "--logLevel", "Error", "--json", str(work / "typedoc.json")], cwd=work)
    project = json.loads((work / "typedoc.json").read_text())
    return tree, ["src/**"], typedoc_entities(tree, project)


def cobra_project(fetch: bool, work: Path) -> tuple[Path, list[str], list[Entity]]:
    _need("go", "golang-go")
    tree = Path("/usr/share/gocode/src/github.com/spf13/cobra")
    if not tree.is_dir():
        raise Missing(f"no {tree} (apt-get install -y golang-github-spf13-cobra-dev)")
    # Debian's Go sources are a GOPATH tree: read them as one, offline, caching in the scratch folder
    environment = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off", GOFLAGS="", GOPROXY="off",
                       GOCACHE=str(work / "gocache"))
    done = subprocess.run(["go", "doc", "-all", "."], cwd=tree, env=environment, capture_output=True, text=True,
                          check=True)
    return tree, ["*.go"], godoc_entities(done.stdout, "")


def clap_project(fetch: bool, work: Path) -> tuple[Path, list[str], list[Entity]]:
    found = sorted(glob.glob("/usr/share/cargo/registry/clap-4*"))
    if not found:
        raise Missing("no clap 4 under /usr/share/cargo/registry (apt-get install -y librust-clap-dev)")
    tree = Path(found[-1])
    return tree, ["src/**"], rust_entities(tree, sorted((tree / "src").rglob("*.rs")))


PROJECTS: dict[str, tuple[str, Callable[[bool, Path], tuple[Path, list[str], list[Entity]]]]] = {
    "httpx": ("pdoc", httpx_project),
    "ujson": ("Doxygen XML", ujson_project),
    "pybind11": ("Doxygen XML", pybind11_project),
    "zod": ("TypeDoc JSON", zod_project),
    "cobra": ("go doc -all", cobra_project),
    "clap": ("rustdoc conventions", clap_project),
}


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--project", choices=sorted(PROJECTS))
    which.add_argument("--all", action="store_true")
    parser.add_argument("--list", type=int, default=20, metavar="N", help="misses listed per project")
    parser.add_argument("--fetch", action="store_true", help="download the projects and tools into the cache")
    parser.add_argument("--keep", type=Path, help="build kwdocs' pages here and keep them")
    args = parser.parse_args(argv)
    names = sorted(PROJECTS) if args.all else [args.project]
    rows = []
    details = []
    for name in names:
        tool, project = PROJECTS[name]
        with tempfile.TemporaryDirectory(prefix="versus-") as scratch:
            work = Path(scratch)
            try:
                tree, includes, entities = project(args.fetch, work)
            except Missing as missing:
                print(f"{name}: {missing}", file=sys.stderr)
                continue
            out = (args.keep / name) if args.keep else work / "out"
            out.parent.mkdir(parents=True, exist_ok=True)
            outcome = compare(entities, _kwdocs(tree, out, includes))
        rows.append((name, tool, outcome))
        details.append((name, outcome))
    print("| project | tool | entities | shown | same first sentence | rendered well |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, tool, o in rows:
        print(f"| {name} | {tool} | {o.entities} | {o.shown} ({percent(o.shown, o.entities)}) "
              f"| {o.same} ({percent(o.same, o.entities)}) | {o.rendered} ({percent(o.rendered, o.shown)}) |")
    for name, o in details:
        print(f"\n{name}: what kwdocs misses or says differently, by class")
        for reason, count in o.reasons.most_common():
            print(f"  {count:5d}  {reason}")
        for entity, why in o.misses[: args.list]:
            print(f"  {entity.path}:{entity.line} {entity.kind} {entity.name}: {why}"
                  f" (tool: {' '.join(first_sentence(entity.doc)[:16])})")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())

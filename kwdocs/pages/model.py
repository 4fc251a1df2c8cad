"""Page models: the plain data each template renders, built from facts.

Everything a page shows is decided here (what to list, in which order, which
link goes where); the templates only lay it out.  Models are plain dicts, so a
page's inputs can be hashed to decide whether it must be rendered again.
"""
from __future__ import annotations

import functools
import heapq
import posixpath
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from pathlib import PurePosixPath
from typing import Any

from kwdocs import layout
from kwdocs.extract import not_doc
from kwdocs.extract.links import module_file
from kwdocs.facts import Facts
from kwdocs.languages import TEXT, Language, by_id, group_order, kind_group
from kwdocs.pages import coverage, diagrams, docstrings
from kwdocs.pages.diagrams import base_names as _class_bases

RELATED_LIMIT = 10
SOURCE_SECTION = "Original Source"
MAIN_DEFINITIONS_LIMIT = 40
MAIN_DEFINITION_KINDS = ("class", "function", "namespace")   # what a folder's Main Definitions lists
USED_BY_LIMIT = 300   # a core header has thousands of users: list this many, count the rest
# tests that reach a file only through a package re-exporting it: every test importing a top-level
# package would be listed on every module under it; the count says how many more there are
INDIRECT_TESTS_LIMIT = 10
DEFINITION_KINDS = ("namespace", "class", "function", "method", "macro", "type",
                    "constant", "variable", "heading", "key", "target")
_DEFINITION_KINDS = frozenset(DEFINITION_KINDS)
# definitions another file can name (import, call, include): its source links there, and it lists those uses
LINKED_KINDS = frozenset(("namespace", "class", "function", "macro", "type", "constant", "variable"))
USES_SHOWN = 5      # uses a Markdown entry lists (the model holds more, with the count of the rest)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINK_TARGETS = re.compile(r"\]\([^)\s]*\)|<a id=\"[^\"]*\"></a>")  # not words a reader sees


def folder_display(folder: str) -> str:
    return folder or "."


def docs_link(page: str, path: str) -> str:
    """``layout.link`` from ``page`` to ``path``'s docs page."""
    return _docs_link(page[:page.rfind("/") + 1], path)


@lru_cache(maxsize=1 << 15)   # the pages of a folder link the same files (users, tests, imports) again and again
def _docs_link(page_folder: str, path: str) -> str:
    """From any page of ``page_folder`` (ending in "/", or "" for the root) to ``path``'s docs page."""
    return layout.link(page_folder, layout.docs_page(path))


@dataclass(frozen=True)
class SourceView:
    """The part of a file's text a page embeds, and what was left out."""

    text: str | None
    shown_lines: int = 0
    shown_bytes: int = 0
    omitted_bytes: int = 0
    masked_lines: tuple[int, ...] = ()


def cut_source(text: str | None, size: int, limit: int, masked_lines: tuple[int, ...] = ()) -> SourceView:
    """Cut text at ``limit`` bytes (at a line end), saying how much was left out."""
    if text is None:
        return SourceView(None)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return SourceView(text, text.count("\n"), len(data), 0, masked_lines)
    cut = data[:limit].decode("utf-8", "ignore")
    if "\n" in cut:
        cut = cut[: cut.rindex("\n") + 1]
    shown = len(cut.encode("utf-8", "surrogatepass"))
    return SourceView(cut, cut.count("\n"), shown, max(size - shown, len(data) - shown), masked_lines)


class Siblings:
    """The files of one folder by stem, indexed once so each file's related list is cheap."""

    def __init__(self, names: list[str]):
        self.by_stem: dict[str, list[str]] = {}
        for name in sorted(names):
            self.by_stem.setdefault(_stem(name), []).append(name)

    def same_stem(self, name: str) -> list[str]:
        """The other files named like ``name`` (``x.h`` for ``x.cpp``, ``test_x.py`` for ``x.py``)."""
        return [other for other in self.by_stem.get(_stem(name), []) if other != name]

    def related(self, rel: str, links: dict | None, limit: int = RELATED_LIMIT) -> dict:
        """``rel``'s related files by the import graph: what it imports (in its order), what
        imports it, then files of its folder with its stem; the first ``limit`` as
        ``[path, why]``, and how many more there are."""
        folder = posixpath.dirname(rel)
        chosen: dict[str, str] = {}
        for dep in (links or {}).get("deps", []):
            if dep.get("target"):
                chosen.setdefault(dep["target"], "imported")
            for target in (dep.get("name_targets") or {}).values():
                chosen.setdefault(target, "imported")
        for user in (links or {}).get("used_by", []):
            chosen.setdefault(user, "imports it")
        for name in self.same_stem(posixpath.basename(rel)):
            chosen.setdefault(posixpath.join(folder, name), "same name")
        chosen.pop(rel, None)
        return {"files": [[path, why] for path, why in list(chosen.items())[:limit]],
                "more": max(0, len(chosen) - limit)}


@lru_cache(maxsize=8)
def siblings_of(names: tuple[str, ...]) -> Siblings:
    """One ``Siblings`` per folder and process: a large folder is rendered as many
    units, each given all the folder's names, and indexing them took longer than the unit."""
    return Siblings(list(names))


def _stem(name: str) -> str:
    return name.split(".", 1)[0].lower().removeprefix("test_")


_OWN_LABELS = frozenset({"field", "attribute", "property", "deduction guide"})


def kind_label(symbol: Mapping) -> str:
    """What a definition is, in words: ``function``, ``kernel function``, ``method declaration``."""
    detail = symbol.get("detail")
    if not detail:
        return symbol["kind"]
    # a class's detail is its kind (``struct``), a record's field and a property are labelled so
    if symbol["kind"] == "class" or detail in _OWN_LABELS:
        return detail
    # a prototype without its body is a "function declaration", as C and C++ readers say it
    return f"{symbol['kind']} {detail}" if detail == "declaration" else f"{detail} {symbol['kind']}"


_CONTAINERS = frozenset(("class", "namespace", "type"))


def _holders(symbols: Sequence[Mapping]) -> tuple[list[int], Sequence[int]]:
    """The index of the definition each symbol is listed under (-1: none, at the top), and the
    order the symbols are taken in: the file's, a line's class, namespace or type before the
    rest of the line (``enum class E { A, B };``'s ``A`` sorts before ``E``).

    A member goes under the latest definition its parent names: a class, namespace or type, or a
    top-level definition (an object literal's members).  A Go method or a C++ method defined
    out of line may come after other definitions: it is listed under its type all the same, as
    godoc and Doxygen list it, never under whatever came just before; a Go method declared above
    its type goes under it too.  A parent the file does not define (``TensorMaker::make_tensor``
    of a class in a header) is looked for without its last part (the namespace ``c10`` of
    ``c10::GradMode``), else under the namespace the definition before it is in
    (``namespace at {``), else at the top.
    """
    count = len(symbols)
    taken: Sequence[int] = sorted(range(count), key=_taking_order(symbols)) if _resorted(symbols) else range(count)
    named: dict[str, int] = {}
    holders = [-1] * count
    types_below: dict[str, list[int]] | None = None    # made when a member's parent is not found
    last = -1
    for index in taken:
        symbol = symbols[index]
        kind, name, parent = symbol["kind"], symbol["name"], symbol.get("parent")
        if parent:
            holder = named.get(parent, -1)
            look = parent
            while holder < 0 and look:
                cut = max(look.rfind("::"), look.rfind("."))
                look = look[:cut] if cut > 0 else ""
                holder = named.get(look, -1) if look else -1
            if holder < 0:
                if types_below is None:     # top-level types by name, for a member declared above its type
                    types_below = _types_below(symbols, taken)
                # none of them taken yet (it would be named): the first is the nearest below
                later = types_below.get(parent) if kind not in _CONTAINERS else None
                holder = later[0] if later else _namespace_around(symbols, holders, last)
            holders[index] = holder
        last = index
        if kind in _CONTAINERS or (not parent and kind in _DEFINITION_KINDS):
            named[name] = index
            if parent:
                named[f"{parent}.{name}"] = named[f"{parent}::{name}"] = index
        if kind == "function" or kind == "method":   # its local classes and functions go under it
            named[f"{parent}.{name}.<locals>" if parent else f"{name}.<locals>"] = index
    return holders, taken


def _resorted(symbols: Sequence[Mapping]) -> bool:
    """Whether ``_holders`` must sort the symbols: out of line order, or a container after
    something else on its line (``namespace at::mps {`` sorts ``at`` before ``mps``, but not
    every line's names sort so)."""
    previous: Mapping | None = None
    for symbol in symbols:
        if previous is not None and (symbol["line"] < previous["line"] or (
                symbol["line"] == previous["line"] and symbol["kind"] in _CONTAINERS)):
            return True
        previous = symbol
    return False


def _types_below(symbols: Sequence[Mapping], taken: Sequence[int]) -> dict[str, list[int]]:
    """Top-level classes, namespaces and types by name, in the order taken: a holder of no holder
    (a member declared above one cannot make a cycle)."""
    found: dict[str, list[int]] = {}
    for index in taken:
        if symbols[index]["kind"] in _CONTAINERS and not symbols[index].get("parent"):
            found.setdefault(symbols[index]["name"], []).append(index)
    return found


def _taking_order(symbols: Sequence[Mapping]) -> Callable[[int], tuple[int, int]]:
    """The sort key of ``_holders``' order: by line, and on a line its containers first, outer
    before inner (``namespace torch::autograd {`` gives ``autograd``, ``torch`` on one line)."""
    on_line: dict[tuple[int, str], str] = {}    # (line, container) -> its parent
    for symbol in symbols:
        if symbol["kind"] in _CONTAINERS:
            on_line[symbol["line"], symbol["name"]] = symbol.get("parent") or ""

    def key(index: int) -> tuple[int, int]:
        symbol = symbols[index]
        if symbol["kind"] not in _CONTAINERS:
            return symbol["line"], len(symbols)
        rank, parent = 0, symbol.get("parent") or ""
        while (symbol["line"], parent) in on_line and rank < len(symbols):
            rank, parent = rank + 1, on_line[symbol["line"], parent]
        return symbol["line"], rank
    return key


def _namespace_around(symbols: Sequence[Mapping], holders: list[int], index: int) -> int:
    """The innermost namespace (not a Go package) that ``index`` is listed in, or is; -1: none."""
    while index >= 0 and (symbols[index]["kind"] != "namespace" or symbols[index].get("detail") == "package"):
        index = holders[index]
    return index


_LISTED = itemgetter("listed")
LISTED_DEPTH = 8    # the deepest Code Structure nests (``namespace torch::jit::tensorexpr::analysis`` is four)


def _listing(symbols: Sequence[Mapping]) -> tuple[list[int], list[int]]:
    """The symbols' indices in the order Code Structure lists them, and each one's depth
    (``LISTED_DEPTH`` at most): each member right after its holder and the holder's earlier
    members (``_holders``), which is the file's own order wherever members follow their holder,
    as a class body's do."""
    holders, taken = _holders(symbols)
    depths = [0] * len(symbols)
    members: dict[int, list[int]] = {}
    roots: list[int] = []
    in_order = True     # every member right after its holder's earlier members: the taking order
    open_chain: list[int] = []
    for index in taken:
        holder = holders[index]
        if holder < 0:
            roots.append(index)
            open_chain.clear()
        else:
            members.setdefault(holder, []).append(index)
            depths[index] = min(LISTED_DEPTH, depths[holder] + 1)
            while open_chain and open_chain[-1] != holder:
                open_chain.pop()
            in_order = in_order and bool(open_chain)
        open_chain.append(index)
    if in_order:
        return list(taken), depths
    order: list[int] = []
    waiting = roots[::-1]
    while waiting:      # a holder is listed before its members: their depths follow from its
        index = waiting.pop()
        order.append(index)
        if holders[index] >= 0:
            depths[index] = min(LISTED_DEPTH, depths[holders[index]] + 1)
        waiting += reversed(members.get(index, ()))
    return order, depths


def top_definitions(facts: Facts) -> dict[str, str]:
    """A Python file's top-level definitions, name -> anchor (the first of a name defined twice):
    what a name imported from the file links to on its page."""
    if not facts_language(facts).python_module:
        return {}
    found: dict[str, str] = {}
    for symbol in facts.get("symbols", []):
        if not symbol.get("parent") and symbol["kind"] in _DEFINITION_KINDS:
            found.setdefault(symbol["name"], layout.anchor(symbol["kind"], symbol["name"], symbol["line"]))
    return found


def facts_language(facts: Facts) -> Language:
    """The language of a file's facts, which says how its pages present it (text's for none)."""
    return by_id(facts.get("language") or "text") or TEXT


def is_test(facts: Facts) -> bool:
    return "test" in facts.get("findings", {}).get("tags", [])


def defines_tests(facts: Facts) -> bool:
    """Whether the file defines tests itself (a file in a test folder may only help them)."""
    return "defines-tests" in facts.get("findings", {}).get("tags", [])


def symbol_entries(facts: Facts) -> list[dict]:
    """Each symbol as the file's pages show it, in the file's order: both pages list every
    symbol (a header defines thousands), so labels and anchors are worked out once for the two.
    No entry has uses yet (the docs page adds those of its file's top-level definitions)."""
    symbols = facts.get("symbols", [])
    order, depths = _listing(symbols)
    listed = [0] * len(symbols)     # each entry's place in Code Structure's list
    for position, index in enumerate(order):
        listed[index] = position
    # an empty part is one shared empty tuple, never filled in place (``_mark_uses`` and
    # ``_mark_inherited`` set their own): five new lists per keyword were a tenth of the entries' cost
    return [{"anchor": layout.anchor(s["kind"], s["name"], s["line"]), "kind_label": kind_label(s),
             "name": s["name"], "signature": s.get("signature", ""), "line": s["line"],
             "end": s.get("end", s["line"]), "depth": depth,
             "decorators": s.get("decorators", _NONE), "condition": s.get("condition", _NONE),
             "definition": s["kind"] in _DEFINITION_KINDS,
             "kind": s["kind"], "local_to": s["parent"] if "<locals>" in s.get("parent", "") else "",
             "inherited": _NONE, "uses": _NONE, "more_uses": 0, "uses_shown": _NONE, "uses_unshown": 0,
             "listed": position}
            for s, depth, position in zip(symbols, depths, listed)]


_NONE: tuple = ()


def with_link_findings(facts: Facts, found: Mapping[str, list]) -> Facts:
    """``facts`` with the findings of the rules linking decides added to its own; a purpose
    found so replaces the fallback's ("source code with no documentation of its own")."""
    findings = dict(facts.get("findings", {}))
    tags = list(findings.get("tags", []))
    for section, messages in found.items():
        if not isinstance(messages, list) or not messages:
            continue
        if section == "purpose" and "unclassified" in tags:
            findings[section], tags = [], [tag for tag in tags if tag != "unclassified"]
        findings[section] = sorted(set(findings.get(section, [])) | set(messages))
    return {**facts, "findings": {**findings, "tags": tags}}


class DocsInput:
    """What the sections of one file's docs page are made from, and what several of them
    share, worked out once (``entries``: ``symbol_entries(facts)``, if already made)."""

    def __init__(self, facts: Facts, *, project: str, related: dict, links: dict | None, view: SourceView,
                 src_link: str, entries: list[dict] | None = None, keep_empty: bool = False,
                 source_url: str = "", source_ref: str = "") -> None:
        self.facts, self.project, self.related, self.links = facts, project, related, links
        self.view, self.src_link, self.keep_empty = view, src_link, keep_empty
        self.path = facts["path"]
        self.folder = posixpath.dirname(self.path)
        self.page = layout.docs_page(self.path)
        self.findings = facts.get("findings", {})
        self.entries = symbol_entries(facts) if entries is None else entries
        # every entry as Code Structure nests them: a member under its holder (``_listing``)
        self.listed = sorted(self.entries, key=_LISTED)
        self.structure = [entry for entry in self.listed if entry["definition"]]
        self.other_keywords = [entry for entry in self.entries if not entry["definition"]]
        for entry in self.structure:
            entry["source_link"] = layout.lines_link(src_link, self.path, entry["line"], entry["end"],
                                                     source_url, source_ref)
        if facts_language(facts).python_module:    # before the docs: a class's doc names what it inherits
            _mark_inherited(self.entries, facts.get("symbols", []))
        _document(facts, self.entries, lambda: self.resolve)
        _mark_uses(self.entries, facts.get("symbols", []), links, self.page)

    @functools.cached_property
    def resolve(self) -> Callable[..., str]:
        """The page's name resolver (``_resolver``), made once for the docs and ``__all__``."""
        return _resolver(self.facts, self.entries, self.links, self.page)

    @functools.cached_property
    def purpose_and_overview(self) -> tuple[list[str], list[str], str, dict | None]:
        return _purpose_and_overview(self.facts, self.listed, self.findings)

    @functools.cached_property
    def odd_names(self) -> list[str]:
        """The keywords that are not plain words (dotted modules, operators), found by substring."""
        # an ASCII identifier is exactly a ``_WORD``: two string checks cost a fifth of the pattern's match
        return [name for entry in self.entries if not ((name := entry["name"]).isascii() and name.isidentifier())]

    def shows(self, *texts: str, markdown: bool = False) -> set[str]:
        """The names a section shows in ``texts``: plain (paths, module names, as code spans show
        them) or ``markdown``, as a reader sees it."""
        return _names_in([_seen_text(text) for text in texts] if markdown else texts, self.odd_names)

    def link(self, path: str) -> str:
        """From this page to another file's docs page."""
        return docs_link(self.page, path)

    def kept(self, content: Any) -> Any:
        """A section's content, or None (left out) when it has nothing to say and empty sections
        are not kept; a kept empty section is its empty content, which the page says in one line."""
        if content:
            return content
        return (content if content is not None else {}) if self.keep_empty else None


@dataclass(frozen=True)
class Section:
    """One section of a docs page as its model function makes it: ``fields``, the names its
    template block reads, and ``names``, the words it shows (the keyword page's map)."""

    fields: dict
    names: Collection[str] = ()


@dataclass(frozen=True)
class SectionSpec:
    """A docs-page section: its template block (``name``, in file_docs.md.j2 or an override
    of it), its heading, its model function (which returns None to leave it out) and, for
    folder pages, what it says of a file in a line (``summary`` of a ``compose.summary_row``)."""

    name: str
    title: str
    build: Callable[[DocsInput], Section | None]
    summary: Callable[[Mapping], str] | None = None


SECTIONS: list[SectionSpec] = []
"""The docs page's sections in the page's order (the seed layout's)."""


def section(name: str, title: str, *, after: str | None = None,
            summary: Callable[[Mapping], str] | None = None) -> Callable:
    """Register a model function as the section ``name`` (its template block), last or right
    after the section ``after``; registering a name again replaces that section in place."""
    def register(build: Callable[[DocsInput], Section | None]) -> Callable[[DocsInput], Section | None]:
        spec = SectionSpec(name, title, build, summary)
        names = [known.name for known in SECTIONS]
        if name in names:
            SECTIONS[names.index(name)] = spec
        else:
            SECTIONS.insert(names.index(after) + 1 if after else len(SECTIONS), spec)
        return build
    return register


def file_summary(row: Mapping) -> str:
    """What a folder's page says of one of its files (``row``: its ``compose.summary_row``):
    the first summary a section gives, in the page's order."""
    for spec in SECTIONS:
        if spec.summary is not None and (summary := spec.summary(row)):
            return summary
    return ""


def sections_fingerprint() -> list[list[str]]:
    """The registered sections, by block and model function: a page's render key names them."""
    return [[spec.name, spec.title, f"{spec.build.__module__}.{spec.build.__qualname__}"] for spec in SECTIONS]


def file_docs_model(facts: Facts, *, project: str, related: dict, links: dict | None,
                    view: SourceView, src_link: str, entries: list[dict] | None = None,
                    keep_empty: bool = False, source_url: str = "", source_ref: str = "") -> dict:
    """The model of ``<file>_docs.md``: each registered section's fields, and ``sections``,
    those on the page in order (``{name, title, names}``).  A section with nothing to say is
    None, and the page leaves it out; ``keep_empty`` (``empty_sections = "keep"``) keeps it,
    empty, and the page says so in one line."""
    given = DocsInput(facts, project=project, related=related, links=links, view=view, src_link=src_link,
                      entries=entries, keep_empty=keep_empty, source_url=source_url, source_ref=source_ref)
    result: dict = dict(project=project, path=given.path, folder_display=folder_display(given.folder))
    shown: list[dict] = []
    for spec in SECTIONS:
        made = spec.build(given)
        if made is None:
            result[spec.name] = None
            continue
        result.update(made.fields)
        shown.append(dict(name=spec.name, title=spec.title, names=made.names))
    result["sections"] = shown
    # made when a format asks (the site's source view): a Markdown page shows none of these lines
    result["source_names"] = _Later(lambda: _source_names(given.path, given.entries, facts.get("symbols", []), links))
    return result


class _Later(Mapping[str, list]):
    """A mapping made at its first use."""

    def __init__(self, make: Callable[[], dict[str, list]]) -> None:
        self._make: Callable[[], dict[str, list]] = make
        self._made: dict[str, list] | None = None

    def _whole(self) -> dict[str, list]:
        if self._made is None:
            self._made = self._make()
        return self._made

    def __getitem__(self, name: str) -> list:
        return self._whole()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())


def _mark_uses(entries: list[dict], symbols: list, links: dict | None, page: str) -> None:
    """Each top-level definition's ``uses`` (the first [file, line] where the repository
    imports it, from the link step), ``more_uses`` (how many more), and what Markdown shows
    of them (``uses_shown``, linked, and ``uses_unshown``, counted)."""
    uses = (links or {}).get("uses", {})
    if not uses:    # most files: nothing of theirs is imported by name (``symbol_entries`` says none)
        return
    for entry, symbol in zip(entries, symbols):
        used = uses.get(entry["name"]) if entry["definition"] and not symbol.get("parent") else None
        if not used:
            continue
        entry["uses"] = [[user, line] for user, line in used["at"]]
        entry["more_uses"] = used["more"]
        entry["uses_shown"] = [dict(path=user, line=line, link=docs_link(page, user))
                               for user, line in entry["uses"][:USES_SHOWN]]
        entry["uses_unshown"] = len(entry["uses"]) - len(entry["uses_shown"]) + entry["more_uses"]


def _mark_inherited(entries: list[dict], symbols: list) -> None:
    """Each Python class's ``inherited``: the public members of its bases defined in the same
    file that it does not define itself, as pdoc lists them, a group per base (nearest first),
    each member linked to the base's definition.  A base in another file is not followed: a
    page reads only its own file's facts."""
    classes: dict[str, dict] = {}
    members: dict[str, list[dict]] = {}
    for entry, symbol in zip(entries, symbols):
        parent = symbol.get("parent", "")
        if entry["kind"] == "class" and "<locals>" not in parent:
            classes[f"{parent}.{entry['name']}" if parent else entry["name"]] = entry
        if parent and entry["definition"] and not entry["name"].startswith("_"):
            members.setdefault(parent, []).append(entry)
    for path, entry in classes.items():
        scope = path.rpartition(".")[0]
        own = {member["name"] for member in members.get(path, [])}
        seen, groups, queue = {path}, [], list(_class_bases(entry["signature"]))
        while queue:
            base = queue.pop(0)
            qualified = f"{scope}.{base}" if scope and f"{scope}.{base}" in classes else base
            if qualified in seen or qualified not in classes:
                continue
            seen.add(qualified)
            shown = []
            for member in members.get(qualified, []):
                if member["name"] not in own:   # once: a property's setter repeats its getter's name
                    own.add(member["name"])
                    shown.append(member)
            if shown:
                groups.append({"base": base, "link": "#" + classes[qualified]["anchor"],
                               "members": [{"name": member["name"], "link": "#" + member["anchor"]}
                                           for member in shown]})
            queue += _class_bases(classes[qualified]["signature"])
        entry["inherited"] = groups


def _source_names(path: str, entries: list[dict], symbols: list, links: dict | None) -> dict[str, list]:
    """Identifiers of the file's source that name a definition -> [its docs page (relative to the
    output root), its line, or None for a whole file]: the file's own top-level definitions,
    then what its imports and includes name (``links``' ``names``, made by the link step)."""
    names: dict[str, list] = {}
    own = layout.docs_page(path)
    for entry, symbol in zip(entries, symbols):
        if symbol["kind"] in LINKED_KINDS and not symbol.get("parent"):
            names.setdefault(entry["name"], [own, entry["line"]])
    for name, (target, line) in (links or {}).get("names", {}).items():
        names.setdefault(name, [layout.docs_page(target), line])
    return dict(sorted(names.items()))


_PARAMETER = re.compile(r"[(,]\s*\**(\w+)")


_SIGNATURE_TOKEN = re.compile(r"[\[({]|[\])}]|,|[=:]|\**[A-Za-z_]\w*")


def _parameter_names(signature: str) -> frozenset[str]:
    """The parameters a Python signature's list names (``(self, x: Dict[str, T] = f(a, b))``:
    ``self`` and ``x``), not what their annotations, defaults or the return type name."""
    names: set[str] = set()
    depth, expecting = 0, False     # expecting: at the list's level, right after ``(`` or a comma
    for token in _SIGNATURE_TOKEN.finditer(signature):
        text = token.group()
        if text in "([{":
            depth += 1
            expecting = depth == 1
        elif text in ")]}":
            depth -= 1
            if depth == 0:
                break       # the parameter list ends: the return type names none
        elif depth == 1:
            if expecting and text not in ",=:":
                names.add(text.lstrip("*"))
            expecting = text == ","
    return frozenset(names)


def _besides(resolve: Callable[..., str], names: frozenset[str]) -> Callable[..., str]:
    """``resolve``, but not for ``names``."""
    return lambda asked, *rest, **options: "" if asked in names else resolve(asked, *rest, **options)


def _document(facts: Facts, entries: list[dict], make_resolver: Callable[[], Callable[..., str]]) -> None:
    """Each entry's ``doc`` (its docstring or doc comment, parsed) and ``signature_spans``
    (an annotated Python signature with its names linked), None where it has none; the name
    resolver is made at the first definition that needs it (most files have none)."""
    resolve: Callable[..., str] | None = None
    language = facts_language(facts)
    parse = docstrings.PARSERS.get(language.doc_parser, docstrings.comment_doc)
    python = language.python_module
    # a class's overloads and methods repeat a doc comment or a signature: read once per scope
    read: dict[tuple[Callable[..., dict], str, str, frozenset[str]], dict] = {}
    walked: dict[tuple[str, str], list[dict] | None] = {}
    for entry, symbol in zip(entries, facts.get("symbols", [])):
        doc = symbol.get("doc")
        annotated = python and entry["definition"] and (":" in entry["signature"] or "->" in entry["signature"])
        entry["signature_spans"] = None
        if not doc and not annotated:
            entry["doc"] = None
            continue
        # a name is first looked up where the definition is: a method's ``__init__`` is its class's
        scope = symbol["name"] if symbol["kind"] in ("class", "namespace") else symbol.get("parent", "")
        if symbol["kind"] in ("class", "namespace") and symbol.get("parent"):
            scope = f"{symbol['parent']}.{scope}"
        if resolve is None:
            resolve = make_resolver()
        scope = scope.replace("::", ".")
        resolve_here = functools.partial(resolve, scope=scope)
        # a JSDoc block is Markdown; a ``//`` comment above the same language's code is plain text
        own = docstrings.PARSERS.get(str(symbol.get("doc_parser", "")), parse)
        entry["doc"] = None
        if doc:
            # a function's parameter named in its doc is the parameter: pluggy's ``force_exception(self,
            # exception)`` says ``exception``, not its class's property of that name; so is its own name,
            # when a parameter has it too (``res.type = function(type)``)
            signature = symbol.get("signature", "")
            unlinked = _parameter_names(signature) if python and symbol["kind"] in ("function", "method") \
                else frozenset(_PARAMETER.findall(signature)) & {symbol["name"]}
            key = (own, doc, scope, unlinked)
            if key not in read:
                read[key] = own(doc, _besides(resolve_here, unlinked) if unlinked else resolve_here)
            entry["doc"] = read[key]
        if annotated:
            signature = entry["signature"]
            if (signature, scope) not in walked:
                walked[signature, scope] = docstrings.signature_spans(signature, resolve_here)
            entry["signature_spans"] = walked[signature, scope]


_ESCAPED = re.compile(r"\\(.)|&(amp|lt|gt);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">"}


def _seen_text(markdown: str) -> str:
    """Markdown as a reader sees it: no link targets or anchors, and ``my\\_name`` as ``my_name``."""
    if "](" in markdown or "<a id=" in markdown:
        markdown = _LINK_TARGETS.sub("", markdown)
    if "\\" in markdown or "&" in markdown:
        markdown = _ESCAPED.sub(lambda match: match.group(1) or _ENTITIES[match.group(2)], markdown)
    return markdown


def _names_in(texts: Sequence[str], odd_names: Sequence[str]) -> set[str]:
    """The words (``_WORD``) of ``texts``, and the keywords that are not words (``torch.nn``,
    ``operator==``) found in them."""
    joined = "\n".join(texts)     # one search per name (a core header has hundreds of users)
    found = set(_WORD.findall(joined))
    if odd_names and texts:
        found.update(name for name in odd_names if name in joined)
    return found


@section("metadata", "File Metadata")
def metadata_section(given: DocsInput) -> Section:
    facts = given.facts
    encoding = facts.get("encoding")
    extension = posixpath.splitext(given.path)[1]
    note = f"decoded as {encoding} (not UTF-8)" if encoding not in ("", "utf-8", "ascii", None) else ""
    problems = [dict(line=p.get("line"), message=p["message"]) for p in facts.get("problems", [])]
    return Section(dict(size=facts["size"], type_label=facts["type_label"], extension=extension,
                        language=str(facts.get("language") or ""), lines=facts.get("lines", 0),
                        sha256=facts["sha256"], encoding_note=note, problems=problems),
                   given.shows(given.path, facts["type_label"], extension, note,
                               *(str(problem["message"]) for problem in problems)))


def _purpose_summary(row: Mapping) -> str:
    """A file's purpose in a sentence for its folder's page: its documentation's first sentence."""
    return summary_sentence(own_text(row.get("docstring", "")))


def own_text(text: str) -> str:
    """A file's documentation without the lines that are not its words about itself."""
    return "\n".join(line for line in text.split("\n") if not _not_own(line))


def summary_sentence(text: str) -> str:
    """The first sentence of a documentation's first paragraph that is not a title, as written."""
    first = _lead(text, 600)
    return _first_sentence(first) if first else ""


@section("purpose", "File Purpose", summary=_purpose_summary)
def purpose_section(given: DocsInput) -> Section:
    purpose, _, generated, _ = given.purpose_and_overview
    return Section(dict(purpose=purpose, generated_note=generated), given.shows(*purpose, generated, markdown=True))


@section("source", SOURCE_SECTION)
def source_section(given: DocsInput) -> Section:
    """The file as it is (its keywords' map reads the lines shown, not this section)."""
    view = given.view
    return Section(dict(binary=given.facts.get("binary", False), source_text=view.text,
                        fence_info=given.facts.get("fence", ""), shown=view.shown_bytes, omitted=view.omitted_bytes,
                        masked_lines=list(view.masked_lines)))


@section("overview", "High-Level Overview")
def overview_section(given: DocsInput) -> Section | None:
    _, paragraphs, _, own_doc = given.purpose_and_overview
    if own_doc is not None:
        return Section(dict(overview=paragraphs, overview_doc=own_doc),
                       given.shows(docstrings.doc_text(own_doc)) | given.shows(*paragraphs, markdown=True))
    overview = given.kept(paragraphs)
    return None if overview is None else Section(dict(overview=overview, overview_doc=None),
                                                  given.shows(*overview, markdown=True))


@section("analysis", "Detailed Analysis")
def analysis_section(given: DocsInput) -> Section | None:
    """Every definition with its documentation, then the other keywords: it shows every name."""
    facts = given.facts
    parse_note = "" if facts.get("parsed", True) else (
        "This file did not parse; the definitions below were found by a tolerant fallback and may be incomplete.")
    if facts.get("extractor"):
        parse_note = (f"The definitions below were found by {facts['extractor']}: kwdocs has no parser "
                      f"of its own for {facts.get('type_label', 'this language')} files. {parse_note}").strip()
    api = _public_api(given)
    analysis = given.kept(bool(parse_note or given.structure or given.other_keywords or api))
    if analysis is None:
        return None
    public, documented = coverage.file_counts(facts)
    own = {entry["name"] for entry, symbol in zip(given.entries, facts.get("symbols", []))
           if symbol["kind"] in LINKED_KINDS and not symbol.get("parent")}
    return Section(dict(analysis=analysis, parse_note=parse_note, structure=given.structure,
                        other_keywords=given.other_keywords, api=api,
                        coverage=coverage.summary(documented, public),
                        class_diagram=diagrams.file_inheritance(given.path, facts, given.links, own)),
                   [entry["name"] for entry in given.entries] + [row["name"] for row in api])


def _public_api(given: DocsInput) -> list[dict]:
    """A Python module's ``__all__``, as pdoc lists it: each name as the package exports it
    (``httpx.Client``), the module defining it, and a link to its definition where known."""
    exports = given.facts.get("exports")
    if not exports:
        return []
    resolve = given.resolve
    symbols = given.facts.get("symbols", [])
    here = {symbol["name"] for symbol in symbols
            if symbol["kind"] in _DEFINITION_KINDS and not symbol.get("parent")}
    bound = {symbol["name"]: symbol["signature"] for symbol in symbols
             if symbol["kind"] == "import" and symbol.get("signature")}
    path = PurePosixPath(given.path)
    parts = list(path.parent.parts) + ([] if path.name == "__init__.py" else [path.stem])
    module = ".".join(parts)
    rows = []
    for name in exports:
        link = resolve(name)
        origin = "" if name in here else bound.get(name, "").rpartition(".")[0]
        if not origin and name not in here and (star := _star_definition(given.facts, given.links, name)):
            origin = star[2]
            link = layout.anchor_link(given.link(star[0]), star[1])
        rows.append({"name": name, "exported_as": f"{module}.{name}" if module else name,
                     "defined_in": origin, "here": name in here, "link": link})
    return rows


def _star_definition(facts: Facts, links: dict | None, name: str) -> tuple[str, str, str] | None:
    """(file, anchor, module) of a name of ``__all__`` that a star import (``from ._api import *``)
    brings, as the link step found it (``anchors``): the module whose own file defines it first,
    since ``anchors`` also follow the star module's own imports."""
    anchors = (links or {}).get("anchors", {})
    found = [anchors[f"{record['module']}.{name}"] for record in facts.get("imports", [])
             if record.get("names") == ["*"] and f"{record.get('module')}.{name}" in anchors]
    if not found:
        return None
    targets = {dep.get("target") for dep in (links or {}).get("deps", [])}
    path, anchor = next((place for place in found if place[0] in targets), found[0])
    module = PurePosixPath(path).with_suffix("")
    parts = module.parent.parts if module.name == "__init__" else module.parts
    return path, anchor, ".".join(parts)


@section("role", "Architecture & Design")
def role_section(given: DocsInput) -> Section | None:
    """The role rules' sentences; one that only says which folder the file is in (tagged
    ``no-role``) is kept only with the seeds' full layout."""
    role = given.findings.get("role", [])
    if given.keep_empty or (role and "no-role" not in given.findings.get("tags", [])):
        return Section(dict(role=role), given.shows(*role, markdown=True))
    return None


@section("deps", "Dependencies")
def deps_section(given: DocsInput) -> Section | None:
    deps = given.kept(_dependencies(given.facts, given.links, given.page))
    if deps is None:
        return None
    listed = [dep for group in (deps or {}).values() for dep in group]
    return Section(dict(deps=deps), given.shows(*(dep["module"] for dep in listed),
                                                *(name for dep in listed for name in dep["names"])))


def _findings_section(key: str) -> Callable[[DocsInput], Section | None]:
    def build(given: DocsInput) -> Section | None:
        found = given.kept(given.findings.get(key, []))
        if found is None:
            return None
        texts = [item["message"] if isinstance(item, dict) else item for item in found]
        return Section({key: found}, given.shows(*texts, markdown=True))
    build.__qualname__ = f"{key}_section"
    return build


section("patterns", "Code Patterns & Idioms")(_findings_section("patterns"))
section("performance", "Performance Considerations")(_findings_section("performance"))
section("security", "Security & Safety")(_findings_section("security"))


@section("testing", "Testing & Usage")
def testing_section(given: DocsInput) -> Section | None:
    """The test command of a file that defines tests, the tests that use the file (directly or
    through packages re-exporting it) and the files that import it; a part with nothing to
    list is left out (kept, saying so, with ``keep_empty``)."""
    links = given.links or {}
    users = links.get("used_by", [])
    test_users = links.get("test_users", [])
    indirect = links.get("indirect_test_users", [])
    used_by = [{"path": user, "link": given.link(user)} for user in users[:USED_BY_LIMIT]]
    tests_using = [{"path": user, "link": given.link(user), "via": ""} for user in test_users[:USED_BY_LIMIT]]
    tests_using += [{"path": user, "link": given.link(user), "via": package, "via_link": given.link(package)}
                    for user, package in indirect[:max(0, min(INDIRECT_TESTS_LIMIT, USED_BY_LIMIT - len(tests_using)))]]
    command = facts_language(given.facts).test_command
    test_command = command.replace("{path}", given.path) if command and defines_tests(given.facts) else ""
    if not (test_command or tests_using or used_by or given.keep_empty):
        return None
    return Section(dict(keep_empty=given.keep_empty, test_command=test_command, tests_using=tests_using,
                        more_tests=max(0, len(test_users) + len(indirect) - len(tests_using)),
                        used_by=used_by, more_users=max(0, len(users) - USED_BY_LIMIT)),
                   given.shows(test_command, *(item["path"] for item in tests_using + used_by),
                               *(item["via"] for item in tests_using)))


@section("related", "Related Files")
def related_section(given: DocsInput) -> Section | None:
    related = [dict(name=other, link=given.link(other), why=why) for other, why in given.related["files"]]
    if not (related or given.keep_empty):
        return None
    return Section(dict(related=related, more_related=given.related["more"],
                        index_link=layout.link(given.page, layout.index_page(given.folder))),
                   given.shows(*(item["name"] for item in related)))


@section("crossrefs", "Cross-References")
def crossrefs_section(given: DocsInput) -> Section:
    page, kw = given.page, layout.kw_page(given.path)
    fields = dict(docs_name=posixpath.basename(page), docs_link=layout.link(page, page),
                  kw_name=posixpath.basename(kw), kw_link=layout.link(page, kw),
                  index_link=layout.link(page, layout.index_page(given.folder)),
                  doc_link=layout.link(page, layout.doc_page(given.folder)), src_link=given.src_link)
    return Section(fields, given.shows(fields["docs_name"], fields["kw_name"]))


# a banner says the file (or its code) was generated: "The response generated from a Request." does not
_GENERATED = re.compile(r"@generated|\bdo not edit\b|\b(?:auto(?:matically)?[- ]?)generated\b|"
                        r"^\W*(?:(?:this\s+)?(?:file|code|module|source|header|content)\s+)?"
                        r"(?:(?:is|was|has\s+been)\s+)?generated\s+(?:by|from|with|using)\b|"
                        r"\b(?:file|code|module|source|header)\s+(?:is|was|has\s+been)\s+generated\b", re.IGNORECASE)
_GENERATED_BY = re.compile(r"\b(?:generated|created)\s+(?:automatically\s+)?(?:by|with|using)\s+"
                           r"([`'\"]?[\w./-]+[`'\"]?)", re.IGNORECASE)
_GENERATED_FROM = re.compile(r"\bfrom\s+([`'\"]?[\w./-]*[\w/][`'\"]?)")
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]`'\"][.!?])\s+(?=[A-Z`(])")
_NOT_DEFINES = frozenset({"heading", "key", "namespace", "target"})   # what a file defines, not holds
_INCLUDE_GUARD = re.compile(r"_(?:H|HPP|HH|HXX|CUH|INCLUDED)_*$|^_*INCLUDE_")
PURPOSE_NAMES = 3          # definitions a purpose names before "and N more"
SUMMARY_CHARS = 300        # the longest summary sentence a purpose quotes


def _purpose_and_overview(facts: Facts, entries: list[dict],
                          findings: dict) -> tuple[list[str], list[str], str, dict | None]:
    """File Purpose sentences, High-Level Overview paragraphs, a generated-file note and the
    file's own documentation parsed when its style has structure (else None).

    Both are the file's own words: its module docstring or leading comment (a
    generated-file banner becomes the note instead), then what it defines, from
    the definitions' own summaries.  The rules' kind sentences (test, header ...)
    follow; a fallback sentence is kept only when the file says nothing itself."""
    generated = ""
    lines = []
    for line in facts.get("docstring", "").split("\n"):   # a banner line is a note, not the purpose
        if _GENERATED.search(line):
            generated = generated or _generated_note(line)
        elif not _not_own(line):
            lines.append(line)
    kept = [paragraph for paragraph in _paragraphs("\n".join(lines)) if _has_words(paragraph)]
    stem = posixpath.basename(facts["path"]).split(".", 1)[0].lstrip("_")
    defines = (_module_reexports_sentence(facts, entries)
               or _defines_sentence(entries, facts_language(facts).namespaces, stem, facts.get("language", ""),
                                    facts["path"])
               or _reexports_sentence(facts))
    if facts.get("exports"):    # a package's ``__all__`` says what it is for better than its helpers
        defines = f"{_exports_sentence(facts['exports'])} {defines}".rstrip()
    # a file comment in Markdown (rustdoc, a Markdown docstring) or go doc: parsed and shown as
    # its style renders it, as its definitions' are, not escaped and run together
    own_doc = docstrings.structured_doc(facts_language(facts).doc_parser, "\n".join(lines)) if kept else None
    purpose: list[str] = []
    if own_doc is not None and own_doc["summary"]:
        purpose.append(_sentence_markdown(own_doc["summary"]))
    elif kept:
        purpose.append(_escaped_sentence(_lead("\n".join(lines))))
    if defines:
        purpose.append(defines)
    if not purpose:
        purpose.extend(_holds_sentence(facts, entries))
    rule_sentences = findings.get("purpose", [])
    if not purpose or "unclassified" not in findings.get("tags", []):
        purpose.extend(rule_sentences)
    if not purpose:
        purpose.append(f"{_code(facts['path'])} has no documentation of its own and defines nothing kwdocs lists.")
    overview = [] if own_doc is not None else [render_prose(paragraph) for paragraph in kept]
    if defines and kept:    # without words of its own the overview would repeat the purpose: left out
        overview.append(defines)
    return purpose, overview, generated, own_doc


def _exports_sentence(exports: list[str]) -> str:
    """``Exports `Client`, `get` and 68 more names (`__all__`).``: the public names first."""
    shown = sorted(exports, key=lambda name: name.startswith("_"))[:PURPOSE_NAMES]
    rest = len(exports) - len(shown)
    more = f" and {rest:,} more name{'s' if rest != 1 else ''}" if rest > 0 else ""
    return f"Exports {', '.join(_code(name) for name in shown)}{more} ({_code('__all__')})."


def _reexports_sentence(facts: Facts) -> str:
    """For a Python module that defines nothing: the names it imports, which it exists to
    re-export (``Imports `Linear`, `Conv2d` and 4 more from `torch.ao.nn.qat.modules`.``)."""
    if not facts_language(facts).python_module:
        return ""
    names = [symbol["name"] for symbol in facts.get("symbols", [])
             if symbol["kind"] == "import" and symbol.get("signature") and not symbol["name"].startswith("_")]
    modules = list(dict.fromkeys(record["module"] for record in facts.get("imports", [])
                                 if record.get("kind") == "from" and record.get("module")))
    if not names or not modules:
        return ""
    shown = ", ".join(_code(name) for name in names[:PURPOSE_NAMES])
    rest = len(names) - PURPOSE_NAMES
    more = f" and {rest:,} more" if rest > 0 else ""
    also = f" and {len(modules) - 1:,} more modules" if len(modules) > 1 else ""
    return f"Imports {shown}{more} from {_code(modules[0])}{also}."


# what a compiler adds to a module that re-exports others (tsc's ``__exportStar`` and the
# ``get`` of each ``Object.defineProperty(exports, ...)``, ``ownKeys`` inside ``__importStar``,
# its ``index_1`` for a required module): not the module's own definitions
_COMPILER_HELPER = re.compile(r"__\w+|get|set|ownKeys|\w+_\d+")
_REEXPORT_KINDS = frozenset({"require", "export"})


def _module_reexports_sentence(facts: Facts, entries: list[dict]) -> str:
    """For a JavaScript/TypeScript module that only passes others on (``export * from``, or
    compiled: ``__exportStar(require(...))``): ``Re-exports `./any` and 2 more modules.``"""
    if not facts_language(facts).reexport_modules:
        return ""
    modules = list(dict.fromkeys(record["module"] for record in facts.get("imports", [])
                                 if record.get("kind") in _REEXPORT_KINDS and record.get("module")))
    if not modules or any(record.get("kind") not in _REEXPORT_KINDS for record in facts.get("imports", [])):
        return ""
    defined = [entry for entry in entries if entry["definition"] and entry["kind"] not in _NOT_DEFINES
               and entry["kind"] != "export"]
    if any(not _COMPILER_HELPER.fullmatch(entry["name"]) for entry in defined):
        return ""
    if not defined and any(record.get("kind") == "require" for record in facts.get("imports", [])):
        return ""   # a script that loads modules without a compiler's helpers passes nothing on
    shown = ", ".join(_code(module) for module in modules[:PURPOSE_NAMES])
    rest = len(modules) - PURPOSE_NAMES
    return f"Re-exports {shown}" + (f" and {rest:,} more modules." if rest > 0 else ".")


def _holds_sentence(facts: Facts, entries: list[dict]) -> list[str]:
    """For a file without documentation or definitions: its top-level keys or headings, or what
    kind of binary it is; nothing for others."""
    if facts.get("binary"):
        return [f"{_code(posixpath.basename(facts['path']))} is a binary file of {facts.get('size', 0):,} bytes."]
    keys = [entry["name"] for entry in entries if entry["kind"] in ("key", "heading", "target")
            and entry["depth"] == 0]
    if not keys:
        return []
    names = ", ".join(_code(name) for name in keys[:PURPOSE_NAMES])
    rest = len(keys) - PURPOSE_NAMES
    label = {"key": "keys", "heading": "sections", "target": "targets"}[
        next(entry["kind"] for entry in entries if entry["name"] == keys[0])]
    return [f"Holds {label} {names}" + (f" and {rest:,} more." if rest > 0 else ".")]


def _generated_note(paragraph: str) -> str:
    """``Generated by `X` from `Y`.`` as far as the banner says, else its first words."""
    by = _GENERATED_BY.search(paragraph)
    source = _GENERATED_FROM.search(paragraph)
    if by or source:
        parts = ["Generated"]
        if by:
            parts.append(f"by {_code(by.group(1).strip(chr(96) + chr(39) + chr(34)).rstrip('.'))}")
        if source:
            parts.append(f"from {_code(source.group(1).strip(chr(96) + chr(39) + chr(34)).rstrip('.'))}")
        return " ".join(parts) + ": edit that, not this file."
    return f"Generated (the file says: {render_prose(_first_sentence(paragraph))}): edit its generator, not this file."


def _first_sentence(text: str) -> str:
    sentence = _SENTENCE_END.split(text, 1)[0]
    if len(sentence) > SUMMARY_CHARS:
        sentence = sentence[:SUMMARY_CHARS].rsplit(" ", 1)[0] + " …"
    return sentence


def _sentence_markdown(spans: list[dict]) -> str:
    """The first sentence of a parsed summary, as Markdown, ending as one."""
    kept: list[dict] = []
    for span in spans:
        if span["t"] == "text" and (end := _SENTENCE_END.search(span["v"])):
            kept.append({**span, "v": span["v"][:end.start()]})
            break
        kept.append(span)
    if len(docstrings.spans_text(kept)) > SUMMARY_CHARS:   # cut as a plain sentence is
        return _escaped_sentence(docstrings.spans_text(spans))
    for mark in ("em", "strong"):   # a mark the sentence opened and did not close
        if sum(span["t"] == mark for span in kept) % 2:
            kept.append({"t": mark, "v": "", "end": True})
    if kept and kept[-1]["t"] == "text":
        kept[-1] = {**kept[-1], "v": kept[-1]["v"].rstrip()}
        if not kept[-1]["v"].endswith((".", "!", "?", "…", ":")):
            kept[-1]["v"] += "."
    else:
        kept.append({"t": "text", "v": "."})
    # jinja2's renderer only when a page is rendered, as render_prose
    from kwdocs.pages.render import spans_markdown
    return spans_markdown(kept)


def _escaped_sentence(paragraph: str) -> str:
    """The first sentence, ending as one (a comment's title line often has no full stop)."""
    sentence = _first_sentence(paragraph)
    return render_prose(sentence if sentence.endswith((".", "!", "?", "…", ":")) else sentence + ".")


def _importance(entry: dict, stem: str) -> tuple:
    """Named after the file first (``Linear`` in ``linear.py``), then what is not a macro, then
    documented ones, in file order."""
    name = entry["name"].lower()
    return (name != stem, entry["kind"] == "macro", stem not in name, not entry.get("doc"), entry["line"])


def _outside_classes(entries: list[dict]) -> list[tuple[dict, str]]:
    """The entries of a C/C++ file that are not inside a class, each with the namespaces around
    it (``at::cuda``): its members are the class's, not the file's (``entries`` as they are
    listed, each under its holder)."""
    found = []
    # per enclosing level: the namespaces' path down to it, or None once a level is not a namespace
    around: list[str | None] = []
    for entry in entries:
        del around[entry["depth"]:]
        space = around[-1] if around else ""
        if entry["definition"] and space is not None:
            found.append((entry, space))
        around.append(None if space is None or entry["kind"] != "namespace" else
                      f"{space}::{entry['name']}" if space else entry["name"])
    return found


# languages whose exported names lead, as their documentation tool lists them (``go doc``,
# rustdoc's ``pub`` items); a file exporting none (an example's ``main``, a file of trait
# impls) is named by what it defines
_EXPORTING = frozenset({"go", "rust"})


def _defines_sentence(entries: list[dict], c_family: bool, stem: str, language: str = "", path: str = "") -> str:
    """``Defines `Linear`, `Bilinear` and 2 more: applies an affine ...`` from the file's
    top-level definitions, public ones first (exported ones in Go), and the first summary among
    them."""
    candidates = [entry for entry in entries if entry["definition"] and entry["kind"] not in _NOT_DEFINES
                  and not (entry["kind"] == "macro" and _INCLUDE_GUARD.search(entry["name"]))]
    if not candidates:
        return ""
    namespace = ""
    if c_family:   # a header's definitions are inside its namespaces: all but members of classes count
        wanted = {id(entry) for entry in candidates}
        placed = [(entry, space) for entry, space in _outside_classes(entries) if id(entry) in wanted]
        top = [entry for entry, _ in placed]
        spaces = {space for _, space in placed}
        namespace = spaces.pop() if len(spaces) == 1 else ""
        public = top          # a leading underscore is not C++'s way of saying private
    else:
        top = [entry for entry in candidates if entry["depth"] == 0]
        if language in _EXPORTING:
            public = [entry for entry in top if coverage.is_public(language, path, entry)] or top
        else:
            public = [entry for entry in top if not entry["name"].startswith("_")] or top
    if not top:
        return ""
    public = sorted(public, key=functools.partial(_importance, stem=stem.lower()))
    distinct = list(dict.fromkeys(entry["name"] for entry in public))   # overloads once
    named = distinct[:PURPOSE_NAMES]
    names = ", ".join(_code(name) for name in named)
    rest = len({entry["name"] for entry in top}) - len(named)
    sentence = f"Defines {names}" + (f" and {rest:,} more" if rest else "") + (
        f" (namespace {_code(namespace)})" if namespace else "")
    # no definition's doc: its first words are about that definition (an example, a test's
    # link), not the file; the definitions' own pages and the Definitions section quote them
    return sentence + "."


def _not_own(line: str) -> bool:
    """A line of a file's comment that is not its words about itself: a pragma, an author
    line or a section's title between rules (a bare rule may underline a title: kept)."""
    return not_doc.is_note(line) or (not_doc.is_divider(line) and _has_words(line))


def _code(text: str) -> str:
    # jinja2's renderer only when a page is rendered: a no-op build reads summaries here
    from kwdocs.pages.render import inline_code
    return inline_code(text)


def render_prose(text: str) -> str:
    # jinja2's renderer only when a page is rendered, as above
    from kwdocs.pages.render import prose
    return prose(text)


def _resolver(facts: Facts, entries: list[dict], links: dict | None, page: str) -> Callable[..., str]:
    """Names a docstring or doc comment mentions -> links: this file's definitions to their
    anchors (also said with the file's own module name), names imported from files of the
    tree (or called or mentioned through an import) to their definitions' anchors on those
    files' pages, an imported module's name to its page; any other name to nothing, shown
    unlinked, never to a page that does not define it.  Everything it
    reads is in the page's inputs (facts and links), so a page is rendered again whenever
    a link it shows may have moved."""
    local: dict[str, str] = {}
    for entry, symbol in zip(entries, facts.get("symbols", [])):
        parent = symbol.get("parent")
        # in a class's scope, what it inherits from a base of the same file (``_mark_inherited``)
        for group in entry.get("inherited") or ():
            path = f"{parent}.{entry['name']}" if parent else entry["name"]
            for member in group["members"]:
                local.setdefault(f"{path}.{member['name']}".replace("::", "."), member["link"])
        if entry["definition"]:
            # a member by its qualified name, or by its own name in its class's scope only: the
            # ``close`` one class's doc says is not another class's ``close``, even when only
            # that other class defines one, and a link to the wrong one is worse than none
            key = f"{parent}.{entry['name']}".replace("::", ".") if parent else entry["name"]
            local.setdefault(key, "#" + entry["anchor"])
    modules: dict[str, str] = {}    # a module's name -> its file (linked when a doc names it)
    for dep in (links or {}).get("deps", []):
        if (target := module_file(dep)) is not None:   # the module's own file, never one it names
            modules.setdefault(dep["module"], target)
        for name, name_target in (dep.get("name_targets") or {}).items():
            if name_target:
                modules.setdefault(f"{dep['module']}.{name}", name_target)
    # names imported or called from files of the tree, to their definitions' anchors there: each
    # looked up as asked, so the render step knows which anchors the page shows (``page_key``)
    defined = (links or {}).get("anchors", {})
    bound = {symbol["name"]: symbol["signature"] for symbol in facts.get("symbols", [])
             if symbol["kind"] == "import" and symbol.get("signature")}
    # a name can only be found as a local name ending in its last part, or through its first
    # part (bound by an import, or a module): most names a page asks about are neither
    lasts = {key.rpartition(".")[2] for key in local}
    heads = {key.partition(".")[0] for key in modules} | bound.keys()
    own = _own_modules(facts.get("path", ""))
    answers: dict[tuple[str, str], str] = {}    # a definition's signature and doc name the same types again

    def resolve(name: str, scope: str = "") -> str:
        name = name.replace("::", ".")
        if name.rpartition(".")[2] not in lasts and name.partition(".")[0] not in heads:
            return ""
        found = answers.get((name, scope))
        if found is None:
            found = answers[name, scope] = look_up(name, scope)
        return found

    def look_up(name: str, scope: str) -> str:
        while scope:
            if f"{scope}.{name}" in local:
                return local[f"{scope}.{name}"]
            scope = scope.rpartition(".")[0]
        if name in local:
            return local[name]
        for module in own:      # ``pkg.mod.f`` said in ``pkg/mod.py`` itself
            if name.startswith(module) and name[len(module):] in local:
                return local[name[len(module):]]
        head, _, rest = name.partition(".")
        if head in bound:
            name = f"{bound[head]}.{rest}" if rest else bound[head]
        if name in defined:
            path, anchor = defined[name]
            return layout.anchor_link(docs_link(page, path), anchor)
        # a module's own page for the module, and nothing for a name whose definition was not
        # found: its module's page (or a package's) may not define it, and a wrong link is worse
        return docs_link(page, modules[name]) if name in modules else ""

    return resolve


def _own_modules(path: str) -> list[str]:
    """The dotted names (each ending in ``.``) a Python file may be called by, longest first:
    ``a/b/c.py`` is ``a.b.c.``, ``b.c.`` or ``c.``; a package's ``__init__`` is its folder's."""
    stem = path.rpartition(".")[0] if path.endswith((".py", ".pyi", ".pyw")) else ""
    parts = stem.split("/") if stem else []
    if parts and parts[-1] == "__init__":
        parts.pop()
    tail: list[str] = []
    for part in reversed(parts):    # a module name starts below the last folder that is no identifier
        if not part.isidentifier():
            break
        tail.insert(0, part)
    return [".".join(tail[start:]) + "." for start in range(len(tail))]


def _paragraphs(text: str, limit: int = 1500) -> list[str]:
    return [paragraph for paragraph, _ in _blocks(text, limit)]


def _lead(text: str, limit: int = 1500) -> str:
    """The first paragraph that is not a title (``requests.sessions`` over a line of ``~``);
    the title when nothing else is there."""
    first = ""
    # paragraphs made one at a time: the symbol index asks this of every definition's documentation
    for paragraph, title in _each_block(text, limit):
        if not _has_words(paragraph):    # ASCII art (requests' banner of ``.-.`` and ``|(``)
            continue
        if not title:
            return paragraph
        first = first or paragraph
    return first


def _has_words(paragraph: str) -> bool:
    return any(character.isalnum() for character in paragraph)


# a reST or setext title's adornment: one punctuation character repeated, under (and maybe over) it
_ADORNMENT = re.compile(r"([=\-~^\"'`#*+:._])\1{2,}")


def _blocks(text: str, limit: int) -> list[tuple[str, bool]]:
    """Paragraphs with their lines joined, each with whether it is a title: a title's
    adornment lines are dropped and the title is a paragraph of its own."""
    return list(_each_block(text, limit))


_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def _each_block(text: str, limit: int) -> Iterator[tuple[str, bool]]:
    """``_blocks``, one at a time."""
    text = text.strip()
    if not text:
        return
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    for block in _PARAGRAPH_BREAK.split(text):
        lines = [line.strip() for line in block.split("\n")]
        current: list[str] = []
        index = 0
        while index < len(lines):
            line = lines[index]
            under = lines[index + 1] if index + 1 < len(lines) else ""
            if line and not _ADORNMENT.fullmatch(line) and _ADORNMENT.fullmatch(under) and len(under) >= len(line):
                if current and _ADORNMENT.fullmatch(current[-1]):    # its overline
                    current.pop()
                if current:
                    yield " ".join(" ".join(current).split()), False
                yield " ".join(line.split()), True
                current = []
                index += 2
                continue
            current.append(line)
            index += 1
        if any(current):
            yield " ".join(" ".join(current).split()), False


def _dependencies(facts: Facts, links: dict | None, page: str) -> dict | None:
    if facts.get("binary") or (not facts.get("imports") and not _lists_dependencies(str(facts.get("language")))):
        return None
    resolved = (links or {}).get("deps")
    if resolved is None:  # links not computed: everything unresolved, unclassified
        resolved = [dict(imp, target=None, category="third_party") for imp in facts.get("imports", [])]
    groups: dict[str, list] = {"repo": [], "stdlib": [], "third_party": []}
    for dep in resolved:
        target = dep.get("target")
        groups[dep.get("category", "third_party")].append({
            "module": dep["module"], "line": dep["line"], "names": dep.get("names", []),
            "link": docs_link(page, target) if target else ""})
    return groups


def _lists_dependencies(language_id: str) -> bool:
    language = by_id(language_id)
    return language is not None and language.dependencies


def file_kw_model(facts: Facts, *, project: str, src_link: str, section_map: dict[str, list[str]],
                  entries: list[dict] | None = None) -> dict:
    """The model of ``<file>_kw.md``: keywords grouped by kind, each linked to its anchor
    (``entries``: ``symbol_entries(facts)``, if already made)."""
    path = facts["path"]
    page = layout.kw_page(path)
    docs = layout.docs_page(path)
    docs_page_link = layout.sibling_link(posixpath.basename(docs))    # next to this page
    if entries is None:
        entries = symbol_entries(facts)
    # one stable sort for every group (each group's order is the sort's): by the names shown,
    # which are the names themselves unless some are qualified (Python class members)
    shown = _qualified_names(facts, entries)
    ordered_entries = sorted(entries, key=lambda e: (shown.get(id(e), e["name"]).lower(), e["name"], e["line"])) \
        if shown else sorted(entries, key=lambda e: (e["name"].lower(), e["name"], e["line"]))
    groups: dict[str, list] = {}
    listed_in: dict[str, list] = {}    # each kind's group: a file has a few kinds and thousands of keywords
    for entry in ordered_entries:
        kind = entry["kind"]
        group = listed_in.get(kind)
        if group is None:
            group = listed_in[kind] = groups.setdefault(kind_group(kind), [])
        group.append({
            "name": shown.get(id(entry), entry["name"]), "kind": entry["kind_label"], "line": entry["line"],
            "local_to": entry["local_to"], "condition": entry["condition"],
            "link": layout.anchor_link(docs_page_link, entry["anchor"])})
    names = sorted({entry["name"] for entry in entries}, key=lambda name: (name.lower(), name))   # the map's order
    mapped = [(name, sections) for name in names if (sections := section_map.get(name))]
    # where every keyword is (its line, its definition): said once, not for each keyword
    telling = [dict(name=name, sections=sections) for name, sections in mapped if not _ROUTINE.issuperset(sections)]
    return dict(
        project=project, path=path, folder_display=folder_display(posixpath.dirname(path)),
        source_link=src_link, docs_name=posixpath.basename(docs), docs_link=layout.link(page, docs),
        groups=[dict(title=title, keywords=groups[title]) for title in group_order() if title in groups],
        section_map=telling, routine_keywords=len(mapped) - len(telling),
        routine_sections=" and ".join(sorted({section for _, sections in mapped for section in sections
                                               if section in _ROUTINE}, key=_ROUTINE_ORDER.index)),
    )


def _qualified_names(facts: Facts, entries: list[dict]) -> dict[int, str]:
    """A class member's name as its class qualifies it (``GZipDecoder.decode``), by the entry's
    id: a keyword page lists a file's eleven ``decode`` methods apart.  A Python member keeps its
    class path; in other languages a member of a class, struct, interface, enum or impl of this
    file is qualified (a namespace's or package's names are not).  A local definition keeps its
    bare name (the page says which function it is local to)."""
    symbols = facts.get("symbols", [])
    # a Rust trait impl by its trait, so the file's impls of ``Default`` and ``FromStr`` read apart
    traits = {id(entry): f"{symbol['trait']} for {entry['name']}"
              for entry, symbol in zip(entries, symbols) if symbol.get("trait")}
    if facts_language(facts).python_module:
        return {id(entry): f"{symbol['parent']}.{entry['name']}"
                for entry, symbol in zip(entries, symbols)
                if symbol.get("parent") and not entry["local_to"] and symbol["kind"] != "import"}
    classes = {symbol["name"] for symbol in symbols if symbol["kind"] == "class"}
    if not classes:
        return {}
    return {**{id(entry): f"{symbol['parent']}.{entry['name']}"
               for entry, symbol in zip(entries, symbols)
               if symbol.get("parent") in classes and not entry["local_to"] and symbol["kind"] != "import"},
            **traits}


_ROUTINE_ORDER = (SOURCE_SECTION, "Detailed Analysis")
_ROUTINE = frozenset(_ROUTINE_ORDER)


def section_map(docs: Mapping, symbols: Sequence[Mapping], shown_lines: int | None) -> dict[str, list[str]]:
    """For each keyword, the sections of its file's docs page (``docs``: the page's model)
    that show it, by the names each section says it shows.

    Every keyword is read from the file's text, on its line, so it appears in
    Original Source exactly when its line is shown (``shown_lines`` None: no
    source is embedded).
    """
    found: dict[str, list[str]] = {symbol["name"]: [] for symbol in symbols}
    if not found:
        return found
    in_source = set() if shown_lines is None else {
        symbol["name"] for symbol in symbols if symbol["line"] <= shown_lines}
    for shown in docs["sections"]:
        names = in_source if shown["title"] == SOURCE_SECTION else shown["names"]
        if not names:
            continue
        if not isinstance(names, (set, frozenset)):
            names = set(names)
        title = shown["title"]
        if len(names) < len(found):     # a section shows a few of a header's thousands of keywords
            for name in names:
                if (sections := found.get(name)) is not None:
                    sections.append(title)
            continue
        for name, sections in found.items():
            if name in names:
                sections.append(title)
    return found


def own_names(files: Sequence[Mapping]) -> list[str]:
    """The names of a folder's own files (the part of each path after the folder)."""
    return [facts["path"].rpartition("/")[2] for facts in files]


def file_row_inputs(facts: Mapping) -> list:
    """All that a folder index's row of a file shows, besides the file's name."""
    return [facts["type_label"], facts["size"], facts.get("lines", 0),
            facts.get("keyword_count", len(facts.get("symbols", [])))]


def file_row_model(name: str, inputs: list) -> dict:
    """One file's row of its folder's index (``file_row`` of folder_row.md.j2)."""
    type_label, size, lines, keywords = inputs
    return dict(name=name, type_label=type_label, size=size, lines=lines, keywords=keywords,
                docs_link=layout.sibling_link(layout.docs_page(name)),
                kw_link=layout.sibling_link(layout.kw_page(name)))


def folder_index_model(folder: str, *, project: str, file_rows: list[str], subfolders: list[dict],
                       has_keyword_index: bool) -> dict:
    """``file_rows``: the table's rows as rendered (see ``pages.folder_file_rows``)."""
    page = layout.index_page(folder)
    return dict(
        project=project, folder=folder,
        parent_link=layout.link(page, layout.index_page(posixpath.dirname(folder))) if folder else "",
        parent_display=folder_display(posixpath.dirname(folder)) if folder else "",
        doc_link=layout.link(page, layout.doc_page(folder)),
        keywords_link=layout.link(page, layout.keywords_page()) if has_keyword_index and not folder else "",
        folders=[dict(name=posixpath.basename(sub["folder"]), files=sub["total_files"], folders=sub["total_folders"],
                      link=layout.link(page, layout.index_page(sub["folder"]))) for sub in subfolders],
        file_rows=file_rows,
    )


PART_CANDIDATES = 400   # candidates a unit's part keeps for its folder's Main Definitions
FOLDER_PURPOSES = 6      # files whose own words a folder without README or package docstring quotes


def folder_part(rows: list[dict]) -> dict:
    """What a folder's doc.md needs of one unit's summary rows (sorted by path), made at extraction.

    An edit in a large folder changes one unit's part; the folder's page sums its
    units' parts (``merge_folder_parts``) instead of reading every row again.
    Main Definitions keeps each namespace once, where it comes first, with how many
    files open it (every header of a generated folder may open the same one), so a part
    keeps namespaces apart from the other candidates.  Candidates are ranked by how
    many files use them, which only linking knows: a part keeps the first
    ``PART_CANDIDATES`` (documented ones first), the folder's page ranks them.
    A candidate is ``[not documented, not a class, lower-case name, file, line, place
    in the file, symbol]``; ``purposes`` holds ``[file, first sentence]`` of documented files.
    """
    languages: dict[str, list[int]] = {}
    candidates: list[list] = []
    namespaces: dict[str, list] = {}    # name -> [first candidate, files opening it]
    purposes: list[list[str]] = []
    covered = [0, 0]    # public definitions, documented ones (``summary_row``'s ``coverage``)
    readme = init = None
    for facts, name in zip(rows, own_names(rows)):
        _add_totals(languages, facts["type_label"], 1, facts.get("lines", 0), facts["size"])
        for index, count in enumerate(facts.get("coverage", ())):
            covered[index] += count
        opened: set[str] = set()
        for index, symbol in enumerate(facts.get("symbols", [])):
            if symbol["kind"] not in MAIN_DEFINITION_KINDS or symbol.get("parent") or symbol["name"].startswith("_"):
                continue
            item = [not symbol.get("documented"), symbol["kind"] != "class", symbol["name"].lower(), name,
                    symbol["line"], index, symbol]
            if symbol["kind"] != "namespace":
                candidates.append(item)
                continue
            _note_namespace(namespaces, symbol["name"], item, symbol["name"] not in opened)
            opened.add(symbol["name"])
        if facts.get("docstring"):
            if readme is None and name.lower().startswith("readme"):
                readme = [facts["path"], facts["docstring"]]
            if init is None and name == "__init__.py":
                init = [facts["path"], facts["docstring"]]
            if len(purposes) < PART_CANDIDATES and (summary := file_summary(facts)):
                purposes.append([name, summary])
    return {"files": len(rows), "languages": languages, "count": len(candidates),
            "candidates": heapq.nsmallest(PART_CANDIDATES, candidates, key=_candidate_order),
            "namespaces": namespaces, "readme": readme, "init": init, "purposes": purposes, "coverage": covered}


def _candidate_order(item: list) -> list:
    """Documented first, then classes, then by name, file, line and place in the file."""
    return item[:6]


def _add_totals(languages: dict[str, list[int]], label: str, files: int, lines: int, size: int) -> None:
    totals = languages.setdefault(label, [0, 0, 0])
    totals[0] += files
    totals[1] += lines
    totals[2] += size


def _note_namespace(namespaces: dict[str, list], name: str, first: list, files: int) -> None:
    """Count ``files`` more files opening namespace ``name``, and keep where it comes first."""
    entry = namespaces.setdefault(name, [first, 0])
    entry[1] += files
    if _candidate_order(first) < _candidate_order(entry[0]):
        entry[0] = first


_PART_SHAPE = {"files": int, "languages": dict, "count": int, "candidates": list, "namespaces": dict,
               "purposes": list}


def is_folder_part(part: dict) -> bool:
    """Whether a stored part has the shape ``folder_part`` gives (state files can be damaged)."""
    return all(isinstance(part.get(key), kind) for key, kind in _PART_SHAPE.items()) \
        and all(isinstance(part.get(key), (list, type(None))) for key in ("readme", "init"))


def merge_folder_parts(parts: list[dict]) -> dict:
    """One folder's ``folder_part``s as one (a folder of one unit has one part)."""
    languages: dict[str, list[int]] = {}
    namespaces: dict[str, list] = {}
    for part in parts:
        for label, (files, lines, size) in part["languages"].items():
            _add_totals(languages, label, files, lines, size)
        for name, (first, opened) in part["namespaces"].items():
            _note_namespace(namespaces, name, first, opened)
    found = [item for part in parts for item in part["candidates"]] + [first for first, _ in namespaces.values()]
    return {"files": sum(part["files"] for part in parts), "languages": languages,
            "candidates": found, "purposes": [item for part in parts for item in part["purposes"]],
            "count": sum(part["count"] for part in parts) + len(namespaces),
            "also_opened_by": {name: opened - 1 for name, (_, opened) in namespaces.items()},
            # a part stored before coverage was counted has none: it counts nothing
            "coverage": [sum(part.get("coverage", [0, 0])[index] for part in parts) for index in (0, 1)],
            "readme": min((part["readme"] for part in parts if part["readme"]), default=None) or min(
                (part["init"] for part in parts if part["init"]), default=None)}


def _ranked(candidates: list[list], importance: dict[str, dict]) -> list[list]:
    """The ``MAIN_DEFINITIONS_LIMIT`` most important candidates: used by the most files (by name,
    through re-exports; files opening a namespace do not use it), documented, in a file many
    files use, a class; then by name."""
    def key(item: list) -> tuple:
        symbol, counts = item[6], importance.get(item[3], {})
        uses = 0 if symbol["kind"] == "namespace" else counts.get("names", {}).get(symbol["name"], 0)
        return (-uses, item[0], -counts.get("users", 0), *_candidate_order(item)[1:])
    return heapq.nsmallest(MAIN_DEFINITIONS_LIMIT, candidates, key=key)


def _purposes_summary(purposes: list[list[str]], importance: dict[str, dict]) -> dict | None:
    """For a folder without README or package docstring: its files' first sentences, the
    public files most used first."""
    if not purposes:
        return None
    chosen = sorted(purposes, key=lambda item: (item[0].startswith("_"), -importance.get(item[0], {}).get("users", 0),
                                                item[0]))
    return dict(files=[dict(name=name, text=text, link=layout.sibling_link(layout.docs_page(name)))
                       for name, text in chosen[:FOLDER_PURPOSES]],
                more=max(0, len(purposes) - FOLDER_PURPOSES))


def folder_doc_model(folder: str, *, project: str, parts: list[dict], subfolders: list[dict],
                     total_files: int, importance: dict[str, dict] | None = None,
                     folder_diagrams: dict | None = None) -> dict:
    """``parts``: the ``folder_part`` of each unit of the folder; ``importance``: linking's
    counts of uses of its files (``{file name: {"users": n, "names": {name: n}}}``);
    ``folder_diagrams``: its diagrams (``diagrams.folder_diagrams``, None for none)."""
    page = layout.doc_page(folder)
    merged = merge_folder_parts(parts)
    importance = importance or {}
    definitions = [
        dict(kind=kind_label(symbol), name=symbol["name"], file=name, line=line,
             link=layout.sibling_link(layout.docs_page(name), layout.anchor(symbol["kind"], symbol["name"], line)),
             also_in=merged["also_opened_by"].get(symbol["name"], 0) if symbol["kind"] == "namespace" else 0)
        for *_, name, line, _, symbol in _ranked(merged["candidates"], importance)]
    readme = merged["readme"]
    languages = [dict(type_label=label, files=files, lines=lines, size=size)
                 for label, (files, lines, size) in merged["languages"].items()]
    return dict(
        project=project, folder=folder,
        readme=dict(name=posixpath.basename(readme[0]), text=_lead(readme[1], 800)) if readme else None,
        purposes=None if readme else _purposes_summary(merged["purposes"], importance),
        file_count=merged["files"], total_files=total_files, folder_count=len(subfolders),
        total_size=sum(item["size"] for item in languages), total_lines=sum(item["lines"] for item in languages),
        languages=sorted(languages, key=lambda item: (-item["files"], item["type_label"])),
        definitions=definitions,
        coverage=coverage.summary(merged["coverage"][1], merged["coverage"][0]),
        more_definitions=max(0, merged["count"] - MAIN_DEFINITIONS_LIMIT),
        index_link=layout.link(page, layout.index_page(folder)),
        parent_link=layout.link(page, layout.doc_page(posixpath.dirname(folder))) if folder else "",
        parent_display=folder_display(posixpath.dirname(folder)) if folder else "",
        subfolders=[dict(name=posixpath.basename(sub["folder"]), link=layout.link(page, layout.doc_page(sub["folder"])))
                    for sub in subfolders],
        diagrams=folder_diagrams,
    )

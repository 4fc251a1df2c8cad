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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kwdocs.facts import Facts
from kwdocs.languages import by_id, group_order, kind_group
from kwdocs.pages import docstrings, layout

RELATED_LIMIT = 10
SOURCE_SECTION = "Original Source"
MAIN_DEFINITIONS_LIMIT = 40
MAIN_DEFINITION_KINDS = ("class", "function", "namespace")   # what a folder's Main Definitions lists
USED_BY_LIMIT = 300   # a core header has thousands of users: list this many, count the rest
DEFINITION_KINDS = ("namespace", "class", "function", "method", "macro", "type",
                    "constant", "variable", "heading", "key", "target")
_DEFINITION_KINDS = frozenset(DEFINITION_KINDS)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINK_TARGETS = re.compile(r"\]\([^)\s]*\)|<a id=\"[^\"]*\"></a>")  # not words a reader sees


def folder_display(folder: str) -> str:
    return folder or "."


@dataclass(frozen=True)
class SourceView:
    """The part of a file's text a page embeds, and what was left out."""

    text: str | None
    shown_lines: int = 0
    shown_bytes: int = 0
    omitted_bytes: int = 0
    masked_lines: tuple[int, ...] = ()


def source_view(text: str | None, size: int, limit: int, masked_lines: tuple[int, ...] = ()) -> SourceView:
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


def kind_label(symbol: Mapping) -> str:
    detail = symbol.get("detail")
    if not detail:
        return symbol["kind"]
    return detail if symbol["kind"] == "class" else f"{detail} {symbol['kind']}"


def _depths(symbols: Sequence[Mapping]) -> list[int]:
    """How deep each definition nests under the classes and namespaces listed before it.

    A C++ method's parent is its class (``GradMode``), itself inside a namespace
    (``c10``): the chain, not the parent's spelling, gives the depth.
    """
    known: dict[str, int] = {}
    depths = []
    for symbol in symbols:
        parent = symbol.get("parent")
        if not parent:
            depth = 0
        elif parent in known:
            depth = min(4, known[parent] + 1)
        else:
            depth = min(4, 1 + parent.count(".") + parent.count("::"))
        if symbol["kind"] in ("class", "namespace"):
            known[symbol["name"]] = depth
            if parent:
                known[f"{parent}.{symbol['name']}"] = known[f"{parent}::{symbol['name']}"] = depth
        elif symbol["kind"] in ("function", "method"):   # its local classes and functions nest under it
            qualified = f"{parent}.{symbol['name']}" if parent else symbol["name"]
            known[f"{qualified}.<locals>"] = depth
        depths.append(depth)
    return depths


def is_test(facts: Facts) -> bool:
    return "test" in facts.get("findings", {}).get("tags", [])


def defines_tests(facts: Facts) -> bool:
    """Whether the file defines tests itself (a file in a test folder may only help them)."""
    return "defines-tests" in facts.get("findings", {}).get("tags", [])


def symbol_entries(facts: Facts) -> list[dict]:
    """Each symbol as the file's pages show it, in the file's order: both pages list every
    symbol (a header defines thousands), so labels and anchors are worked out once for the two."""
    symbols = facts.get("symbols", [])
    return [{"anchor": layout.anchor(s["kind"], s["name"], s["line"]), "kind_label": kind_label(s),
             "name": s["name"], "signature": s.get("signature", ""), "line": s["line"], "depth": depth,
             "decorators": s.get("decorators", []), "definition": s["kind"] in _DEFINITION_KINDS,
             "kind": s["kind"], "local_to": s["parent"] if "<locals>" in s.get("parent", "") else ""}
            for s, depth in zip(symbols, _depths(symbols))]


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


def file_docs_model(facts: Facts, *, project: str, related: dict, links: dict | None,
                    view: SourceView, src_link: str, entries: list[dict] | None = None,
                    keep_empty: bool = False) -> dict:
    """The model of ``<file>_docs.md``; ``entries``: ``symbol_entries(facts)``, if already made.

    A section with nothing to say is None, and the page leaves it out; ``keep_empty``
    (``empty_sections = "keep"``) keeps it, empty, and the page says so in one line."""
    path = facts["path"]
    folder = posixpath.dirname(path)
    name = posixpath.basename(path)
    page = layout.docs_page(path)
    findings = facts.get("findings", {})
    if entries is None:
        entries = symbol_entries(facts)
    structure: list[dict] = []
    other_keywords: list[dict] = []
    for entry in entries:
        (structure if entry["definition"] else other_keywords).append(entry)
    deps = _dependencies(facts, links, page)
    resolve = _resolver(facts, entries, links, page)
    parse = docstrings.python_doc if facts.get("language") == "python" else docstrings.comment_doc
    symbols = facts.get("symbols", [])
    python = facts.get("language") == "python"
    for entry, symbol in zip(entries, symbols):
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
        resolve_here = functools.partial(resolve, scope=scope.replace("::", "."))
        entry["doc"] = parse(doc, resolve_here) if doc else None
        if annotated:
            entry["signature_spans"] = docstrings.signature_spans(entry["signature"], resolve_here)
    purpose, overview, generated = _purpose_and_overview(facts, entries, findings)
    users = (links or {}).get("used_by", [])
    test_users = (links or {}).get("test_users", [])
    used_by = [{"path": user, "link": layout.link(page, layout.docs_page(user))} for user in users[:USED_BY_LIMIT]]
    indirect = (links or {}).get("indirect_test_users", [])
    tests_using = [{"path": user, "link": layout.link(page, layout.docs_page(user)), "via": ""}
                   for user in test_users[:USED_BY_LIMIT]]
    tests_using += [{"path": user, "link": layout.link(page, layout.docs_page(user)), "via": package,
                     "via_link": layout.link(page, layout.docs_page(package))}
                    for user, package in indirect[:max(0, USED_BY_LIMIT - len(tests_using))]]
    suffix = posixpath.splitext(name)[1]
    parse_note = "" if facts.get("parsed", True) else (
        "This file did not parse; the definitions below were found by a tolerant fallback and may be incomplete.")
    if facts.get("extractor"):
        parse_note = (f"The definitions below were found by {facts['extractor']}: kwdocs has no parser "
                      f"of its own for {facts.get('type_label', 'this language')} files. {parse_note}").strip()
    return dict(
        project=project, path=path, folder_display=folder_display(folder),
        size=facts["size"], type_label=facts["type_label"], extension=suffix,
        lines=facts.get("lines", 0), sha256=facts["sha256"],
        encoding_note=(f"decoded as {facts['encoding']} (not UTF-8)"
                       if facts.get("encoding") not in ("", "utf-8", "ascii", None) else ""),
        problems=[dict(line=p.get("line"), message=p["message"]) for p in facts.get("problems", [])],
        purpose=purpose, generated_note=generated,
        binary=facts.get("binary", False), source_text=view.text, fence_info=facts.get("fence", ""),
        shown=view.shown_bytes, omitted=view.omitted_bytes, masked_lines=list(view.masked_lines),
        overview=_section(overview, keep_empty),
        analysis=_section(bool(parse_note or structure or other_keywords), keep_empty),
        parse_note=parse_note, structure=structure, other_keywords=other_keywords,
        role=_role_section(findings, keep_empty),
        deps=_section(deps, keep_empty),
        patterns=_section(findings.get("patterns", []), keep_empty),
        performance=_section(findings.get("performance", []), keep_empty),
        security=_section(findings.get("security", []), keep_empty),
        test_command=f"python -m pytest {path}" if defines_tests(facts) and facts.get("language") == "python" else "",
        tests_using=tests_using, more_tests=max(0, len(test_users) + len(indirect) - len(tests_using)),
        used_by=used_by, more_users=max(0, len(users) - USED_BY_LIMIT),
        related=[dict(name=other, link=layout.link(page, layout.docs_page(other)), why=why)
                 for other, why in related["files"]],
        more_related=related["more"],
        docs_name=posixpath.basename(page), docs_link=layout.link(page, page),
        kw_name=posixpath.basename(layout.kw_page(path)), kw_link=layout.link(page, layout.kw_page(path)),
        index_link=layout.link(page, layout.index_page(folder)),
        doc_link=layout.link(page, layout.doc_page(folder)),
        src_link=src_link,
    )


def _section(content, keep_empty: bool):
    """A section's content, or None (left out) when it has nothing to say and empty sections
    are not kept; a kept empty section is its empty content, which the page says in one line."""
    if content:
        return content
    return (content if content is not None else {}) if keep_empty else None


def _role_section(findings: dict, keep_empty: bool) -> list[str] | None:
    """Architecture & Design: the role rules' sentences; one that only says which folder the
    file is in (tagged ``no-role``) is kept only with the seeds' full layout."""
    role = findings.get("role", [])
    if "no-role" in findings.get("tags", []) and not keep_empty:
        return None
    return role or ([] if keep_empty else None)


_GENERATED = re.compile(r"@generated|\bdo not edit\b|\b(?:auto(?:matically)?[- ]?)generated\b|"
                        r"\bgenerated (?:by|from|with|using)\b", re.IGNORECASE)
_GENERATED_BY = re.compile(r"\b(?:generated|created)\s+(?:automatically\s+)?(?:by|with|using)\s+"
                           r"([`'\"]?[\w./-]+[`'\"]?)", re.IGNORECASE)
_GENERATED_FROM = re.compile(r"\bfrom\s+([`'\"]?[\w./-]*[\w/][`'\"]?)")
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]`'\"][.!?])\s+(?=[A-Z`(])")
_NOT_DEFINES = frozenset({"heading", "key", "namespace", "target"})   # what a file defines, not holds
_INCLUDE_GUARD = re.compile(r"_(?:H|HPP|HH|HXX|CUH|INCLUDED)_*$|^_*INCLUDE_")
PURPOSE_NAMES = 3          # definitions a purpose names before "and N more"
SUMMARY_CHARS = 300        # the longest summary sentence a purpose quotes


def _purpose_and_overview(facts: Facts, entries: list[dict], findings: dict) -> tuple[list[str], list[str], str]:
    """File Purpose sentences, High-Level Overview paragraphs and a generated-file note.

    Both are the file's own words: its module docstring or leading comment (a
    generated-file banner becomes the note instead), then what it defines, from
    the definitions' own summaries.  The rules' kind sentences (test, header ...)
    follow; a fallback sentence is kept only when the file says nothing itself."""
    generated = ""
    lines = []
    for line in facts.get("docstring", "").split("\n"):   # a banner line is a note, not the purpose
        if _GENERATED.search(line):
            generated = generated or _generated_note(line)
        else:
            lines.append(line)
    kept = _paragraphs("\n".join(lines))
    stem = posixpath.basename(facts["path"]).split(".", 1)[0].lstrip("_")
    defines = (_defines_sentence(entries, facts.get("language") in ("cpp", "cuda"), stem)
               or _reexports_sentence(facts))
    purpose: list[str] = []
    if kept:
        purpose.append(_escaped_sentence(kept[0]))
    if defines:
        purpose.append(defines)
    if not purpose:
        purpose.extend(_holds_sentence(facts, entries))
    rule_sentences = findings.get("purpose", [])
    if not purpose or "unclassified" not in findings.get("tags", []):
        purpose.extend(rule_sentences)
    if not purpose:
        purpose.append(f"{_code(facts['path'])} has no documentation of its own and defines nothing kwdocs lists.")
    overview = [render_prose(paragraph) for paragraph in kept]
    if defines:
        overview.append(defines)
    return purpose, overview, generated


def _reexports_sentence(facts: Facts) -> str:
    """For a Python module that defines nothing: the names it imports, which it exists to
    re-export (``Imports `Linear`, `Conv2d` and 4 more from `torch.ao.nn.qat.modules`.``)."""
    if facts.get("language") != "python":
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


def _escaped_sentence(paragraph: str) -> str:
    """The first sentence, ending as one (a comment's title line often has no full stop)."""
    sentence = _first_sentence(paragraph)
    return render_prose(sentence if sentence.endswith((".", "!", "?", "…", ":")) else sentence + ".")


def _importance(entry: dict, stem: str) -> tuple:
    """Named after the file first (``Linear`` in ``linear.py``), then what is not a macro, then
    documented ones, in file order."""
    name = entry["name"].lower()
    return (name != stem, entry["kind"] == "macro", stem not in name, not entry.get("doc"), entry["line"])


def _defines_sentence(entries: list[dict], c_family: bool, stem: str) -> str:
    """``Defines `Linear`, `Bilinear` and 2 more: applies an affine ...`` from the file's
    top-level definitions, public ones first, and the first summary among them."""
    candidates = [entry for entry in entries if entry["definition"] and entry["kind"] not in _NOT_DEFINES
                  and not (entry["kind"] == "macro" and _INCLUDE_GUARD.search(entry["name"]))]
    if not candidates:
        return ""
    if c_family:   # a header's definitions are inside its namespaces: all but members count
        top = [entry for entry in candidates if entry["kind"] != "method"]
    else:
        top = [entry for entry in candidates if entry["depth"] == 0]
    if not top:
        return ""
    public = sorted([entry for entry in top if not entry["name"].startswith("_")] or top,
                    key=functools.partial(_importance, stem=stem.lower()))
    distinct = list(dict.fromkeys(entry["name"] for entry in public))   # overloads once
    named = distinct[:PURPOSE_NAMES]
    names = ", ".join(_code(name) for name in named)
    rest = len({entry["name"] for entry in top}) - len(named)
    sentence = f"Defines {names}" + (f" and {rest:,} more" if rest else "")
    for entry in public:
        doc = entry.get("doc")
        summary = docstrings.summary_text(doc) if doc else ""
        if summary:
            return f"{sentence}; {_code(entry['name'])}: {_escaped_sentence(' '.join(summary.split()))}"
    return sentence + "."


def _code(text: str) -> str:
    from kwdocs.pages.render import inline_code
    return inline_code(text)


def render_prose(text: str) -> str:
    from kwdocs.pages.render import prose
    return prose(text)


def _resolver(facts: Facts, entries: list[dict], links: dict | None, page: str) -> Callable[..., str]:
    """Names a docstring or doc comment mentions -> links: this file's definitions to their
    anchors, names imported from files of the tree to those files' pages.  Everything it
    reads is in the page's inputs (facts and links), so a page is rendered again whenever
    a link it shows may have moved."""
    local: dict[str, str] = {}
    for entry, symbol in zip(entries, facts.get("symbols", [])):
        if entry["definition"]:
            local.setdefault(entry["name"], "#" + entry["anchor"])
            if symbol.get("parent"):
                local.setdefault(f"{symbol['parent']}.{entry['name']}".replace("::", "."), "#" + entry["anchor"])
    modules: dict[str, str] = {}
    for dep in (links or {}).get("deps", []):
        target = dep.get("target")
        if target and dep.get("module"):
            modules.setdefault(dep["module"], layout.link(page, layout.docs_page(target)))
        for name, name_target in (dep.get("name_targets") or {}).items():
            if name_target:
                modules.setdefault(f"{dep['module']}.{name}", layout.link(page, layout.docs_page(name_target)))
    bound = {symbol["name"]: symbol["signature"] for symbol in facts.get("symbols", [])
             if symbol["kind"] == "import" and symbol.get("signature")}
    # a name can only be found as a local name ending in its last part, or through its first
    # part (bound by an import, or a module): most names a page asks about are neither
    lasts = {key.rpartition(".")[2] for key in local}
    heads = {key.partition(".")[0] for key in modules} | bound.keys()

    def resolve(name: str, scope: str = "") -> str:
        name = name.replace("::", ".")
        if name.rpartition(".")[2] not in lasts and name.partition(".")[0] not in heads:
            return ""
        while scope:
            if f"{scope}.{name}" in local:
                return local[f"{scope}.{name}"]
            scope = scope.rpartition(".")[0]
        if name in local:
            return local[name]
        head, _, rest = name.partition(".")
        if head in bound:
            name = f"{bound[head]}.{rest}" if rest else bound[head]
        prefix = name
        while prefix:
            if prefix in modules:
                return modules[prefix]
            prefix = prefix.rpartition(".")[0]
        return ""

    return resolve


def _paragraphs(text: str, limit: int = 1500) -> list[str]:
    text = text.strip()
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text) if block.strip()]


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
            "link": layout.link(page, layout.docs_page(target)) if target else ""})
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
    # one stable sort by name for every group (each group's order is the sort's) and the map
    ordered_entries = sorted(entries, key=lambda e: (e["name"].lower(), e["name"], e["line"]))
    groups: dict[str, list] = {}
    for entry in ordered_entries:
        groups.setdefault(kind_group(entry["kind"]), []).append({
            "name": entry["name"], "kind": entry["kind_label"], "line": entry["line"], "local_to": entry["local_to"],
            "link": layout.anchor_link(docs_page_link, entry["anchor"])})
    names = dict.fromkeys(entry["name"] for entry in ordered_entries)
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


_ROUTINE_ORDER = (SOURCE_SECTION, "Detailed Analysis")
_ROUTINE = frozenset(_ROUTINE_ORDER)


def section_map(docs_markdown: str, symbols: Sequence[Mapping], shown_lines: int | None) -> dict[str, list[str]]:
    """For each keyword, the ``##`` sections of the rendered docs page that mention it.

    Every keyword is read from the file's text, on its line, so it appears in
    Original Source exactly when its line is shown (``shown_lines`` None: no
    source is embedded); that section, by far the largest, is not searched.
    """
    found: dict[str, list[str]] = {symbol["name"]: [] for symbol in symbols}
    if not found:
        return found
    in_source = set() if shown_lines is None else {
        symbol["name"] for symbol in symbols if symbol["line"] <= shown_lines}
    words = list(filter(_WORD.fullmatch, found))     # in the file's order
    simple = set(words)
    others = [name for name in found if name not in simple]
    for title, body in _sections(docs_markdown):
        if title == SOURCE_SECTION:
            mentioned = in_source
        else:
            seen = _LINK_TARGETS.sub("", body) if "](" in body or "<a id=" in body else body
            known = _words_in(seen, words) if len(seen) > _SEARCH_RATIO * len(words) else None
            mentioned = simple.intersection(_WORD.findall(seen)) if known is None else known
            if others:
                mentioned.update(_mentioned_in_order(body, others))
        for name in mentioned:
            found[name].append(title)
    return found


_DIGITS = frozenset("0123456789")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") | _DIGITS
_SEARCH_RATIO = 64     # text per name above which searching each name beats splitting into words
_TRIES = 8             # occurrences of a name inside longer words looked past before giving up


def _words_in(text: str, words: list[str]) -> set[str] | None:
    """Which of ``words`` are words of ``text`` (as ``_WORD.findall`` splits it), each found
    from where the previous one was (None: a word given up on, inside longer words each
    time): the section that lists a file's definitions names them all in the file's order,
    and splitting sections into words was most of the section map."""
    found = set()
    hint = 0
    size = len(text)
    for word in words:
        at = text.find(word, hint)
        for _ in range(_TRIES):
            if at < 0:
                if not hint:
                    break           # nowhere in the text
                at, hint = text.find(word), 0    # the first search started at the hint
                continue
            end = at + len(word)
            before = text[at - 1] if at else " "
            if before in _DIGITS:
                return None         # findall's word may start after the digits: let it say
            # a whole word: no word character on either side (then findall starts a word here)
            if before not in _WORD_CHARS and (end == size or text[end] not in _WORD_CHARS):
                found.add(word)
                hint = end
                break
            at = text.find(word, at + 1)
        else:
            return None
    return found


def _mentioned_in_order(text: str, names: list[str]) -> list[str]:
    """The ``names`` that occur in ``text`` (as substrings), searched from where the previous
    one was found, then before it: a page lists a file's keywords in the file's order, and
    searching each of a header's 1,300 includes from the top of its sections was a tenth
    of the section map."""
    found = []
    hint = 0
    for name in names:
        at = text.find(name, hint)
        if at < 0 and hint:
            at = text.find(name, 0, hint + len(name) - 1)    # one starting before the hint
        if at >= 0:
            found.append(name)
            hint = at
    return found


# where the lines that matter to the split may start: fences and ## headings (a page embeds
# thousands of other lines; a literal prefix lets the regex engine skip to candidates)
_CANDIDATE = re.compile(r"\n(?:`{3}|~{3}|## )")
_MARK = re.compile(r"(?:(`{3,}|~{3,})(.*)|## (.*))$", re.MULTILINE)


def _sections(markdown: str) -> list[tuple[str, str]]:
    """``(title, body)`` of each ``##`` section, ignoring ``##`` lines inside fenced blocks."""
    headings: list[tuple[str, int]] = []    # title, where its line ends
    starts: list[int] = []                   # where each heading's line starts
    text = "\n" + markdown                  # offsets in text are one past those in markdown
    position = 0
    while (candidate := _CANDIDATE.search(text, position)) is not None:
        mark = _MARK.match(text, candidate.start() + 1)
        position = candidate.end()
        if mark is None:
            continue
        if mark.group(1):
            position = _fence_end(text, mark.group(1), mark.end())
        else:
            headings.append((mark.group(3).strip(), mark.end() - 1))
            starts.append(mark.start() - 1)
    ends = [start - 1 for start in starts[1:]] + [len(markdown)]
    return [(title, markdown[line_end + 1:max(end, line_end + 1)])
            for (title, line_end), end in zip(headings, ends)]


def _fence_end(text: str, fence: str, position: int) -> int:
    """Where the line that closes ``fence`` ends (the end of ``text`` if none does).  Only lines
    starting with the fence can close it: a substring search finds them, where stopping at
    each line of the embedded source that looks like a fence or a heading cost a fifth of
    the section map."""
    while (found := text.find("\n" + fence, position)) != -1:
        mark = _MARK.match(text, found + 1)    # ticks: the fence's character, at least as many
        assert mark is not None                # it starts with the fence
        if not mark.group(2).strip():
            return mark.end()
        position = found + 1
    return len(text)


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


def folder_part(rows: list[Facts]) -> dict:
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
    readme = init = None
    for facts, name in zip(rows, own_names(rows)):
        _add_totals(languages, facts["type_label"], 1, facts.get("lines", 0), facts["size"])
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
            if len(purposes) < PART_CANDIDATES and (first := _paragraphs(facts["docstring"], 600)):
                purposes.append([name, _first_sentence(first[0])])
    return {"files": len(rows), "languages": languages, "count": len(candidates),
            "candidates": heapq.nsmallest(PART_CANDIDATES, candidates, key=_candidate_order),
            "namespaces": namespaces, "readme": readme, "init": init, "purposes": purposes}


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
                     total_files: int, importance: dict[str, dict] | None = None) -> dict:
    """``parts``: the ``folder_part`` of each unit of the folder; ``importance``: linking's
    counts of uses of its files (``{file name: {"users": n, "names": {name: n}}}``)."""
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
        readme=dict(name=posixpath.basename(readme[0]), text=_paragraphs(readme[1], 800)[0]) if readme else None,
        purposes=None if readme else _purposes_summary(merged["purposes"], importance),
        file_count=merged["files"], total_files=total_files, folder_count=len(subfolders),
        total_size=sum(item["size"] for item in languages), total_lines=sum(item["lines"] for item in languages),
        languages=sorted(languages, key=lambda item: (-item["files"], item["type_label"])),
        definitions=definitions,
        more_definitions=max(0, merged["count"] - MAIN_DEFINITIONS_LIMIT),
        index_link=layout.link(page, layout.index_page(folder)),
        parent_link=layout.link(page, layout.doc_page(posixpath.dirname(folder))) if folder else "",
        parent_display=folder_display(posixpath.dirname(folder)) if folder else "",
        subfolders=[dict(name=posixpath.basename(sub["folder"]), link=layout.link(page, layout.doc_page(sub["folder"])))
                    for sub in subfolders],
    )

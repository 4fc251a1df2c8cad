"""A folder page's diagrams as data: the import graph of its files (and the folders they
import from) and the inheritance of its classes, each bounded to its most connected nodes.

The templates lay a graph out (as a Mermaid block in Markdown, as the site's ``pre.mermaid``);
here a graph is ``{"nodes": [{"id", "label", "kind"}], "edges": [[from id, to id]],
"hidden_nodes": n, "hidden_edges": n}``, the same for the same input: nodes are ranked by
their edges then their labels, and numbered in the order of their labels.
"""
from __future__ import annotations

import heapq
import posixpath
import re
from collections.abc import Collection, Mapping

from kwdocs.extract.links import bound_modules
from kwdocs.facts import Facts
from kwdocs.languages import by_id

MAX_NODES = 30
"""The most connected nodes a diagram shows; the rest are counted under it."""

# the kinds of node, in the order their ids are given and their letters
_KIND_PREFIX = {"file": "f", "folder": "d", "class": "c", "outside": "o", "unresolved": "u"}

Node = tuple[str, str]      # (kind, the key that tells it apart: a path, a "path:Class" or a name)


def folder_diagrams(folder: str, importance: Mapping[str, Mapping]) -> dict[str, dict | None] | None:
    """The diagrams of ``folder``'s page from linking's record of its files (``importance``:
    file name -> ``deps`` and ``classes``, see the link step): ``imports`` and ``inheritance``,
    each None without an edge to show; None for neither."""
    imports, inheritance = import_graph(folder, importance), inheritance_graph(folder, importance)
    return {"imports": imports, "inheritance": inheritance} if imports or inheritance else None


_BASE_NAME = re.compile(r"\s*([A-Za-z_][\w.]*)\s*(?:\[.*\])?\s*")


def base_names(signature: str) -> list[str]:
    """The base classes a Python class's signature names (``(Base[T], Mixin, metaclass=M)``:
    ``Base``, ``Mixin``), from the parentheses after any type parameters."""
    start = signature.find("(", signature.rfind("]", 0, signature.find("(")) + 1 if signature.startswith("[") else 0)
    if start < 0 or not signature.endswith(")"):
        return []
    names: list[str] = []
    depth, begin, inner = 0, 0, signature[start + 1:-1]
    for index, char in enumerate(inner + ","):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            match = _BASE_NAME.fullmatch(inner[begin:index])
            if match:     # a keyword (``metaclass=M``) or an expression is not a base
                names.append(match.group(1))
            begin = index + 1
    return names


def class_bases(facts: Facts) -> list[list]:
    """A Python file's top-level classes that name bases, as ``[class, [[base as written, as
    the imports resolve it or ""], ...]]`` (``nn.Module`` with ``from torch import nn``:
    ``torch.nn.Module``); ``object`` is left out."""
    language = by_id(facts.get("language") or "")
    if language is None or not language.python_module:   # bases as Python's imports resolve them
        return []
    bound: dict[str, str] | None = None
    found = []
    for symbol in facts.get("symbols", []):
        if symbol["kind"] != "class" or symbol.get("parent"):
            continue
        bases = [base for base in base_names(symbol.get("signature") or "") if base != "object"]
        if not bases:
            continue
        if bound is None:
            bound = bound_modules(facts)
        pairs = []
        for base in bases:
            head, dot, rest = base.partition(".")
            pairs.append([base, f"{bound[head]}.{rest}" if dot and head in bound else ""])
        found.append([symbol["name"], pairs])
    return found


def resolved_bases(rel: str, classes: list[list], own: Collection[str], links: Mapping) -> list[list]:
    """``classes`` (``class_bases`` of the file ``rel``) with each base's defining file, or None
    where no file of the tree defines it: the file itself (``own``: its top-level names), a
    named import's definition (the link step's ``names``) or a dotted name's (``anchors``)."""
    names, anchors = links.get("names", {}), links.get("anchors", {})
    resolved = []
    for name, bases in classes:
        found = []
        for written, qualified in bases:
            if written in own:
                place: str | None = rel
            elif "." not in written:
                target = names.get(written)
                place = target[0] if target and target[1] is not None else None
            else:
                place = (anchors.get(qualified) or [None])[0]
            found.append([written, place])
        resolved.append([name, found])
    return resolved


def file_inheritance(rel: str, facts: Facts, links: Mapping | None, own: Collection[str]) -> dict | None:
    """A file's page's diagram of its classes' bases (``own``: its top-level names), or None."""
    classes = class_bases(facts)
    if not classes:
        return None
    folder, _, name = rel.rpartition("/")
    return inheritance_graph(folder, {name: {"classes": resolved_bases(rel, classes, own, links or {})}})


def _rel(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def import_graph(folder: str, importance: Mapping[str, Mapping]) -> dict | None:
    """Imports between the folder's files, and from them to the other folders of the tree."""
    own = {_rel(folder, name) for name in importance}
    edges: set[tuple[Node, Node]] = set()
    labels: dict[Node, str] = {}
    # each dependency outside the folder's files -> its folder's node (None: left out), worked out
    # once: the 7,000 headers of a folder include the same few dozen files
    outside: dict[str, Node | None] = {}
    for name, counts in importance.items():
        source: Node = ("file", _rel(folder, name))
        for dep in counts.get("deps") or ():
            if dep in own:
                target: Node = ("file", dep)
                if target == source:
                    continue
                if target not in labels:
                    labels[target] = posixpath.basename(dep)
            else:
                if dep not in outside:
                    place = posixpath.dirname(dep)
                    # a file of the folder that is not its own (a build's oddity) is left out
                    outside[dep] = None if place == folder else ("folder", place)
                    if place != folder:
                        labels[("folder", place)] = f"{place}/" if place else "(repository root)"
                found = outside[dep]
                if found is None:
                    continue
                target = found
            labels[source] = name
            edges.add((source, target))
    return _bounded(edges, labels)


def inheritance_graph(folder: str, importance: Mapping[str, Mapping]) -> dict | None:
    """Each class of the folder's files to its bases: classes of the folder by name, classes
    defined elsewhere in the tree by name and file, bases no file defines as written."""
    edges: set[tuple[Node, Node]] = set()
    labels: dict[Node, str] = {}
    own = {_rel(folder, name) for name in importance}
    for name, counts in importance.items():
        rel = _rel(folder, name)
        for class_name, bases in counts.get("classes") or ():
            source: Node = ("class", f"{rel}:{class_name}")
            labels[source] = class_name
            for written, place in bases:
                if place is None:
                    target: Node = ("unresolved", written)
                    labels[target] = written
                else:
                    base = written.rpartition(".")[2]
                    target = ("class" if place in own else "outside", f"{place}:{base}")
                    labels.setdefault(target, base if place in own else f"{base} ({place})")
                if target != source:
                    edges.add((source, target))
    _tell_apart(labels)
    return _bounded(edges, labels)


def _tell_apart(labels: dict[Node, str]) -> None:
    """Classes of the folder that share a name are labelled with their file's name too."""
    seen: dict[str, int] = {}
    for node, label in labels.items():
        if node[0] == "class":
            seen[label] = seen.get(label, 0) + 1
    for node, label in labels.items():
        if node[0] == "class" and seen[label] > 1:
            labels[node] = f"{label} ({posixpath.basename(node[1].rpartition(':')[0])})"


def _bounded(edges: set[tuple[Node, Node]], labels: dict[Node, str]) -> dict | None:
    """The graph of ``edges`` as data, kept to its ``MAX_NODES`` most connected nodes (ties by
    label, then key); None without an edge."""
    if not edges:
        return None
    degree: dict[Node, int] = {}
    for source, target in edges:
        degree[source] = degree.get(source, 0) + 1
        degree[target] = degree.get(target, 0) + 1
    # the first MAX_NODES of them all sorted, without sorting the thousands of a large folder
    kept = set(heapq.nsmallest(MAX_NODES, degree, key=lambda node: (-degree[node], labels[node], node)))
    shown = sorted(kept, key=lambda node: (list(_KIND_PREFIX).index(node[0]), labels[node], node))
    ids: dict[Node, str] = {}
    counters: dict[str, int] = {}
    for node in shown:
        prefix = _KIND_PREFIX[node[0]]
        ids[node] = f"{prefix}{counters.get(prefix, 0)}"
        counters[prefix] = counters.get(prefix, 0) + 1
    order = {node: index for index, node in enumerate(shown)}
    kept_edges = sorted(((source, target) for source, target in edges if source in kept and target in kept),
                        key=lambda edge: (order[edge[0]], order[edge[1]]))
    return {"nodes": [{"id": ids[node], "label": labels[node], "kind": node[0]} for node in shown],
            "edges": [[ids[source], ids[target]] for source, target in kept_edges],
            "hidden_nodes": len(degree) - len(kept), "hidden_edges": len(edges) - len(kept_edges)}

"""Where the name links of a built tree's pages land (issue 32): on a file that defines the name,
on one that only imports it, on a package page when the definition is elsewhere, or on a file
that neither defines nor imports it (a wrong link).

Usage: python bench/name_links.py --src TREE --out BUILT [--examples K]

A name link is a Markdown link whose text is a code name (``[`torch.nn.Linear`](...)``) on a
``*_docs.md`` page of a Python file, outside its Dependencies section (file links).  What a
file defines and imports is read from its source with ``ast``, independently of kwdocs'
extractors and link step.
"""
from __future__ import annotations

import argparse
import ast
import posixpath
import re
from collections import Counter
from pathlib import Path

_NAME_LINK = re.compile(r"\[`([A-Za-z_][\w.]*)`\]\(([^)\s]*)\)")
_PAGE = "_docs.md"


def names_of(source: Path) -> tuple[set[str], set[str]]:
    """(names the file defines anywhere: classes, functions, assigned names and ``self.`` attributes; names its imports
    bind, with ``*`` for a star import)."""
    try:
        tree = ast.parse(source.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return set(), set()
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id == "self"):
            defined.add(node.attr)      # an instance attribute, which pages list as pdoc does
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imported.update({alias.asname or alias.name.partition(".")[0], alias.name.rpartition(".")[2]})
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported.update({alias.asname or alias.name, alias.name})
    return defined, imported


_ANCHORS: dict[Path, str] = {}


def _has_anchor(page: Path, name: str) -> bool:
    """Does ``page`` hold a definition's anchor for ``name`` (``l27-class-argaction``)?"""
    if page not in _ANCHORS:
        _ANCHORS[page] = page.read_text(encoding="utf-8") if page.is_file() else ""
    return re.search(rf'<a id="l\d+-[a-z-]+-{re.escape(name.lower())}"', _ANCHORS[page]) is not None


def renames(source: Path) -> dict[str, str]:
    """The names a file's ``from ... import X as Y`` binds: Y -> X."""
    try:
        tree = ast.parse(source.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    return {alias.asname: alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if alias.asname}


def _without_dependencies(text: str) -> str:
    """A page without its Dependencies section: it links each import's module to the file the
    import resolves to (a submodule for ``from pkg import sub``), a file link, not a name's."""
    start = text.find("\n## Dependencies\n")
    if start < 0:
        return text
    end = text.find("\n## ", start + 1)
    return text[:start] + (text[end:] if end >= 0 else "")


def is_module(name: str, path: str) -> bool:
    """True when ``path`` is the file of the dotted module ``name`` (``a.b`` -> ``a/b.py``, ``a/b/__init__.py``)."""
    stem = path.rpartition(".")[0].removesuffix("/__init__")
    return stem == name.replace(".", "/") or stem.endswith("/" + name.replace(".", "/"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--examples", type=int, default=8, help="examples of each bad kind to print")
    args = parser.parse_args()
    cache: dict[str, tuple[set[str], set[str]]] = {}

    def facts(rel: str) -> tuple[set[str], set[str]]:
        if rel not in cache:
            cache[rel] = names_of(args.src / rel)
        return cache[rel]

    definers: dict[str, int] = Counter()    # name -> files defining it, for "the definition is elsewhere"
    pages = sorted(path for path in args.out.rglob(f"*.py{_PAGE}") if ".kwdocs" not in path.parts)
    for page in pages:
        for name in facts(page.relative_to(args.out).as_posix()[:-len(_PAGE)])[0]:
            definers[name] += 1
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = {"wrong file": [], "package page": [], "page top": []}
    for page in pages:
        rel = page.relative_to(args.out).as_posix()
        renamed = renames(args.src / rel[:-len(_PAGE)])
        for name, address in _NAME_LINK.findall(_without_dependencies(page.read_text(encoding="utf-8"))):
            target_page = address.partition("#")[0]
            if name.endswith(".md") or target_page.startswith(("http:", "https:")) or (
                    target_page and not target_page.endswith(_PAGE)):
                continue    # a page's own cross-references, not names
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target_page)) if target_page else rel
            target = target[:-len(_PAGE)]
            if not target.endswith(".py"):
                continue
            counts["name links"] += 1
            last = name.rpartition(".")[2]
            defined, imported = facts(target)
            # ``from .clip_grad import _clip as clip`` on the linking page: ``clip`` is ``_clip``
            if last in defined or renamed.get(last) in defined or is_module(name, target):
                kind = "define"
            elif last in imported or "*" in imported:   # ``from .core import *`` may bring it
                kind = "package page" if target.endswith("__init__.py") and definers[last] else "import"
            else:
                kind = "wrong file"
            counts[kind] += 1
            if "#" not in address and _has_anchor(args.out / (target + _PAGE), last):
                counts["page top"] += 1
                if len(examples["page top"]) < args.examples:
                    examples["page top"].append(f"{rel[:-len(_PAGE)]}: `{name}` -> {target}")
            if kind in examples and len(examples[kind]) < args.examples:
                examples[kind].append(f"{rel[:-len(_PAGE)]}: `{name}` -> {target}")
    total = max(counts["name links"], 1)
    print(f"pages of Python files: {len(pages)}; name links: {counts['name links']}")
    labels = {"define": "to a file that defines the name (or is the module)",
              "import": "to a file that imports it",
              "package page": "stopping at a package page, defined elsewhere",
              "wrong file": "to a file that neither defines nor imports it",
              "page top": "to a page's top where the name has an anchor"}
    for kind, label in labels.items():
        print(f"  {label}: {counts[kind]} ({100 * counts[kind] / total:.1f}%)")
        for example in examples.get(kind, []):
            print("     ", example)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

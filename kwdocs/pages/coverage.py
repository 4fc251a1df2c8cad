"""Documentation coverage: how many of a file's public definitions have documentation of their own.

Plain data from the facts record: ``file_coverage`` counts one file, the page models and
``kwdocs coverage`` / ``kwdocs check --min-coverage`` add the counts up.  What "public" means
follows each language's own convention (see docs/pages.md, "Documentation coverage").
"""
from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Mapping

# what a page lists as definitions, so that its sentence counts what the reader sees listed; not
# namespaces: one is opened by many files and documented in at most one of them
COUNTED_KINDS = frozenset(("class", "function", "method", "type", "macro", "constant", "variable"))
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inl", ".cuh")


def is_public(language: str, path: str, symbol: Mapping, listed: Collection[str] | None = None) -> bool:
    """Whether ``symbol`` of a ``language`` file at ``path`` is public by its language's convention
    (``listed``: a Python module's ``__all__``, if it has one; a JavaScript or TypeScript
    module's exported names, ``exported_names``)."""
    name, parent = symbol["name"], symbol.get("parent", "")
    if "<locals>" in parent:    # a function's own helpers are nobody else's business
        return False
    if language == "python":    # no leading underscore on it or on any class enclosing it
        outermost = parent.partition(".")[0] if parent else name
        if listed is not None and outermost not in listed:   # ``__all__`` says what the module exports
            return False
        return not (name.startswith("_") or parent.startswith("_") or "._" in parent)
    if language in ("cpp", "cuda"):     # what a header declares is what other files may use
        return path.endswith(HEADER_SUFFIXES)
    if language in ("javascript", "typescript"):     # exported from its module, or a member of what is
        if not parent:
            return symbol.get("detail", "").startswith("exported") or (listed is not None and name in listed)
        # as TypeDoc lists them: an exported class's or interface's members, not its private ones
        return (listed is not None and parent.partition(".")[0] in listed and not name.startswith("#")
                and not symbol.get("signature", "").startswith("private "))
    if language == "go":        # a capitalised name is exported from its package
        return name[:1].isupper()
    if language == "rust":      # declared ``pub``
        return symbol.get("signature", "").startswith("pub")
    if language in ("java", "lua"):     # no convention the facts record: every definition counts
        return not name.startswith("_")
    return False


def file_coverage(facts: Mapping) -> dict:
    """``{"public": n, "documented": n, "undocumented": [[line, qualified name], ...]}`` of one file."""
    counted = _public_symbols(facts)
    missing = [[symbol["line"], f"{symbol['parent']}.{symbol['name']}" if symbol.get("parent") else symbol["name"]]
               for symbol in counted if not symbol.get("doc")]
    return {"public": len(counted), "documented": len(counted) - len(missing), "undocumented": missing}


def file_counts(facts: Mapping) -> tuple[int, int]:
    """``file_coverage``'s (public, documented), without naming what is undocumented: pages show
    the counts alone, and a header's undocumented names are thousands."""
    counted = _public_symbols(facts)
    return len(counted), sum(1 for symbol in counted if symbol.get("doc"))


def _public_symbols(facts: Mapping) -> list[Mapping]:
    """The file's symbols that coverage counts: public definitions of ``COUNTED_KINDS``."""
    # a test file's functions are run, not called: nobody reads their documentation to use them
    if "test" in facts.get("findings", {}).get("tags", []):
        return []
    language, path = facts.get("language", ""), facts.get("path", "")
    if language in ("javascript", "typescript"):
        listed: frozenset[str] | None = exported_names(facts)
    else:
        listed = frozenset(facts["exports"]) if isinstance(facts.get("exports"), list) else None    # ``__all__``
    return [symbol for symbol in facts.get("symbols", [])
            if symbol["kind"] in COUNTED_KINDS and is_public(language, path, symbol, listed)]


def exported_names(facts: Mapping) -> frozenset[str]:
    """A JavaScript or TypeScript module's exported top-level names: declared ``export`` or named
    in an ``export { ... }`` clause."""
    return frozenset(symbol["name"] for symbol in facts.get("symbols", []) if not symbol.get("parent") and (
        symbol["kind"] == "export" or symbol.get("detail", "").startswith("exported")))


def percent(documented: int, public: int) -> float:
    """The share documented, in percent to one decimal; a file with nothing public is fully covered."""
    return 100.0 if not public else round(100.0 * documented / public, 1)


def summary(documented: int, public: int) -> dict | None:
    """What a page shows (None when there is nothing public to count)."""
    if not public:
        return None
    return {"documented": documented, "public": public, "percent": percent(documented, public)}


def by_folder(files: Iterable[tuple[str, dict]]) -> list[dict]:
    """Each folder holding counted files (its own files, not those of its subfolders), by path,
    from ``(path, file_coverage)`` pairs."""
    folders: dict[str, list[int]] = {}
    for path, counts in files:
        if counts["public"]:
            totals = folders.setdefault(posixpath.dirname(path), [0, 0, 0])
            totals[0] += 1
            totals[1] += counts["public"]
            totals[2] += counts["documented"]
    return [{"folder": folder, "files": files_, "public": public, "documented": documented,
             "percent": percent(documented, public)}
            for folder, (files_, public, documented) in sorted(folders.items())]

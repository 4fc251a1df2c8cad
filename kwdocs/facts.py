"""The facts record: what extraction learns about one file, as plain JSON data.

Extraction (scan -> extract) produces one ``Facts`` dict per file; everything
downstream (page models, templates, the keyword index, links between files)
reads only these records, so they can be cached as JSON and compared for
early cut-off.  Nothing here depends on how pages look.
"""
from __future__ import annotations

from typing import Any, TypedDict, cast


class Symbol(TypedDict, total=False):
    name: str          # the keyword as written (``Linear``, ``NCCL_DEBUG``)
    kind: str          # one of KIND_GROUPS' keys
    line: int          # 1-based line of the definition
    end: int           # its last line, when later than ``line`` and the extractor knows it
    signature: str     # ``(self, x: int) -> int``; ``class Foo(Base)``; optional
    parent: str        # enclosing class or namespace (``Linear`` for a method)
    detail: str        # sub-kind shown to the reader (``struct``, ``enum``, ``async``)
    trait: str         # the trait a Rust ``impl Trait for Type`` implements (``fmt::Display``)
    decorators: list[str]
    condition: list[str]   # C/C++: the ``#if`` branch a macro is defined in (``#else``, then its ``#if``)
    doc: str           # its own documentation: docstring, or the doc comment above it (markers stripped)


class Import(TypedDict, total=False):
    module: str        # absolute dotted module, or the header as written for includes
    names: list[str]   # names imported by ``from m import a, b``
    line: int
    kind: str          # ``import`` | ``from`` | ``include``
    level: int         # leading dots of a relative Python import (0 = absolute)
    system: bool       # ``#include <...>``


class Problem(TypedDict, total=False):
    line: int
    message: str


class Finding(TypedDict, total=False):
    line: int
    message: str
    rule: str


class Facts(TypedDict, total=False):
    path: str           # POSIX path relative to the source root
    size: int
    lines: int
    sha256: str
    language: str       # registry id: python, markdown, rst, cpp, text, binary ...
    type_label: str     # ``Python Source``
    fence: str          # info string of the source fence (``python``)
    binary: bool
    encoding: str       # how the text was decoded (``utf-8``, ``latin-1`` ...)
    parsed: bool        # False when the parser failed and a fallback was used
    extractor: str      # the outside tool that found the definitions (``Universal Ctags``), if any
    docstring: str      # module docstring or leading comment
    symbols: list[Symbol]
    imports: list[Import]
    problems: list[Problem]
    uses: list[str]     # names called through an import, as the imported module names them
    exports: list[str]  # a Python module's ``__all__``, in its order (only when it has one)
    installs: list[dict]    # what a build file installs: ``files``, ``folders`` (``kwdocs.extract.cmake``)
    findings: dict[str, list]   # rule results: purpose, role, patterns, performance, security


def facts_fields(found: dict[str, Any]) -> Facts:
    """An extractor's findings as fields of its file's facts record: the one place where the plain
    data a language module returns (``Language.extract``, perhaps another package's) is taken
    for them.  Every field is kept as found: a field the record does not declare goes to the
    record too, as it always has."""
    return cast(Facts, found)


def as_facts(data: object) -> Facts | None:
    """A facts record read back from JSON (a shard, the shared cache), or None if ``data`` is
    not a dict.  Only the outline is checked here: the reader checks the fields it relies on
    (its path and hash, say) before it trusts the record."""
    return cast(Facts, data) if isinstance(data, dict) else None


# Keyword kinds and the ``###`` group each is listed under on a keyword page,
# in the order the groups appear.
KIND_GROUPS: dict[str, str] = {
    "namespace": "Namespaces",
    "class": "Classes",
    "function": "Functions",
    "method": "Functions",
    "macro": "Macros",
    "type": "Types",
    "constant": "Constants",
    "variable": "Variables",
    "import": "Imports",
    "export": "Exports",
    "include": "Includes",
    "key": "Keys",
    "target": "Targets",
    "heading": "Headings",
    "identifier": "Identifiers",
}

GROUP_ORDER: list[str] = list(dict.fromkeys(KIND_GROUPS.values()))


def identity(facts: Facts) -> object:
    """A stand-in for a file's facts when deciding whether its pages must be rendered again.

    Facts are a function of the file's bytes (``sha256``) under one extraction
    key, plus any problem reading them; hashing those few fields instead of the
    whole record was a tenth of a cold build's rendering.  A file that could not
    be read has no hash and stands for itself.
    """
    if not facts.get("sha256"):
        return facts
    return [facts["path"], facts["sha256"], facts.get("problems", [])]

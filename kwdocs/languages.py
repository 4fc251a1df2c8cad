"""The languages kwdocs knows: one declaration each, and the one registry every step asks.

A language is data plus a module: its id, the page's type label, the fence of
its source, the file suffixes and exact names (and ``#!`` interpreters) that
say a file is written in it, its extractor module (``extract(text, path) ->
dict``, see ``kwdocs.extract``), the keyword kinds it adds to the shared ones
(``facts.KIND_GROUPS``) with the group each is listed under, how its imports
are found in the tree, and how its class signatures name base classes.
Extraction, links, the page models and the rules ask this module, never a
language's name.

Adding a language is one ``Language(...)`` row in ``BUILT_IN`` plus its module
under ``kwdocs/extract/``, or, from another package, an entry point in the
group ``kwdocs.languages`` naming a ``Language`` (or a list of them).  Built-in
languages are loaded directly; entry points are read once per process, and only
when a file name, language id or keyword kind is not a built-in one: reading
them costs milliseconds that a build with nothing to extract must not pay.
A built-in suffix or name cannot be taken over by an installed language.
"""
from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kwdocs.facts import GROUP_ORDER, KIND_GROUPS

ENTRY_POINT_GROUP = "kwdocs.languages"

# How a language's imports are found in the tree (``kwdocs.extract.links``): Python modules
# and packages, file paths as C's ``#include`` and a shell's ``source`` write them, or CMake's
# ``include``/``add_subdirectory``/``find_package``.  An installed language may give a
# function ``(module, importing path, every path of the tree) -> target path or None``
# as ``"package.module:function"`` instead.
RESOLVERS = ("python", "include", "cmake")


@dataclass(frozen=True)
class Language:
    """One kind of file: how it is recognised, extracted, linked and listed."""

    id: str                     # facts' ``language``; rules name it in ``languages``
    label: str                  # the page's ``Type``
    fence: str                  # info string of the source's Markdown fence
    module: str | None          # module with ``extract(text, path)``: a name under kwdocs.extract,
                                # else any importable module; None = identifiers only (text's)
    suffixes: tuple[str, ...] = ()       # lower case, with the dot
    names: tuple[str, ...] = ()          # exact file names (``CMakeLists.txt``)
    interpreters: tuple[str, ...] = ()   # ``#!`` program names (``bash``, ``python3``)
    kinds: Mapping[str, str] = field(default_factory=dict)   # kinds it adds -> their group
    resolver: str | None = None          # one of RESOLVERS, or "module:function"
    dependencies: bool = False           # list a Dependencies section even when nothing is imported
    bases: Callable[[str], list[str]] | None = None   # base class names from a class signature
    doc_comments: str | None = None      # "#" or "//": the comment block above a definition documents it

    def extract(self, text: str, path: str) -> dict[str, Any]:
        """What the extractor finds in ``text``; may raise (``kwdocs.extract`` catches)."""
        return _extractor(self.module or "text")(text, path)


# ---------------------------------------------------------------- reading base classes

_BASE_SPLIT = re.compile(r",(?![^\[(<]*[\])>])")
_CPP_BASES = re.compile(r"(?<!:):(?!:)")


def python_bases(signature: str) -> list[str]:
    """Base class names from a Python class signature ``(A, b.B[T], metaclass=M)``."""
    signature = signature.strip()
    if not signature.startswith("("):
        return []
    return _base_list(signature[1: signature.rfind(")") if ")" in signature else len(signature)])


def c_family_bases(signature: str) -> list[str]:
    """Base class names from ``class Foo : public a::B<T>``; ``::`` reads as ``.``."""
    found = _CPP_BASES.search(signature.strip())
    return _base_list(signature.strip()[found.end():]) if found else []


def _base_list(inner: str) -> list[str]:
    names = []
    for part in _BASE_SPLIT.split(inner):
        part = part.strip()
        if not part or "=" in part or part.startswith("*"):
            continue
        part = re.split(r"[\[<(]", part, maxsplit=1)[0]  # drop template or subscript arguments
        words = [w for w in part.split() if w not in ("public", "protected", "private", "virtual")]
        if words:
            names.append(words[-1].replace("::", "."))
    return names


# ---------------------------------------------------------------- the built-in languages

_PYTHON = dict(resolver="python", dependencies=True, bases=python_bases)
_C_FAMILY = dict(resolver="include", dependencies=True, bases=c_family_bases, doc_comments="//")

BUILT_IN: tuple[Language, ...] = (
    Language("python", "Python Source", "python", "python", suffixes=(".py", ".pyw"),
             interpreters=("python", "python3"), **_PYTHON),
    Language("python", "Python Stub", "python", "python", suffixes=(".pyi",), **_PYTHON),
    Language("markdown", "Markdown Documentation", "markdown", "prose", suffixes=(".md", ".markdown")),
    Language("rst", "reStructuredText Documentation", "rst", "prose", suffixes=(".rst",)),
    Language("cpp", "C/C++ Header", "cpp", "cpp", suffixes=(".h",), **_C_FAMILY),
    Language("cpp", "C++ Header", "cpp", "cpp", suffixes=(".hpp", ".hh", ".hxx", ".inl"), **_C_FAMILY),
    Language("cuda", "CUDA Source", "cuda", "cpp", suffixes=(".cuh", ".cu"), **_C_FAMILY),
    Language("cpp", "C Source", "c", "cpp", suffixes=(".c",), **_C_FAMILY),
    Language("cpp", "C++ Source", "cpp", "cpp", suffixes=(".cc", ".cpp", ".cxx"), **_C_FAMILY),
    Language("yaml", "YAML Data", "yaml", "data", suffixes=(".yaml", ".yml"), doc_comments="#"),
    Language("toml", "TOML Data", "toml", "data", suffixes=(".toml",), doc_comments="#"),
    Language("json", "JSON Data", "json", "data", suffixes=(".json",)),
    Language("cmake", "CMake Build Script", "cmake", "cmake", suffixes=(".cmake",), names=("CMakeLists.txt",),
             resolver="cmake", doc_comments="#"),
    Language("shell", "Shell Script", "bash", "shell", suffixes=(".sh", ".bash"),
             interpreters=("sh", "bash", "dash", "ksh", "zsh"), resolver="include",
             doc_comments="#"),
)
TEXT = Language("text", "Text File", "text", "text")
BINARY = Language("binary", "Binary File", "", None)
# Ids a file can have without a language saying so (a file that could not be read).
_OTHER_IDS = frozenset({"unreadable"})


class Registry:
    """Languages by suffix, exact name, interpreter, id, and the kinds they add."""

    def __init__(self, languages: Iterable[Language]):
        self.by_suffix: dict[str, Language] = {}
        self.by_name: dict[str, Language] = {}
        self.by_interpreter: dict[str, Language] = {}
        self.by_id: dict[str, Language] = {}
        self.kind_groups: dict[str, str] = dict(KIND_GROUPS)
        for language in languages:
            self.add(language)

    def add(self, language: Language) -> bool:
        """Register ``language`` for what no earlier language took; False if it took nothing."""
        took = False
        for key, table in ((language.suffixes, self.by_suffix), (language.names, self.by_name),
                           (language.interpreters, self.by_interpreter)):
            for value in key:
                if value not in table:
                    table[value] = language
                    took = True
        if language.id not in self.by_id:
            self.by_id[language.id] = language
            took = True
        for kind, group in language.kinds.items():
            self.kind_groups.setdefault(kind, group)
        return took

    def of_name(self, name: str) -> Language | None:
        """The language a file name says, or None."""
        found = self.by_name.get(name)
        if found is None:
            dot = name.rfind(".")
            found = self.by_suffix.get(name[dot:].lower()) if 0 < dot < len(name) - 1 else None
        return found

    def fingerprint(self) -> list[list[str]]:
        """What facts depend on among the registered languages (ids, labels, fences, modules, where)."""
        seen = {id(language): language for table in (self.by_suffix, self.by_name, self.by_id)
                for language in table.values()}
        return sorted([language.id, language.label, language.fence, language.module or "",
                       ",".join(sorted(language.suffixes)), ",".join(language.names), _ORIGINS.get(id(language), "")]
                      for language in seen.values())


REGISTRY = Registry([*BUILT_IN, TEXT, BINARY])
BY_SUFFIX = REGISTRY.by_suffix   # the built-ins (and installed languages once read)
BY_NAME = REGISTRY.by_name
_installed: list[Language] | None = None
_ORIGINS: dict[int, str] = {}    # installed language -> "distribution=version"


def read_installed() -> list[Language]:
    """Languages of installed packages (entry points of ``kwdocs.languages``), read once and
    added to the registry; a broken entry point is said once on stderr and left out."""
    global _installed
    if _installed is None:
        _installed = []
        from importlib.metadata import entry_points
        for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name):
            if point.value.startswith("kwdocs."):
                continue    # a built-in: registered already, without reading entry points
            try:
                loaded = point.load()
                found = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
                if not all(isinstance(language, Language) for language in found):
                    raise TypeError(f"{point.value} is not a kwdocs.languages.Language")
            except Exception as error:  # a broken plug-in must not stop the build
                print(f"kwdocs: language {point.name!r} not loaded: {type(error).__name__}: {error}",
                      file=sys.stderr)
                continue
            origin = f"{point.dist.name}={point.dist.version}" if point.dist else point.value
            for language in found:
                REGISTRY.add(language)
                _installed.append(language)
                _ORIGINS[id(language)] = origin
    return _installed


def language_of(path: str) -> Language:
    """The language a file name says; ``TEXT`` when it says nothing known.

    The suffix as ``PurePosixPath.suffix`` has it (none for ``.bashrc`` or ``name.``), by
    string methods: every file is asked about several times."""
    name = path.rpartition("/")[2]
    found = REGISTRY.of_name(name)
    if found is None and _installed is None:
        read_installed()
        found = REGISTRY.of_name(name)
    return found or TEXT


def by_id(language_id: str) -> Language | None:
    """The language of a facts record's ``language``, or None (text, binary, unreadable)."""
    found = REGISTRY.by_id.get(language_id)
    if found is None and _installed is None and language_id not in _OTHER_IDS:
        read_installed()
        found = REGISTRY.by_id.get(language_id)
    return found


def known_ids(installed: bool = True) -> frozenset[str]:
    """Every language id a rule may name: built-in, installed (unless not ``installed``:
    no entry points read), and ``unreadable``."""
    if installed:
        read_installed()
    return frozenset(REGISTRY.by_id) | _OTHER_IDS


def kind_group(kind: str) -> str:
    """The group a keyword kind is listed under on keyword pages (unknown kinds: Identifiers)."""
    group = REGISTRY.kind_groups.get(kind)
    if group is None and _installed is None:
        read_installed()
        group = REGISTRY.kind_groups.get(kind)
    return group or "Identifiers"


def group_order() -> list[str]:
    """Groups in page order: the shared ones, then those installed languages add."""
    return list(dict.fromkeys([*GROUP_ORDER, *REGISTRY.kind_groups.values()]))


def fingerprint() -> list[list[str]]:
    """The registered languages, installed ones included: part of what facts depend on."""
    read_installed()
    return REGISTRY.fingerprint()


def resolver(language_id: str) -> str | Callable[[str, str, frozenset[str]], str | None] | None:
    """How a language's imports are found: a name of RESOLVERS, a function, or None."""
    language = by_id(language_id)
    how = language.resolver if language else None
    if how is None or how in RESOLVERS:
        return how
    return _function(how)


_EXTRACTORS: dict[str, Callable[[str, str], dict[str, Any]]] = {}


def _extractor(module: str) -> Callable[[str, str], dict[str, Any]]:
    """The ``extract`` of a module under kwdocs.extract by its name, else of the module itself."""
    found = _EXTRACTORS.get(module)
    if found is None:
        loaded = None
        if "." not in module:
            try:
                loaded = importlib.import_module(f"kwdocs.extract.{module}")
            except ModuleNotFoundError as error:
                if error.name != f"kwdocs.extract.{module}":
                    raise
        found = _EXTRACTORS[module] = (loaded or importlib.import_module(module)).extract
    return found


_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def _function(reference: str) -> Callable[..., Any]:
    found = _FUNCTIONS.get(reference)
    if found is None:
        module, _, name = reference.partition(":")
        found = _FUNCTIONS[reference] = getattr(importlib.import_module(module), name)
    return found

"""The languages kwdocs knows: one declaration each, and the one registry every step asks.

A language is data plus a module: its id, the page's type label, the fence of
its source, the file suffixes and exact names (and ``#!`` interpreters) that
say a file is written in it, its extractor module (``extract(text, path) ->
dict``, see ``kwdocs.extract``), the keyword kinds it adds to the shared ones
(``facts.KIND_GROUPS``) with the group each is listed under, how its imports
are found in the tree, and how its class signatures name base classes; and how
it is presented: the site's highlighting of its source (``Highlight``), how its
doc comments read, its module and test conventions, whether it is prose.
Extraction, links, the page models, the site and the rules ask this module, never
a language's name.

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
from types import ModuleType
from typing import Any, Protocol, cast

from kwdocs.facts import GROUP_ORDER, KIND_GROUPS

ENTRY_POINT_GROUP = "kwdocs.languages"

# How a language's imports are found in the tree (``kwdocs.extract.links``): Python modules
# and packages, file paths as C's ``#include`` and a shell's ``source`` write them, or CMake's
# ``include``/``add_subdirectory``/``find_package``.  Otherwise ``"package.module:name"``
# names either a class built once per tree, ``(path -> language id, path -> imports)``,
# whose ``answer(import record, importing path)`` gives ``(target path or None, category)``
# (the built-in languages' own resolvers: Go modules, tsconfig paths, Rust crates ...), or,
# for an installed language, a function ``(module, importing path, every path of the tree)
# -> target path or None``.
RESOLVERS = ("python", "include", "cmake")
CTAGS = "ctags"     # the ``module`` of languages Universal Ctags reads (``kwdocs.extract.ctags``)


class Extractor(Protocol):
    """What a language's ``module`` holds: ``extract`` (``kwdocs.extract`` catches what it raises)."""

    def extract(self, text: str, path: str) -> dict[str, Any]: ...


class TreeResolver(Protocol):
    """A language's own resolver class (``"package.module:Resolver"``), built once per tree from every
    path's language id and imports; ``answer`` gives an import's target path (or None) and category."""

    def __init__(self, languages: dict[str, str], imports: dict[str, list]) -> None: ...

    def answer(self, record: dict[str, Any], path: str) -> tuple[str | None, str]: ...


@dataclass(frozen=True)
class Highlight:
    """How the site colours a language's source (and code blocks fenced with its ``fence``): a lexer
    of its own, else a tree-sitter grammar with the highlight queries its wheels ship, else
    Pygments' lexer.  References ``"module:name"`` are imported when the site first needs them."""

    grammar: str = ""                    # module of a tree-sitter grammar wheel (``tree_sitter_c``)
    function: str = "language"           # that module's function giving the grammar
    queries: tuple[str, ...] = ()        # modules whose ``HIGHLIGHTS_QUERY`` apply, in order (default: grammar's)
    prepare: str = ""                    # "module:function", text -> the text the grammar parses instead
    lexer: str = ""                      # "module:function", (source bytes, hrefs) -> HTML, before any grammar
    pygments: str = ""                   # Pygments' lexer name, when not the fence
    extraction_tree: bool = False        # the extractor parses the same tree: an HTML build keeps its tokens

    @property
    def query_modules(self) -> tuple[str, ...]:
        return self.queries or ((self.grammar,) if self.grammar else ())


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
    interpreters: tuple[str, ...] = ()   # ``#!`` program names without a version (``bash``, ``python``)
    modelines: tuple[str, ...] = ()      # editor modeline names (Emacs ``mode:``, Vim ``ft=``)
    kinds: Mapping[str, str] = field(default_factory=dict)   # kinds it adds -> their group
    resolver: str | None = None          # one of RESOLVERS, or "module:function"
    dependencies: bool = False           # list a Dependencies section even when nothing is imported
    bases: Callable[[str], list[str]] | None = None   # base class names from a class signature
    doc_comments: str | None = None      # "#" or "//": the comment block above a definition documents it
    configure_input: bool = False        # ``X.in`` (what configure makes X from) reads as X does
    # how its pages and the site present it; pages read these from the first language of an id
    highlight: Highlight | None = None   # the site's colouring of its fence (else Pygments' lexer of that name)
    doc_parser: str = "comment_doc"      # how a definition's doc reads: a name of ``kwdocs.pages.docstrings.PARSERS``
    python_module: bool = False          # Python's conventions: top-level names are imported, ``__all__``,
                                         # annotated signatures, members qualified by class, inherited ones
    namespaces: bool = False             # C-like: definitions outside classes count, in their one namespace
    reexport_modules: bool = False       # a module that only passes others on says so (``export * from``)
    test_command: str = ""               # how a file defining tests runs them; ``{path}`` is its path
    prose: bool = False                  # documentation rather than code: the site searches its sections

    def extract(self, text: str, path: str) -> dict[str, Any]:
        """What the extractor finds in ``text``; may raise (``kwdocs.extract`` catches).  A module
        that reads many languages (``ctags``) has ``extract_as(text, path, language)`` and is told which."""
        return _extractor(self.module or "text", self)(text, path)


# ---------------------------------------------------------------- reading base classes

_BASE_SPLIT = re.compile(r",(?![^\[(<]*[\])>])")
_CPP_BASES = re.compile(r"(?<!:):(?!:)")


def python_bases(signature: str) -> list[str]:
    """Base class names from a Python class signature ``(A, b.B[T], metaclass=M)``, after the
    type parameters of one written ``[T: int](A)`` (3.12)."""
    signature = signature.strip()
    if signature.startswith("["):
        depth = 0
        for index, char in enumerate(signature):
            depth += (char in "[(") - (char in "])")
            if depth == 0:
                signature = signature[index + 1:]
                break
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

_PYTHON: dict[str, Any] = dict(resolver="python", dependencies=True, bases=python_bases,
                               highlight=Highlight(lexer="kwdocs.site.highlight:python_lexer"),
                               doc_parser="python_doc", python_module=True, test_command="python -m pytest {path}")
# C/C++ doc comments are attached by the extractor itself, from the parse tree (``extract.cpp``).
_C_FAMILY: dict[str, Any] = dict(resolver="include", dependencies=True, bases=c_family_bases,
                                 configure_input=True, namespaces=True, doc_parser="doxygen_doc")
# C++ and CUDA grammars extend C's, and C++'s own query only adds to C's.  Their text is parsed as
# extraction parses it, macros blanked (``extract.cpp.prepare``): the parser reads declarations past
# the macros, and the tree extraction made serves the highlighting too (``kwdocs.site.tokens``).
_C_QUERIES = ("tree_sitter_c", "tree_sitter_cpp")
_CPP_HIGHLIGHT = Highlight("tree_sitter_cpp", queries=_C_QUERIES, prepare="kwdocs.extract.cpp:prepare_cpp",
                           extraction_tree=True)
_JS_QUERIES = ("tree_sitter_javascript",)


def _tree(grammar: str, function: str = "language", queries: tuple[str, ...] = ()) -> Highlight:
    """A grammar extraction parses with too, highlighted by its wheel's query."""
    return Highlight(grammar, function, queries, extraction_tree=True)


def _own(module: str) -> str:
    """The resolver class of a language module under kwdocs.extract."""
    return f"kwdocs.extract.{module}:Resolver"


def _ctags(id: str, label: str, fence: str, *suffixes: str, **more: Any) -> Language:
    return Language(id, label, fence, CTAGS, suffixes=suffixes, **more)


BUILT_IN: tuple[Language, ...] = (
    Language("python", "Python Source", "python", "python", suffixes=(".py", ".pyw"),
             interpreters=("python", "pypy"), modelines=("python",), **_PYTHON),
    Language("python", "Python Stub", "python", "python", suffixes=(".pyi",), **_PYTHON),
    Language("markdown", "Markdown Documentation", "markdown", "prose", suffixes=(".md", ".markdown"),
             modelines=("markdown",), prose=True),
    Language("rst", "reStructuredText Documentation", "rst", "prose", suffixes=(".rst",), modelines=("rst",),
             prose=True),
    Language("cpp", "C/C++ Header", "cpp", "cpp", suffixes=(".h",), highlight=_CPP_HIGHLIGHT, **_C_FAMILY),
    Language("cpp", "C++ Header", "cpp", "cpp", suffixes=(".hpp", ".hh", ".hxx", ".inl"), highlight=_CPP_HIGHLIGHT,
             **_C_FAMILY),
    Language("cuda", "CUDA Source", "cuda", "cpp", suffixes=(".cuh", ".cu"),
             highlight=Highlight("tree_sitter_cuda", queries=_C_QUERIES, prepare="kwdocs.extract.cpp:prepare_cuda",
                                 extraction_tree=True), **_C_FAMILY),
    Language("cpp", "C Source", "c", "cpp", suffixes=(".c",), modelines=("c",), highlight=Highlight("tree_sitter_c"),
             **_C_FAMILY),
    Language("cpp", "C++ Source", "cpp", "cpp", suffixes=(".cc", ".cpp", ".cxx"), modelines=("c++", "cpp"),
             highlight=_CPP_HIGHLIGHT, **_C_FAMILY),
    Language("yaml", "YAML Data", "yaml", "data", suffixes=(".yaml", ".yml"), modelines=("yaml",), doc_comments="#"),
    Language("toml", "TOML Data", "toml", "data", suffixes=(".toml",), modelines=("toml",), doc_comments="#"),
    Language("json", "JSON Data", "json", "data", suffixes=(".json",), modelines=("json",)),
    Language("cmake", "CMake Build Script", "cmake", "cmake", suffixes=(".cmake",), names=("CMakeLists.txt",),
             modelines=("cmake",), resolver="cmake", doc_comments="#", configure_input=True),
    Language("shell", "Shell Script", "bash", "shell", suffixes=(".sh", ".bash", ".ksh", ".zsh"),
             interpreters=("sh", "bash", "dash", "ksh", "zsh", "ash", "mksh", "busybox"),
             modelines=("sh", "bash", "shell-script"), resolver="include", doc_comments="#", configure_input=True,
             highlight=Highlight("tree_sitter_bash")),
    Language("javascript", "JavaScript Source", "javascript", "javascript", suffixes=(".js", ".mjs", ".cjs", ".jsx"),
             interpreters=("node", "nodejs", "bun"), modelines=("javascript", "js"), resolver=_own("javascript"),
             highlight=_tree("tree_sitter_javascript"), reexport_modules=True),
    Language("typescript", "TypeScript Source", "typescript", "javascript", suffixes=(".ts", ".mts", ".cts"),
             interpreters=("deno", "ts-node"), modelines=("typescript",), resolver=_own("javascript"),
             highlight=_tree("tree_sitter_typescript", "language_typescript", _JS_QUERIES), reexport_modules=True),
    Language("typescript", "TypeScript JSX Source", "tsx", "javascript", suffixes=(".tsx",),
             highlight=_tree("tree_sitter_typescript", "language_tsx", _JS_QUERIES), reexport_modules=True),
    Language("tsconfig", "TypeScript Configuration", "json", "javascript", names=("tsconfig.json", "jsconfig.json")),
    Language("go", "Go Source", "go", "golang", suffixes=(".go",), modelines=("go",), resolver=_own("golang"),
             highlight=_tree("tree_sitter_go"), doc_parser="go_doc"),
    Language("gomod", "Go Module Definition", "text", "golang", names=("go.mod",)),
    Language("rust", "Rust Source", "rust", "rust", suffixes=(".rs",), modelines=("rust",), resolver=_own("rust"),
             highlight=_tree("tree_sitter_rust"), doc_parser="rust_doc"),
    Language("java", "Java Source", "java", "java", suffixes=(".java",), modelines=("java",), resolver=_own("java"),
             highlight=_tree("tree_sitter_java")),
    Language("lua", "Lua Source", "lua", "lua", suffixes=(".lua",), interpreters=("lua", "luajit"),
             modelines=("lua",), resolver=_own("lua"), highlight=_tree("tree_sitter_lua")),
    Language("make", "Makefile", "makefile", "make", suffixes=(".mk", ".mak"),
             names=("Makefile", "makefile", "GNUmakefile"), interpreters=("make", "gmake"),
             modelines=("make", "makefile", "makefile-gmake"), resolver="include", configure_input=True,
             highlight=_tree("tree_sitter_make")),
    Language("dockerfile", "Dockerfile", "dockerfile", "text", suffixes=(".dockerfile",),
             names=("Dockerfile", "Containerfile"), modelines=("dockerfile",)),
    # languages only Universal Ctags reads here
    _ctags("tcl", "Tcl Script", "tcl", ".tcl", ".tk", ".itcl", ".exp",
           interpreters=("tclsh", "wish", "expect", "jimsh"), modelines=("tcl",)),
    _ctags("perl", "Perl Source", "perl", ".pl", ".pm", interpreters=("perl",), modelines=("perl", "cperl")),
    _ctags("ruby", "Ruby Source", "ruby", ".rb", ".rake", names=("Rakefile", "Gemfile"), interpreters=("ruby",),
           modelines=("ruby",)),
    _ctags("php", "PHP Source", "php", ".php", interpreters=("php",), modelines=("php",)),
    _ctags("awk", "Awk Script", "awk", ".awk", interpreters=("awk", "gawk", "mawk"), modelines=("awk",)),
    _ctags("kotlin", "Kotlin Source", "kotlin", ".kt"),
    _ctags("csharp", "C# Source", "csharp", ".cs"),
    _ctags("erlang", "Erlang Source", "erlang", ".erl"),
    _ctags("elixir", "Elixir Source", "elixir", ".ex"),
    _ctags("elixir", "Elixir Script", "elixir", ".exs"),
    _ctags("haskell", "Haskell Source", "haskell", ".hs"),
    _ctags("ocaml", "OCaml Source", "ocaml", ".ml"),
    _ctags("elisp", "Emacs Lisp Source", "elisp", ".el"),
    _ctags("clojure", "Clojure Source", "clojure", ".clj"),
    _ctags("vim", "Vim Script", "vim", ".vim"),
    _ctags("r", "R Source", "r", ".r"),
    _ctags("fortran", "Fortran Source", "fortran", ".f90"),
    _ctags("pascal", "Pascal Source", "pascal", ".pas"),
    _ctags("ada", "Ada Source", "ada", ".adb"),
    _ctags("asm", "Assembly Source", "asm", ".asm"),
    _ctags("verilog", "Verilog Source", "verilog", ".v"),
    _ctags("systemverilog", "SystemVerilog Source", "systemverilog", ".sv"),
    _ctags("vhdl", "VHDL Source", "vhdl", ".vhd"),
    _ctags("protobuf", "Protocol Buffers Definition", "protobuf", ".proto"),
    _ctags("sql", "SQL Script", "sql", ".sql"),
    _ctags("julia", "Julia Source", "julia", ".jl"),
    _ctags("powershell", "PowerShell Script", "powershell", ".ps1"),
    _ctags("m4", "M4 Macros", "text", ".m4"),
    _ctags("autoconf", "Autoconf Script", "text", ".ac", names=("configure.in",)),
    _ctags("automake", "Automake File", "makefile", ".am"),
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
        self.by_modeline: dict[str, Language] = {}
        self.by_id: dict[str, Language] = {}
        self.highlights: dict[str, Highlight] = {}     # fence -> how the first language declaring one colours it
        self.kind_groups: dict[str, str] = dict(KIND_GROUPS)
        for language in languages:
            self.add(language)

    def add(self, language: Language) -> bool:
        """Register ``language`` for what no earlier language took; False if it took nothing."""
        took = False
        for key, table in ((language.suffixes, self.by_suffix), (language.names, self.by_name),
                           (language.interpreters, self.by_interpreter),
                           (language.modelines, self.by_modeline)):
            for value in key:
                if value not in table:
                    table[value] = language
                    took = True
        if language.id not in self.by_id:
            self.by_id[language.id] = language
            took = True
        for kind, group in language.kinds.items():
            self.kind_groups.setdefault(kind, group)
        if language.highlight is not None:
            self.highlights.setdefault(language.fence, language.highlight)
        return took

    def of_name(self, name: str) -> Language | None:
        """The language a file name says, or None; ``config.h.in``, ``Makefile.in``: the
        language of the file configure makes from it, when that language reads such inputs."""
        found = self.by_name.get(name)
        if found is None:
            dot = name.rfind(".")
            suffix = name[dot:].lower() if 0 < dot < len(name) - 1 else ""
            found = self.by_suffix.get(suffix)
            if found is None and suffix == ".in":
                made = self.of_name(name[:dot])
                found = made if made is not None and made.configure_input else None
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


def installed_read() -> bool:
    """Whether this process has read the installed languages (``read_installed``)."""
    return _installed is not None


def read_installed() -> list[Language]:
    """Languages of installed packages (entry points of ``kwdocs.languages``), read once and
    added to the registry; a broken entry point is said once on stderr and left out."""
    global _installed
    if _installed is None:
        _installed = []
        # importlib.metadata only when installed languages are first asked for
        from importlib.metadata import entry_points
        for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name):
            if point.value.startswith("kwdocs."):
                continue    # a built-in: registered already, without reading entry points
            try:
                loaded = point.load()
                found = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
                if not all(isinstance(language, Language) for language in found):
                    raise TypeError(f"{point.value} is not a kwdocs.languages.Language")
            except Exception as error:  # noqa: BLE001 - a broken plug-in must not stop the build
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


_SHEBANG_VERSION = re.compile(r"[\d.]+$")
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_MODELINE = re.compile(r"-\*-.*?(?:mode:\s*)?([\w+-]+)\s*(?:;.*)?-\*-"
                       r"|\b(?:vim?|ex):.*?\b(?:ft|filetype|syntax)=([\w+-]+)")
_TCL_RESTART = re.compile(r"#[^\n]*\\\n\s*exec\s+(?:tclsh|wish|jimsh|expect)")
MODELINE_LINES = 5
"""Editors look for a modeline in the first and last five lines."""


def language_for(path: str, text: str) -> Language:
    """The language a file's name says, else what its ``#!`` line or an editor modeline says
    (asked where extraction reads the file anyway, never by the scan)."""
    language = language_of(path)
    if language is not TEXT or not text:
        return language
    if text.startswith("#!"):
        found = _interpreter(text[2:text.find("\n") if "\n" in text else len(text)])
        if found is not None and found.id == "shell" and _TCL_RESTART.search(text, 0, 400):
            found = REGISTRY.by_interpreter["tclsh"]  # ``#!/bin/sh``, ``# \``, ``exec tclsh "$0"``: Tcl's trick
        if found is not None:
            return found
    if "-*-" in text or "vi" in text or "ex:" in text:
        lines = text.split("\n", MODELINE_LINES)[:MODELINE_LINES] + text[-2000:].split("\n")[-MODELINE_LINES:]
        for line in lines:
            match = _MODELINE.search(line)
            if match:
                found = REGISTRY.by_modeline.get((match.group(1) or match.group(2)).lower())
                if found is not None:
                    return found
    return language


def _interpreter(line: str) -> Language | None:
    """``/usr/bin/env -S python3 -u`` -> Python; ``/bin/sh -e`` -> shell."""
    words = line.split()
    if words and words[0].rpartition("/")[2] == "env":
        words = words[1:]
        while words and (words[0].startswith("-") or _ENV_ASSIGNMENT.match(words[0])):
            words = words[1:]  # ``-S``, ``-i``, ``NAME=value``
    if not words:
        return None
    return REGISTRY.by_interpreter.get(_SHEBANG_VERSION.sub("", words[0].rpartition("/")[2]))


def suffix_of(language_id: str) -> str:
    """A file suffix the registry gives a language (``.txt`` if none): how a tool that goes by
    names is told the language of a file recognised by its ``#!`` line alone."""
    return next((suffix for suffix, known in REGISTRY.by_suffix.items() if known.id == language_id), ".txt")


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


def highlight_of(fence: str) -> Highlight | None:
    """How the site colours text fenced as ``fence`` (a file's source, a code block), or None
    (Pygments' lexer of that name); installed languages are read when no built-in declares it."""
    found = REGISTRY.highlights.get(fence)
    if found is None and _installed is None and fence:
        read_installed()
        found = REGISTRY.highlights.get(fence)
    return found


def built_in_highlights() -> dict[str, Highlight]:
    """The built-in languages' highlighting by fence, in their order (no entry point read)."""
    found: dict[str, Highlight] = {}
    for language in BUILT_IN:
        if language.highlight is not None:
            found.setdefault(language.fence, language.highlight)
    return found


def fingerprint() -> list[list[str]]:
    """The registered languages, installed ones included: part of what facts depend on."""
    read_installed()
    return REGISTRY.fingerprint()


def resolver(language_id: str) -> str | type[TreeResolver] | Callable[[str, str, frozenset[str]], str | None] | None:
    """How a language's imports are found: a name of RESOLVERS, a resolver class, a function, or None."""
    language = by_id(language_id)
    how = language.resolver if language else None
    if how is None or how in RESOLVERS:
        return how
    return loaded(how)


_MODULES: dict[str, Extractor] = {}


def _extractor(module: str, language: Language) -> Callable[[str, str], dict[str, Any]]:
    """The ``extract`` of a module under kwdocs.extract by its name, else of the module itself
    (``extract_as`` bound to ``language`` where the module has one)."""
    found = _MODULES.get(module)
    if found is None:
        imported: ModuleType | None = None
        if "." not in module:
            try:
                imported = importlib.import_module(f"kwdocs.extract.{module}")
            except ModuleNotFoundError as error:
                if error.name != f"kwdocs.extract.{module}":
                    raise
        # a module is an ``Extractor`` by what it defines: checked when called, as extraction calls it
        found = _MODULES[module] = cast(Extractor, imported or importlib.import_module(module))
    as_language = getattr(found, "extract_as", None)
    if as_language is not None:
        return lambda text, path: as_language(text, path, language)
    return found.extract


_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def loaded(reference: str) -> Callable[..., Any]:
    """What a ``"module:name"`` reference names, imported at its first use."""
    found = _FUNCTIONS.get(reference)
    if found is None:
        module, _, name = reference.partition(":")
        found = _FUNCTIONS[reference] = getattr(importlib.import_module(module), name)
    return found

"""Extraction: from a file's bytes to its facts record (see ``kwdocs.facts``).

One module per language, each exposing ``extract(text, path) -> dict`` with any
of the keys ``symbols``, ``imports``, ``docstring``, ``problems``, ``parsed``
and ``calls`` (called names, for the rules; not kept in the record).  The
registry below maps file names to a language; adding a language is one new
module plus one row here.  A file whose name says nothing is recognised by its
``#!`` line or an editor modeline, read where extraction reads the file anyway.
"""
from __future__ import annotations

import hashlib
import importlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from kwdocs.extract.decode import bom_encoding, coding_line, decode, is_binary
from kwdocs.facts import Facts


@dataclass(frozen=True)
class Language:
    id: str            # facts' ``language``
    label: str         # the page's ``Type``
    fence: str         # info string of the source fence
    module: str | None  # extractor module under kwdocs.extract, None = identifiers only


PYTHON = Language("python", "Python Source", "python", "python")
PYTHON_STUB = Language("python", "Python Stub", "python", "python")
MARKDOWN = Language("markdown", "Markdown Documentation", "markdown", "prose")
RST = Language("rst", "reStructuredText Documentation", "rst", "prose")
C_HEADER = Language("cpp", "C/C++ Header", "cpp", "cpp")
CPP_HEADER = Language("cpp", "C++ Header", "cpp", "cpp")
C_SOURCE = Language("cpp", "C Source", "c", "cpp")
CPP_SOURCE = Language("cpp", "C++ Source", "cpp", "cpp")
CUDA = Language("cuda", "CUDA Source", "cuda", "cpp")
YAML = Language("yaml", "YAML Data", "yaml", "data")
TOML = Language("toml", "TOML Data", "toml", "data")
JSON = Language("json", "JSON Data", "json", "data")
CMAKE = Language("cmake", "CMake Build Script", "cmake", "cmake")
SHELL = Language("shell", "Shell Script", "bash", "shell")
JAVASCRIPT = Language("javascript", "JavaScript Source", "javascript", "javascript")
TYPESCRIPT = Language("typescript", "TypeScript Source", "typescript", "javascript")
TSX = Language("typescript", "TypeScript JSX Source", "tsx", "javascript")
GO = Language("go", "Go Source", "go", "golang")
RUST = Language("rust", "Rust Source", "rust", "rust")
JAVA = Language("java", "Java Source", "java", "java")
LUA = Language("lua", "Lua Source", "lua", "lua")
MAKE = Language("make", "Makefile", "makefile", "make")
TSCONFIG = Language("tsconfig", "TypeScript Configuration", "json", "javascript")
GO_MODULE = Language("gomod", "Go Module Definition", "text", "golang")
DOCKERFILE = Language("dockerfile", "Dockerfile", "dockerfile", "text")
TCL = Language("tcl", "Tcl Script", "tcl", "ctags")
PERL = Language("perl", "Perl Source", "perl", "ctags")
RUBY = Language("ruby", "Ruby Source", "ruby", "ctags")
PHP = Language("php", "PHP Source", "php", "ctags")
AWK = Language("awk", "Awk Script", "awk", "ctags")
TEXT = Language("text", "Text File", "text", "text")
BINARY = Language("binary", "Binary File", "", None)

# Languages only Universal Ctags reads here (besides Tcl, Perl, Ruby, PHP and Awk above).
_CTAGS_SUFFIXES: dict[str, Language] = {
    ".kt": Language("kotlin", "Kotlin Source", "kotlin", "ctags"),
    ".cs": Language("csharp", "C# Source", "csharp", "ctags"),
    ".erl": Language("erlang", "Erlang Source", "erlang", "ctags"),
    ".ex": Language("elixir", "Elixir Source", "elixir", "ctags"),
    ".exs": Language("elixir", "Elixir Script", "elixir", "ctags"),
    ".hs": Language("haskell", "Haskell Source", "haskell", "ctags"),
    ".ml": Language("ocaml", "OCaml Source", "ocaml", "ctags"),
    ".el": Language("elisp", "Emacs Lisp Source", "elisp", "ctags"),
    ".clj": Language("clojure", "Clojure Source", "clojure", "ctags"),
    ".vim": Language("vim", "Vim Script", "vim", "ctags"),
    ".r": Language("r", "R Source", "r", "ctags"),
    ".f90": Language("fortran", "Fortran Source", "fortran", "ctags"),
    ".pas": Language("pascal", "Pascal Source", "pascal", "ctags"),
    ".adb": Language("ada", "Ada Source", "ada", "ctags"),
    ".asm": Language("asm", "Assembly Source", "asm", "ctags"),
    ".v": Language("verilog", "Verilog Source", "verilog", "ctags"),
    ".sv": Language("systemverilog", "SystemVerilog Source", "systemverilog", "ctags"),
    ".vhd": Language("vhdl", "VHDL Source", "vhdl", "ctags"),
    ".proto": Language("protobuf", "Protocol Buffers Definition", "protobuf", "ctags"),
    ".sql": Language("sql", "SQL Script", "sql", "ctags"),
    ".jl": Language("julia", "Julia Source", "julia", "ctags"),
    ".ps1": Language("powershell", "PowerShell Script", "powershell", "ctags"),
    ".m4": Language("m4", "M4 Macros", "text", "ctags"),
    ".ac": Language("autoconf", "Autoconf Script", "text", "ctags"),
    ".am": Language("automake", "Automake File", "makefile", "ctags"),
}
BY_SUFFIX: dict[str, Language] = {
    ".py": PYTHON, ".pyw": PYTHON, ".pyi": PYTHON_STUB,
    ".md": MARKDOWN, ".markdown": MARKDOWN, ".rst": RST,
    ".h": C_HEADER, ".hpp": CPP_HEADER, ".hh": CPP_HEADER, ".hxx": CPP_HEADER,
    ".inl": CPP_HEADER, ".cuh": CUDA,
    ".c": C_SOURCE, ".cc": CPP_SOURCE, ".cpp": CPP_SOURCE, ".cxx": CPP_SOURCE,
    ".cu": CUDA,
    ".yaml": YAML, ".yml": YAML, ".toml": TOML, ".json": JSON,
    ".cmake": CMAKE, ".sh": SHELL, ".bash": SHELL, ".ksh": SHELL, ".zsh": SHELL,
    ".js": JAVASCRIPT, ".mjs": JAVASCRIPT, ".cjs": JAVASCRIPT, ".jsx": JAVASCRIPT,
    ".ts": TYPESCRIPT, ".mts": TYPESCRIPT, ".cts": TYPESCRIPT, ".tsx": TSX,
    ".go": GO, ".rs": RUST, ".java": JAVA, ".lua": LUA, ".mk": MAKE, ".mak": MAKE,
    ".dockerfile": DOCKERFILE,
    ".tcl": TCL, ".tk": TCL, ".itcl": TCL, ".exp": TCL, ".pl": PERL, ".pm": PERL,
    ".rb": RUBY, ".rake": RUBY, ".php": PHP, ".awk": AWK, **_CTAGS_SUFFIXES,
}
BY_NAME: dict[str, Language] = {
    "CMakeLists.txt": CMAKE, "Makefile": MAKE, "makefile": MAKE, "GNUmakefile": MAKE,
    "configure.in": _CTAGS_SUFFIXES[".ac"],
    "Dockerfile": DOCKERFILE, "Containerfile": DOCKERFILE, "Rakefile": RUBY, "Gemfile": RUBY,
    "go.mod": GO_MODULE, "tsconfig.json": TSCONFIG, "jsconfig.json": TSCONFIG,
}
# ``#!`` interpreters (their name without a version: ``python3.11`` is ``python``).
BY_INTERPRETER: dict[str, Language] = {
    "sh": SHELL, "bash": SHELL, "dash": SHELL, "ksh": SHELL, "zsh": SHELL, "ash": SHELL,
    "mksh": SHELL, "busybox": SHELL, "python": PYTHON, "pypy": PYTHON, "node": JAVASCRIPT,
    "nodejs": JAVASCRIPT, "deno": TYPESCRIPT, "bun": JAVASCRIPT, "ts-node": TYPESCRIPT,
    "perl": PERL, "tclsh": TCL, "wish": TCL, "expect": TCL, "jimsh": TCL, "ruby": RUBY,
    "php": PHP, "lua": LUA, "luajit": LUA, "make": MAKE, "gmake": MAKE, "awk": AWK,
    "gawk": AWK, "mawk": AWK,
}
# Modeline names (Emacs ``mode:``, Vim ``ft=``/``filetype=``/``syntax=``).
BY_MODELINE: dict[str, Language] = {
    "sh": SHELL, "bash": SHELL, "shell-script": SHELL, "python": PYTHON, "javascript": JAVASCRIPT,
    "js": JAVASCRIPT, "typescript": TYPESCRIPT, "go": GO, "rust": RUST, "java": JAVA,
    "lua": LUA, "make": MAKE, "makefile": MAKE, "makefile-gmake": MAKE, "perl": PERL,
    "cperl": PERL, "tcl": TCL, "ruby": RUBY, "php": PHP, "awk": AWK, "cmake": CMAKE,
    "c": C_SOURCE, "c++": CPP_SOURCE, "cpp": CPP_SOURCE, "yaml": YAML, "toml": TOML,
    "json": JSON, "markdown": MARKDOWN, "rst": RST, "dockerfile": DOCKERFILE,
}


_TEMPLATE_TOLERANT = frozenset(("cpp", "make", "cmake", "shell"))


def language_of(path: str) -> Language:
    """The language a file name says; ``TEXT`` when it says nothing we know.

    The suffix as ``PurePosixPath.suffix`` has it (none for ``.bashrc`` or ``name.``), by
    string methods: building a path object twice per call was a twentieth of extraction's
    own work, and every file is asked about several times."""
    name = path.rpartition("/")[2]
    if name in BY_NAME:
        return BY_NAME[name]
    dot = name.rfind(".")
    suffix = name[dot:].lower() if 0 < dot < len(name) - 1 else ""
    if suffix == ".in":  # ``config.h.in``, ``Makefile.in``: the file configure makes from it ...
        made = language_of(name[:dot])
        if made.module in _TEMPLATE_TOLERANT:  # ... read by an extractor its ``@VAR@``s do not stop
            return made
    return BY_SUFFIX.get(suffix, TEXT)


def all_languages() -> list[Language]:
    """Every language of the registry, by name, ``#!`` line or modeline."""
    return [*BY_SUFFIX.values(), *BY_NAME.values(), *BY_INTERPRETER.values(), *BY_MODELINE.values()]


_SHEBANG_VERSION = re.compile(r"[\d.]+$")
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_MODELINE = re.compile(r"-\*-.*?(?:mode:\s*)?([\w+-]+)\s*(?:;.*)?-\*-"
                       r"|\b(?:vim?|ex):.*?\b(?:ft|filetype|syntax)=([\w+-]+)")
_TCL_RESTART = re.compile(r"#[^\n]*\\\n\s*exec\s+(?:tclsh|wish|jimsh|expect)")
MODELINE_LINES = 5
"""Editors look for a modeline in the first and last five lines."""


def language_for(path: str, text: str) -> Language:
    """The language a file's name says, else its ``#!`` line or an editor modeline says."""
    language = language_of(path)
    if language is not TEXT or not text:
        return language
    if text.startswith("#!"):
        found = _interpreter(text[2:text.find("\n") if "\n" in text else len(text)])
        if found is SHELL and _TCL_RESTART.search(text, 0, 400):
            return TCL  # ``#!/bin/sh``, then ``# \`` and ``exec tclsh "$0"``: Tcl's own trick
        if found is not None:
            return found
    if "-*-" in text or "vi" in text or "ex:" in text:
        lines = text.split("\n", MODELINE_LINES)[:MODELINE_LINES]
        lines += text[-2000:].split("\n")[-MODELINE_LINES:]
        for line in lines:
            match = _MODELINE.search(line)
            if match:
                found = BY_MODELINE.get((match.group(1) or match.group(2)).lower())
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
    name = _SHEBANG_VERSION.sub("", words[0].rpartition("/")[2])
    return BY_INTERPRETER.get(name)


_EXTRACTORS: dict[str, Callable[[str, str], dict[str, Any]]] = {}


def _extractor(module: str) -> Callable[[str, str], dict[str, Any]]:
    if module not in _EXTRACTORS:
        _EXTRACTORS[module] = importlib.import_module(f"kwdocs.extract.{module}").extract
    return _EXTRACTORS[module]


def extract_bytes(path: str, data: bytes) -> tuple[Facts, str | None, list[dict]]:
    """Facts of one file, its decoded text (None for binaries), and its calls.

    Never raises for bad input: a failing extractor becomes a problem on the
    record and the file still gets its pages.
    """
    language = language_of(path)
    facts: Facts = {
        "path": path,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "symbols": [],
        "imports": [],
        "problems": [],
        "parsed": True,
        "docstring": "",
    }
    if is_binary(data):
        facts.update(language="binary", type_label=BINARY.label, fence="", binary=True,
                     lines=0, encoding="")
        if language is not TEXT:  # a .png is binary by nature; a .py holding NUL bytes is damaged
            facts["problems"].append({"message": "holds NUL bytes: documented as a binary file, "
                                                 f"not as {language.label}"})
        return facts, None, []
    text, encoding = decode(data)
    language = language_for(path, text)
    facts.update(language=language.id, type_label=language.label, fence=language.fence,
                 binary=False, encoding=encoding, lines=count_lines(text))
    if encoding not in ("utf-8", "ascii") and encoding != (bom_encoding(data) or coding_line(data)):
        # a guess (Latin-1 never fails) is worth a line; a BOM or coding line the file declares is not
        facts["problems"].append({"message": f"not UTF-8; decoded as {encoding}"})
    found, calls = extract_text(path, text, language)
    facts["problems"].extend(found.pop("problems", []))
    facts.update(found)
    return facts, text, calls


def extract_text(path: str, text: str, language: Language | None = None) -> tuple[dict[str, Any], list[dict]]:
    """What the extractor of ``path``'s language finds in decoded text, and the calls; never raises."""
    language = language or language_for(path, text)
    module = language.module or "text"
    try:
        if module == "ctags":
            from kwdocs.extract import ctags

            found = ctags.extract(text, path, language.id)
        else:
            found = _extractor(module)(text, path)
    except RecursionError:
        found = {"problems": [{"message": "too deeply nested to analyse"}], "parsed": False}
    except Exception as error:  # an extractor bug must not stop the build
        found = {"problems": [{"message": f"extractor failed: {type(error).__name__}: {error}"}],
                 "parsed": False}
    return found, found.pop("calls", [])


def count_lines(text: str) -> int:
    """Lines as an editor numbers them (a last line without newline counts)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def import_resolver(language_id: str) -> Callable[..., Any] | None:
    """The ``Resolver`` class of a language's module (``kwdocs.extract.paths`` says what it
    does), or None: the languages that need one say so, the others resolve as before."""
    modules = {language.module for language in all_languages() if language.id == language_id}
    for module in sorted(name for name in modules if name):
        resolver = getattr(importlib.import_module(f"kwdocs.extract.{module}"), "Resolver", None)
        if resolver is not None:
            return resolver
    return None


def prefetch(texts: dict[str, str]) -> None:
    """Let the languages read through a tool in one process per unit (``kwdocs.extract.ctags``)
    see every such file of the unit at once; ``texts`` maps paths to decoded texts."""
    batch = [(path, text, language.id) for path, text in texts.items()
             if (language := language_for(path, text)).module == "ctags"]
    if batch:
        from kwdocs.extract import ctags

        ctags.prefetch(batch)

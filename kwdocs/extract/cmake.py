"""CMake scripts: targets, functions and macros, options, and what a script pulls in.

A tokenizer that follows the CMake language's own rules (commands are
case-insensitive, arguments may span lines, ``#`` line comments, ``#[[...]]``
bracket comments and ``[[...]]`` bracket arguments), so documentation inside
comments and strings is never taken for a command.

Names made only of a variable (``add_library(${LIB_NAME} ...)``) are not listed
as targets or functions: a keyword index entry ``${LIB_NAME}`` would match no
name a reader searches for.  Names that merely contain a variable
(``torch_${suffix}``) and the arguments of ``include()``/``find_package()``/
``add_subdirectory()`` are kept exactly as written, since that is the
dependency the reader sees in the file.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from kwdocs.extract.hash_comments import leading_comment, summarize, unique_sorted

_TOKEN = re.compile(
    r"""
    (?P<bracket_comment>\#\[(?P<comment_eq>=*)\[.*?\](?P=comment_eq)\])
  | (?P<comment>\#[^\n]*)
  | (?P<bracket>\[(?P<eq>=*)\[(?P<bracket_text>.*?)\](?P=eq)\])
  | (?P<quoted>"(?P<quoted_text>(?:[^"\\]|\\.)*)")
  | (?P<open>\()
  | (?P<close>\))
  | (?P<word>(?:[^\s()#"\\]|\\.)+)
  """,
    re.VERBOSE | re.DOTALL,
)
# Boilerplate that often comes before a CMakeLists.txt's opening comment.
_PREAMBLE = re.compile(
    r"\A(?:\s*(?:cmake_minimum_required|cmake_policy|include_guard)\s*\([^)]*\)[^\n]*\n)+",
    re.IGNORECASE)
# A bracket comment before any command: CMake modules keep their reST docs there.
_BRACKET_DOC = re.compile(
    r"\A(?:[ \t]*(?:#(?!\[=*\[)[^\n]*)?\n)*[ \t]*#\[(=*)\[(.*?)\]\1\]", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ONLY_VARIABLE = re.compile(r"(?:\$\{[^}]*\}|\$<.*>|\$ENV\{[^}]*\})+\Z")

_TARGET_COMMANDS = {"add_library": "library", "add_executable": "executable",
                    "add_custom_target": "custom target"}
_LIBRARY_TYPES = {"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "UNKNOWN"}
_IMPORT_KINDS = {"include": "include", "add_subdirectory": "include", "find_package": "import"}
_OPTION_COMMANDS = {"option", "cmake_dependent_option"}


class Argument(NamedTuple):
    value: str
    line: int


class Command(NamedTuple):
    name: str          # lower-cased: CMake command names are case-insensitive
    line: int
    arguments: list[Argument]


def commands(text: str) -> Iterator[Command]:
    """Every command invocation, with its arguments' values and lines.

    Parentheses nested inside the arguments (``if((A) OR B)``) are kept as
    arguments of the outer command; an unclosed command at the end of the file
    is still yielded so a cut-off script gives what it has.
    """
    line = 1
    position = 0
    depth = 0
    pending: tuple[str, int] | None = None
    started: tuple[str, int] = ("", 0)    # name and line of the command being read
    arguments: list[Argument] = []
    for match in _TOKEN.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        kind = match.lastgroup
        if kind in ("comment", "bracket_comment"):
            continue
        if depth == 0:
            if kind == "open" and pending is not None:
                started, arguments, depth = pending, [], 1
            is_name = kind == "word" and _IDENTIFIER.match(match.group())
            pending = (match.group(), line) if is_name else None
            continue
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth == 0:
                yield Command(started[0].lower(), started[1], arguments)
        elif kind == "quoted":
            arguments.append(Argument(match.group("quoted_text"), line))
        elif kind == "bracket":
            arguments.append(Argument(match.group("bracket_text"), line))
        else:
            arguments.append(Argument(match.group(), line))
    if depth > 0:
        yield Command(started[0].lower(), started[1], arguments)


def extract(text: str, path: str) -> dict[str, Any]:
    """Targets, functions/macros, options and imports of a CMake script."""
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    for command in commands(text):
        if not command.arguments:
            continue
        first = command.arguments[0]
        rest = [argument.value for argument in command.arguments[1:]]
        if command.name in _TARGET_COMMANDS:
            if not _ONLY_VARIABLE.match(first.value):
                symbols.append({"name": first.value, "kind": "target", "line": first.line,
                                "detail": _target_detail(command.name, rest)})
        elif command.name in ("function", "macro"):
            if not _ONLY_VARIABLE.match(first.value):
                symbol = {"name": first.value, "kind": "function", "line": first.line,
                          "signature": f"({' '.join(rest)})"}
                if command.name == "macro":
                    symbol["detail"] = "macro"
                symbols.append(symbol)
        elif command.name in _OPTION_COMMANDS:
            if not _ONLY_VARIABLE.match(first.value):
                symbols.append({"name": first.value, "kind": "constant", "line": first.line,
                                "detail": "option"})
        elif command.name in _IMPORT_KINDS and first.value:
            kind = _IMPORT_KINDS[command.name]
            imports.append({"module": first.value, "line": first.line, "kind": kind})
            symbols.append({"name": first.value, "kind": kind, "line": first.line})
    return {"symbols": unique_sorted(symbols), "imports": unique_sorted(imports),
            "docstring": leading_comment(_PREAMBLE.sub("", text, count=1)) or _bracket_doc(text)}


def _bracket_doc(text: str) -> str:
    """The opening ``#[[...]]`` comment's text (``.rst:`` marker dropped), summarised."""
    match = _BRACKET_DOC.match(text)
    if not match:
        return ""
    lines = [line.strip() for line in match.group(2).split("\n")]
    return summarize(lines)


def _target_detail(command: str, rest: list[str]) -> str:
    """``shared library``, ``imported interface library``, ``alias library`` ..."""
    words = {value.upper() for value in rest[:3]}
    noun = _TARGET_COMMANDS[command]
    if command == "add_custom_target":
        return noun
    if "ALIAS" in words:
        return f"alias {noun}"
    kind = next((value.lower() for value in rest[:2] if value.upper() in _LIBRARY_TYPES), "")
    prefix = "imported " if "IMPORTED" in words else ""
    return f"{prefix}{kind + ' ' if kind else ''}{noun}"

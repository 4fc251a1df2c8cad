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

import fnmatch
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
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
    """Targets, functions/macros, options, imports and installed files of a CMake script."""
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    installs = _Installs(posixpath.dirname(path))
    for command in commands(text):
        if command.name == "if":
            installs.depth += 1
        elif command.name == "endif":
            installs.depth = max(0, installs.depth - 1)
        if not command.arguments:
            continue
        installs.read(command)
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
    found = {"symbols": unique_sorted(symbols), "imports": unique_sorted(imports),
             "docstring": leading_comment(_PREAMBLE.sub("", text, count=1)) or _bracket_doc(text)}
    if installs.found:
        found["installs"] = installs.found
    return found


# ---------------------------------------------------------------- what ``make install`` copies

# Paths are read relative to the script's folder; these variables name a known folder.
_FOLDER_VARIABLES = {"CMAKE_CURRENT_SOURCE_DIR": "here", "CMAKE_CURRENT_LIST_DIR": "here",
                     "PROJECT_SOURCE_DIR": "root", "CMAKE_SOURCE_DIR": "root"}
_VARIABLE = re.compile(r"\$\{(\w+)\}")
_FILES_KEYWORDS = {"DESTINATION", "TYPE", "PERMISSIONS", "CONFIGURATIONS", "COMPONENT", "RENAME", "OPTIONAL",
                   "EXCLUDE_FROM_ALL", "FILES_MATCHING", "PATTERN", "REGEX", "USE_SOURCE_PERMISSIONS",
                   "FILE_PERMISSIONS", "DIRECTORY_PERMISSIONS", "MESSAGE_NEVER"}


class _Installs:
    """The files a script's ``install(FILES ...)``, ``install(DIRECTORY ...)`` and ``PUBLIC_HEADER``
    properties install, as paths of the tree with the line saying so.  ``set()`` and ``list(APPEND)``
    of plain values are followed in the order written (inside ``if()`` a ``set()`` adds to what the
    variable may hold: each branch's folder is installed under some option); a path made of any
    other variable, a generator expression or an absolute path is not the tree's and is left out."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.variables: dict[str, list[str]] = {}
        self.found: list[dict[str, Any]] = []
        self.depth = 0   # of if() blocks

    def read(self, command: Command) -> None:
        values = [argument.value for argument in command.arguments]
        name = command.name
        if name == "set" and values:
            value = self.expand([v for v in values[1:] if v != "PARENT_SCOPE"] if "CACHE" not in values
                                else values[1:2])
            if self.depth and values[0] in self.variables:
                value = list(dict.fromkeys(self.variables[values[0]] + value))
            self.variables[values[0]] = value
        elif name == "list" and len(values) > 2 and values[0].upper() == "APPEND":
            self.variables.setdefault(values[1], []).extend(self.expand(values[2:]))
        elif name == "install" and values:
            mode = values[0].upper()
            if mode == "FILES":
                self.add(command.line, files=self.paths(values[1:]))
            elif mode == "DIRECTORY":
                self.directory(command.line, values[1:])
        elif name in ("set_target_properties", "set_property") and "PUBLIC_HEADER" in values:
            start = values.index("PUBLIC_HEADER") + 1
            self.add(command.line, files=self.paths(values[start:]))

    def expand(self, values: list[str]) -> list[str]:
        """Values with ``${VAR}`` of known lists replaced (a list splits at ``;``)."""
        out: list[str] = []
        for value in values:
            whole = _VARIABLE.fullmatch(value)
            if whole and whole.group(1) in self.variables:
                out.extend(self.variables[whole.group(1)])
                continue
            value = _VARIABLE.sub(lambda m: ";".join(self.variables.get(m.group(1), [m.group()])), value)
            out.extend(part for part in value.split(";") if part)
        return out

    def paths(self, values: list[str]) -> list[str]:
        """The tree paths among arguments up to the first keyword."""
        found = []
        for value in self.expand(values):
            if value.upper() in _FILES_KEYWORDS:
                break
            path = self.tree_path(value)
            if path is not None:
                found.append(path)
        return found

    def tree_path(self, value: str) -> str | None:
        folder = self.folder
        whole = re.match(r"\$\{(\w+)\}/?", value)
        if whole and whole.group(1) in _FOLDER_VARIABLES:
            folder = self.folder if _FOLDER_VARIABLES[whole.group(1)] == "here" else ""
            value = value[whole.end():]
        if "$" in value or value.startswith("/") or not value.strip():
            return None
        path = posixpath.normpath(posixpath.join(folder, value))
        return None if path.startswith("..") else ("" if path == "." else path)

    def directory(self, line: int, values: list[str]) -> None:
        values = self.expand(values)
        end = next((index for index, value in enumerate(values) if value.upper() in _FILES_KEYWORDS), len(values))
        folders = [path for value in values[:end] if (path := self.tree_path(value)) is not None]
        match: list[str] = []
        exclude: list[str] = []
        index = end
        while index < len(values):
            word = values[index].upper()
            if word in ("PATTERN", "REGEX") and index + 1 < len(values):
                pattern = values[index + 1] if word == "PATTERN" else "re:" + values[index + 1]
                excluded = index + 2 < len(values) and values[index + 2].upper() == "EXCLUDE"
                (exclude if excluded else match).append(pattern)
                index += 3 if excluded else 2
                continue
            index += 1
        only = "FILES_MATCHING" in (value.upper() for value in values)
        if folders:
            self.add(line, folders=folders, match=match if only else [], exclude=exclude)

    def add(self, line: int, files: list[str] | None = None, folders: list[str] | None = None,
            **patterns: list[str]) -> None:
        if files or folders:
            entry: dict[str, Any] = {"line": line}
            if files:
                entry["files"] = list(files)
            if folders:
                entry["folders"] = list(folders)
            entry.update({key: value for key, value in patterns.items() if value})
            self.found.append(entry)


def installed_files(installs: Mapping[str, list[dict]], paths: Iterable[str]) -> dict[str, list]:
    """For each path of the tree a build file installs: ``[build file, line]`` (the first one saying so).

    ``installs``: each build file's ``installs`` facts (``files``, ``folders`` with ``match`` and
    ``exclude`` patterns, as CMake's ``PATTERN`` (a file or folder name) or ``re:`` + ``REGEX``)."""
    answer: dict[str, list] = {}
    folders: list[tuple[str, dict, str, int]] = []
    for build, entries in sorted(installs.items()):
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            for path in entry.get("files", []):
                answer.setdefault(path, [build, entry.get("line", 0)])
            folders.extend((folder, entry, build, entry.get("line", 0)) for folder in entry.get("folders", []))
    if folders:
        for path in paths:
            if path in answer:
                continue
            for folder, entry, build, line in folders:
                inside = path[len(folder) + 1:] if folder else path
                if (not folder or path.startswith(folder + "/")) and _copied(inside, entry):
                    answer[path] = [build, line]
                    break
    return answer


def _copied(inside: str, entry: dict) -> bool:
    """Does ``install(DIRECTORY ...)`` copy the file at ``inside`` (its path under the folder)?"""
    parts = inside.split("/")
    for pattern in entry.get("exclude", []):
        if _pattern_matches(pattern, inside, parts):
            return False
    match = entry.get("match", [])
    return not match or any(_pattern_matches(pattern, inside, parts[-1:]) for pattern in match)


def _pattern_matches(pattern: str, inside: str, names: list[str]) -> bool:
    if pattern.startswith("re:"):
        try:
            return re.search(pattern[3:], inside) is not None
        except re.error:
            return False
    return any(fnmatch.fnmatchcase(name, pattern) for name in names)


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

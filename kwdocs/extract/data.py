"""Data files (YAML, TOML, JSON): their top-level keys, each with its line.

Top-level keys are what a reader looks a configuration file up by
(``jobs``, ``project``, ``tool.ruff``, ``traceEvents``).  Each format is read by
its real parser so that a broken file is reported with the parser's line, and
whatever can still be found cheaply is listed anyway (``parsed: False``).

- YAML: PyYAML's event stream (libyaml when present, about 25x faster), which
  gives every key's position without building the document and keeps keys as
  written (``on:`` stays ``on``, not ``True``).  Every document of a stream
  contributes its keys.
- TOML: ``tomllib`` checks the file; it keeps no positions, so a small line
  scanner finds top-level ``key =`` lines and every ``[table]`` /
  ``[[array.of.tables]]`` header.  A table is named by its header as written
  (``tool.ruff.lint``), the name a reader searches for.
- JSON: the top-level object is walked key by key with ``JSONDecoder.raw_decode``,
  so each key's offset is known exactly while its value is checked at C speed
  and thrown away (objects inside are decoded to ``None``): a multi-megabyte
  trace costs a fraction of a second and no big structure.  JSON with
  comments or trailing commas (``tsconfig.json``, VS Code settings) is read as
  such rather than reported as broken.

An empty file has no keys and no problem in any of the three formats.
"""
from __future__ import annotations

import bisect
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

import yaml

from kwdocs.extract.hash_comments import leading_comment, unique_sorted

Result = dict[str, Any]


def extract(text: str, path: str) -> Result:
    """Dispatch on the file's suffix; an unknown suffix is treated as YAML."""
    suffix = PurePosixPath(path).suffix.lower()
    reader: Callable[[str], Result] = {".toml": _toml, ".json": _json}.get(suffix, _yaml)
    return reader(text)


def _result(keys: list[dict[str, Any]], problems: list[dict[str, Any]],
            docstring: str = "") -> Result:
    return {"symbols": unique_sorted(keys), "docstring": docstring,
            "problems": problems, "parsed": not problems}


def _key(name: str, line: int, detail: str = "") -> dict[str, Any]:
    symbol: dict[str, Any] = {"name": name, "kind": "key", "line": line}
    if detail:
        symbol["detail"] = detail
    return symbol


# --- YAML -------------------------------------------------------------------

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_NODE_START = (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent,
                    yaml.SequenceStartEvent)
# A key at column 0 (plain or quoted), as a fallback after a parse error.
_YAML_KEY_LINE = re.compile(
    r"""^("[^"\n]+"|'[^'\n]+'|[^\s#'"\-?:,\[\]{}&*!|>%@`][^\n#]*?)[ \t]*:(?:[ \t]|$)""",
    re.MULTILINE)


def _yaml(text: str) -> Result:
    keys: list[dict[str, Any]] = []
    try:
        _yaml_keys(text, keys)
    except yaml.YAMLError as error:
        line, message = _yaml_error(error, text)
        # Keys before the error are exact; after it (or for a file the reader
        # refused outright) column-0 ``key:`` lines are a fair guess.
        keys.extend(_yaml_keys_by_line(text, from_line=(line or 1) if keys else 1))
        return _result(keys, [_problem(line, f"YAML parse error: {message}")],
                       leading_comment(text))
    return _result(keys, [], leading_comment(text))


def _yaml_keys(text: str, keys: list[dict[str, Any]]) -> None:
    """Append each document's top-level keys to ``keys`` as the parser meets them.

    ``keys`` is filled in place so that the keys before a parse error are kept.
    """
    # One entry per open collection: True for a mapping expecting a key,
    # False for a mapping expecting a value, None for a sequence.
    stack: list[bool | None] = []
    line_of = _yaml_lines(text)
    for event in yaml.parse(text, Loader=_YAML_LOADER):
        if isinstance(event, _YAML_NODE_START):
            is_key = bool(stack) and stack[-1] is True
            if stack and stack[-1] is not None:
                stack[-1] = not stack[-1]
            if (is_key and len(stack) == 1 and isinstance(event, yaml.ScalarEvent)
                    and event.value and not (event.value == "<<" and not event.style)):  # a plain << merges
                keys.append(_key(_yaml_written(event, text), line_of(event.start_mark)))
            if isinstance(event, yaml.MappingStartEvent):
                stack.append(True)
            elif isinstance(event, yaml.SequenceStartEvent):
                stack.append(None)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            stack.pop()


# YAML also ends lines at NEL, LS and PS; kwdocs, like editors and every other
# extractor, numbers lines at "\n" only (decode() has turned \r and \r\n into it).
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")


def _yaml_lines(text: str) -> Callable[[Any], int]:   # a mark of the pure or of the C parser
    """The 1-based line of a parser mark, counted at "\n" only."""
    if not _YAML_ONLY_BREAKS.search(text):
        return lambda mark: mark.line + 1 if mark else 1
    ends = [match.start() for match in re.finditer("\n", text)]
    return lambda mark: bisect.bisect_left(ends, mark.index) + 1 if mark else 1


def _yaml_written(event: yaml.ScalarEvent, text: str) -> str:
    """The key's value, or its text as written when escapes make the two differ."""
    if event.style in ('"', "'") and event.start_mark and event.end_mark:
        written = text[event.start_mark.index + 1:event.end_mark.index - 1]
        if event.value not in written:
            return written
    return event.value


def _yaml_error(error: yaml.YAMLError, text: str) -> tuple[int | None, str]:
    """The line to report and a one-line message; the context mark is named in it."""
    mark = getattr(error, "problem_mark", None)
    if isinstance(error, yaml.MarkedYAMLError):
        line_of = _yaml_lines(text)
        parts = []
        if error.context:
            context_mark = error.context_mark
            where = f" started on line {line_of(context_mark)}" if context_mark else ""
            parts.append(f"{error.context}{where}")
        parts.append(error.problem or "invalid YAML")
        line = line_of(mark) if mark else None
        return line, ": ".join(parts)
    if isinstance(error, yaml.reader.ReaderError):
        position = min(max(error.position, 0), len(text))
        return text.count("\n", 0, position) + 1, f"unacceptable character #x{error.character:04x}"
    return None, str(error).splitlines()[0] if str(error) else type(error).__name__


def _yaml_keys_by_line(text: str, from_line: int) -> list[dict[str, Any]]:
    """Column-0 ``key:`` lines from ``from_line`` on: a guess, used only after an error."""
    found = []
    for match in _YAML_KEY_LINE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if line >= from_line:
            name = match.group(1)
            if name[0] in "'\"":
                name = name[1:-1]
            found.append(_key(name, line))
    return found


def _problem(line: int | None, message: str) -> dict[str, Any]:
    return {"line": line, "message": message} if line else {"message": message}


# --- TOML -------------------------------------------------------------------

_TOML_QUOTED_PART = r'"(?:[^"\\\n]|\\.)*"' + r"|'[^'\n]*'"   # basic | literal string
_TOML_KEY_PART = rf"(?:[A-Za-z0-9_-]+|{_TOML_QUOTED_PART})"
_TOML_KEY_PATH = rf"{_TOML_KEY_PART}(?:[ \t]*\.[ \t]*{_TOML_KEY_PART})*"
_TOML_ARRAY_TABLE = re.compile(rf"[ \t]*\[\[[ \t]*({_TOML_KEY_PATH})[ \t]*\]\]")
_TOML_TABLE = re.compile(rf"[ \t]*\[[ \t]*({_TOML_KEY_PATH})[ \t]*\]")
_TOML_KEY = re.compile(rf"[ \t]*({_TOML_KEY_PATH})[ \t]*=")
_TOML_QUOTED = re.compile(_TOML_QUOTED_PART)
_TOML_POSITION = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)\s*$")


def _toml(text: str) -> Result:
    problems = []
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        position = _TOML_POSITION.search(message)
        line = getattr(error, "lineno", None)   # Python 3.14 has it; 3.11 only in the text
        if position:
            line = int(position.group(1)) if position.group(1) else text.count("\n") + 1
            message = message[:position.start()]
        problems.append(_problem(line, f"TOML parse error: {message}"))
    return _result(_toml_keys(text), problems, leading_comment(text))


def _toml_keys(text: str) -> list[dict[str, Any]]:
    """Table headers anywhere and ``key =`` lines before the first header.

    Lines inside multi-line strings and multi-line arrays are skipped, so a
    ``[section]`` quoted in a string is not taken for a table.
    """
    keys: list[dict[str, Any]] = []
    in_table = False
    open_string = ""     # the delimiter of a multi-line string still open
    depth = 0            # brackets and braces of a value still open
    for number, line in enumerate(text.split("\n"), start=1):
        rest = line
        if not open_string and depth == 0:
            header = _TOML_ARRAY_TABLE.match(line) or _TOML_TABLE.match(line)
            if header:
                in_table = True
                detail = "array of tables" if header.re is _TOML_ARRAY_TABLE else "table"
                keys.append(_key(header.group(1), number, detail))
                rest = line[header.end():]
            else:
                key = _TOML_KEY.match(line)
                if key:
                    if not in_table:
                        keys.append(_key(_toml_key_name(key.group(1)), number))
                    rest = line[key.end():]
        open_string, depth = _toml_scan_value(rest, open_string, depth)
    return keys


def _toml_key_name(written: str) -> str:
    """A key as written, unquoted when it is one quoted part (``"quoted key"``)."""
    if _TOML_QUOTED.fullmatch(written):
        return written[1:-1]
    return written


def _toml_scan_value(text: str, open_string: str, depth: int) -> tuple[str, int]:
    """Carry the multi-line string and bracket state across one line of a value."""
    index = 0
    while index < len(text):
        if open_string:
            end = text.find(open_string, index)
            if open_string == '"""':
                while end > 0 and _escaped(text, end):
                    end = text.find(open_string, end + 1)
            if end < 0:
                return open_string, depth
            index = end + 3
            while index < len(text) and text[index] == open_string[0]:
                index += 1   # up to two quotes may close the string: """a"""""
            open_string = ""
            continue
        char = text[index]
        if text.startswith(('"""', "'''"), index):
            open_string = text[index:index + 3]
            index += 3
            continue
        if char == "#":
            break
        if char in "\"'":
            end = index + 1
            while end < len(text) and text[end] != char:
                end += 2 if char == '"' and text[end] == "\\" else 1
            index = end + 1
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth = max(depth - 1, 0)
        index += 1
    return open_string, depth


def _escaped(text: str, index: int) -> bool:
    backslashes = len(text[:index]) - len(text[:index].rstrip("\\"))
    return backslashes % 2 == 1


# --- JSON -------------------------------------------------------------------

_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _skip_space(text: str, index: int) -> int:
    """The offset of the first non-whitespace character at or after ``index``."""
    match = _JSON_SPACE.match(text, index)
    return match.end() if match else index

# Comments and trailing commas of JSONC, matched together with strings so that
# "//" inside a string is left alone.
_JSONC_COMMENT = r"//[^\n]*|/\*.*?\*/"
_JSONC_NOISE = re.compile(
    rf'"(?:[^"\\\n]|\\.)*"|{_JSONC_COMMENT}|,(?=(?:\s|{_JSONC_COMMENT})*[}}\]])', re.DOTALL)


def _json(text: str) -> Result:
    keys: list[dict[str, Any]] = []
    try:
        _json_keys(text, keys)
    except json.JSONDecodeError as error:
        cleaned = _without_jsonc_noise(text) if _may_be_jsonc(text, error) else text
        if cleaned != text:
            retry: list[dict[str, Any]] = []
            try:
                _json_keys(cleaned, retry)
            except json.JSONDecodeError:
                pass
            else:
                return _result(retry, [])
        keys.extend(_json_keys_by_indent(text, keys, error.lineno))
        return _result(keys, [_problem(error.lineno, f"JSON parse error: {error.msg}")])
    return _result(keys, [])


def _discard(pairs: list[tuple[str, Any]]) -> None:
    """Objects below the top level are checked, not kept."""
    return None


_DECODER = json.JSONDecoder(object_pairs_hook=_discard)


def _json_keys(text: str, keys: list[dict[str, Any]]) -> None:
    """Append the top-level object's keys as they are read; raise at the first error."""
    index = _skip_space(text, 0)
    if index == len(text):
        return
    if text[index] == "{":
        index = _json_object_keys(text, index, keys)
    else:
        _, index = _DECODER.raw_decode(text, index)
    index = _skip_space(text, index)
    if index != len(text):
        raise json.JSONDecodeError("Extra data", text, index)


def _json_object_keys(text: str, index: int, keys: list[dict[str, Any]]) -> int:
    """Read the object at ``index`` member by member; return the offset after its ``}``."""
    line, counted = 1, 0
    index = _skip_space(text, index + 1)
    if text.startswith("}", index):
        return index + 1
    while True:
        if not text.startswith('"', index):
            raise json.JSONDecodeError(
                "Expecting property name enclosed in double quotes", text, index)
        name, end = _DECODER.raw_decode(text, index)
        line += text.count("\n", counted, index)
        counted = index
        if "\\" in text[index:end]:
            name = text[index + 1:end - 1]   # as written, so it is found on its line
        keys.append(_key(name, line))
        index = _skip_space(text, end)
        if not text.startswith(":", index):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, index)
        _, end = _DECODER.raw_decode(text, _skip_space(text, index + 1))
        index = _skip_space(text, end)
        if text.startswith("}", index):
            return index + 1
        if not text.startswith(",", index):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, index)
        index = _skip_space(text, index + 1)


def _may_be_jsonc(text: str, error: json.JSONDecodeError) -> bool:
    """Comments, or an error a trailing comma causes: worth the slower second reading."""
    trailing_comma_errors = ("Expecting value",
                             "Expecting property name enclosed in double quotes")
    return "//" in text or "/*" in text or error.msg in trailing_comma_errors


def _without_jsonc_noise(text: str) -> str:
    """Blank out comments and trailing commas, keeping every offset and line."""
    def blank(match: re.Match[str]) -> str:
        found = match.group()
        if found.startswith('"'):
            return found
        return re.sub(r"[^\n]", " ", found)

    return _JSONC_NOISE.sub(blank, text)


def _json_keys_by_indent(text: str, known: list[dict[str, Any]],
                         error_line: int) -> list[dict[str, Any]]:
    """After an error, lines indented like the keys already read (pretty-printed JSON)."""
    lines = text.split("\n")
    first = lines[known[0]["line"] - 1] if known else ""
    if not first.lstrip().startswith('"'):
        return []   # nothing to learn the indentation from
    indent = first[:len(first) - len(first.lstrip())]
    pattern = re.compile(rf'{re.escape(indent)}("(?:[^"\\]|\\.)*")\s*:')
    found = []
    for number in range(error_line, len(lines) + 1):
        match = pattern.match(lines[number - 1])
        if match:
            found.append(_key(match.group(1)[1:-1], number))
    return found

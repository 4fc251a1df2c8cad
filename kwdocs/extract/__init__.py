"""Extraction: from a file's bytes to its facts record (see ``kwdocs.facts``).

One module per language, each exposing ``extract(text, path) -> dict`` with any
of the keys ``symbols``, ``imports``, ``docstring``, ``problems``, ``parsed``
and ``calls`` (called names, for the rules; not kept in the record).  The
registry below maps file names to a language; adding a language is one new
module plus one row here.
"""
from __future__ import annotations

import hashlib
import importlib
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
TEXT = Language("text", "Text File", "text", "text")
BINARY = Language("binary", "Binary File", "", None)

BY_SUFFIX: dict[str, Language] = {
    ".py": PYTHON, ".pyw": PYTHON, ".pyi": PYTHON_STUB,
    ".md": MARKDOWN, ".markdown": MARKDOWN, ".rst": RST,
    ".h": C_HEADER, ".hpp": CPP_HEADER, ".hh": CPP_HEADER, ".hxx": CPP_HEADER,
    ".inl": CPP_HEADER, ".cuh": CUDA,
    ".c": C_SOURCE, ".cc": CPP_SOURCE, ".cpp": CPP_SOURCE, ".cxx": CPP_SOURCE,
    ".cu": CUDA,
    ".yaml": YAML, ".yml": YAML, ".toml": TOML, ".json": JSON,
    ".cmake": CMAKE, ".sh": SHELL, ".bash": SHELL,
}
BY_NAME: dict[str, Language] = {"CMakeLists.txt": CMAKE}


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
    return BY_SUFFIX.get(suffix, TEXT)


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
    facts.update(language=language.id, type_label=language.label, fence=language.fence,
                 binary=False, encoding=encoding, lines=count_lines(text))
    if encoding not in ("utf-8", "ascii") and encoding != (bom_encoding(data) or coding_line(data)):
        # a guess (Latin-1 never fails) is worth a line; a BOM or coding line the file declares is not
        facts["problems"].append({"message": f"not UTF-8; decoded as {encoding}"})
    found, calls = extract_text(path, text)
    facts["problems"].extend(found.pop("problems", []))
    facts.update(found)
    return facts, text, calls


def extract_text(path: str, text: str) -> tuple[dict[str, Any], list[dict]]:
    """What the extractor of ``path``'s language finds in decoded text, and the calls; never raises."""
    module = language_of(path).module or "text"
    try:
        found = _extractor(module)(text, path)
    except RecursionError:
        found = {"problems": [{"message": "too deeply nested to analyse"}], "parsed": False}
    except Exception as error:  # an extractor bug must not stop the build
        found = {"problems": [{"message": f"extractor failed: {type(error).__name__}: {error}"}],
                 "parsed": False}
    return _bounded(found), found.pop("calls", [])[:MAX_ENTRIES]


MAX_ENTRIES = 20_000
"""Definitions (and imports) kept of one file: every later step holds them, pages and the
keyword index list them.  A file with more is generated data, not something to read."""


def _bounded(found: dict[str, Any]) -> dict[str, Any]:
    """``found`` with at most ``MAX_ENTRIES`` definitions and imports (the first ones), saying so."""
    for key, what in (("symbols", "definitions"), ("imports", "imports")):
        if len(found.get(key) or ()) > MAX_ENTRIES:
            found.setdefault("problems", []).append(
                {"message": f"{len(found[key]):,} {what}: only the first {MAX_ENTRIES:,} are listed"})
            found[key] = found[key][:MAX_ENTRIES]
    return found


def count_lines(text: str) -> int:
    """Lines as an editor numbers them (a last line without newline counts)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)

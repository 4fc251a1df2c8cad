"""Extraction: from a file's bytes to its facts record (see ``kwdocs.facts``).

One module per language, each exposing ``extract(text, path) -> dict`` with any
of the keys ``symbols``, ``imports``, ``docstring``, ``problems``, ``parsed``
and ``calls`` (called names, for the rules; not kept in the record).  Where a
language documents a definition by the comment above it (``Language.doc_comments``),
that comment becomes the symbol's ``doc`` here, the same way for every such
language.  Which module reads which file is the language registry's
(``kwdocs.languages``): adding a language is one new module plus one row there.
A file whose name says nothing is recognised by its ``#!`` line or an editor
modeline (``languages.language_for``), read where extraction reads it anyway.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kwdocs.extract.decode import bom_encoding, coding_line, decode, is_binary
from kwdocs.extract.text import attach_comment_docs
from kwdocs.facts import Facts, facts_fields
from kwdocs.languages import BINARY, BY_NAME, BY_SUFFIX, TEXT, Language, language_for, language_of  # noqa: F401  (re-exported)

if TYPE_CHECKING:   # mypy holds the built-in extractor modules and resolver classes to the languages' protocols
    from kwdocs.extract import cmake, cpp, data, golang, java, javascript, lua, make, prose, python, rust, shell, text
    from kwdocs.languages import Extractor, TreeResolver
    # (``ctags`` reads many languages: it has ``extract_as``, told which)
    _EXTRACTORS: tuple[Extractor, ...] = (cmake, cpp, data, golang, java, javascript, lua, make, prose, python, rust,
                                          shell, text)
    _RESOLVERS: tuple[type[TreeResolver], ...] = (golang.Resolver, java.Resolver, javascript.Resolver, lua.Resolver,
                                                  rust.Resolver)


def extract_bytes(path: str, data: bytes, mask: Callable[[str, str], str] | None = None,
                  ) -> tuple[Facts, str | None, list[dict]]:
    """Facts of one file, its decoded text (None for binaries), and its calls.

    ``mask(text, language id)`` (secrets masked) is applied to the text before the
    extractor sees it, so no fact (definition, docstring, problem) can hold a secret.
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
        facts.update({"language": "binary", "type_label": BINARY.label, "fence": "", "binary": True,
                      "lines": 0, "encoding": ""})
        if language is not TEXT:  # a .png is binary by nature; a .py holding NUL bytes is damaged
            facts["problems"].append({"message": "holds NUL bytes: documented as a binary file, "
                                                 f"not as {language.label}"})
        return facts, None, []
    text, encoding = decode(data)
    language = language_for(path, text)
    facts.update({"language": language.id, "type_label": language.label, "fence": language.fence,
                  "binary": False, "encoding": encoding, "lines": count_lines(text)})
    if encoding not in ("utf-8", "ascii") and encoding != (bom_encoding(data) or coding_line(data)):
        # a guess (Latin-1 never fails) is worth a line; a BOM or coding line the file declares is not
        facts["problems"].append({"message": f"not UTF-8; decoded as {encoding}"})
    found, calls = extract_text(path, mask(text, language.id) if mask is not None else text, language)
    facts["problems"].extend(found.pop("problems", []))
    facts.update(facts_fields(found))
    return facts, text, calls


def extract_text(path: str, text: str, language: Language | None = None) -> tuple[dict[str, Any], list[dict]]:
    """What the extractor of ``path``'s language finds in decoded text, and the calls; never raises."""
    language = language or language_for(path, text)
    try:
        found = language.extract(text, path)
        if language.doc_comments and found.get("symbols"):
            attach_comment_docs(text, found["symbols"], language.doc_comments == "#")
    except RecursionError:
        found = {"problems": [{"message": "too deeply nested to analyse"}], "parsed": False}
    except Exception as error:  # noqa: BLE001 - an extractor bug must not stop the build
        found = {"problems": [{"message": f"extractor failed: {type(error).__name__}: {error}"}],
                 "parsed": False}
    calls = found.pop("calls", [])
    return _bounded(found), calls[:MAX_ENTRIES] if len(calls) > MAX_ENTRIES else calls


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

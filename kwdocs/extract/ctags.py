"""Languages without an extractor of their own, through Universal Ctags when it is installed.

One ``ctags`` process reads all such files of a unit (``prefetch``); each
file's definitions are then looked up by its path and the hash of its text,
so a result is used only for the very text it was made from.  A file met
without a prefetch (its text masked for secrets, a single file) gets a
process of its own.  Without ctags, the file gets the plain-text page.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from kwdocs.extract import text as plain
from kwdocs.languages import CTAGS, Language, language_for, suffix_of

EXTRACTOR = "Universal Ctags"
TIMEOUT_SECONDS = 60
ARGUMENTS = ["--output-format=json", "--fields=+nS", "--sort=no", "--extras=-F"]

_FUNCTION = re.compile(r"func|proc|sub|method|routine|macrofunc|signal|slot|task|entry|rule")
_CLASS = re.compile(r"class|struct|interface|trait|record|object|role|union|enum\b|protocol|message")
_NAMESPACE = re.compile(r"namespace|package|module|library|unit")
_CONSTANT = re.compile(r"const|define")
_VARIABLE = re.compile(r"var|field|member|property|attribute|parameter|global|local")
_HEADING = re.compile(r"heading|chapter|section|part|title")
_TYPE = re.compile(r"type|alias")


@lru_cache(maxsize=1)
def executable() -> str | None:
    """The path of Universal Ctags, or None (another ctags cannot write JSON, nor read texts
    from its standard input: kwdocs writes no file outside its output folder)."""
    found = shutil.which("ctags")
    if found is None:
        return None
    try:
        version = subprocess.run([found, "--version"], capture_output=True, text=True,
                                 timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    features = _features(found)
    return found if "Universal Ctags" in version and "+json" in features and "+interactive" in features else None


def _features(found: str) -> str:
    try:
        return subprocess.run([found, "--list-features"], capture_output=True, text=True,
                              timeout=10, check=False).stdout.replace("\n", " +").replace(" ", "")
    except (OSError, subprocess.SubprocessError):
        return ""


def fingerprint() -> str:
    """What ctags' presence adds to the extraction key: its path, size and time, no process."""
    found = shutil.which("ctags")
    if found is None:
        return ""
    try:
        info = os.stat(found)
    except OSError:
        return ""
    return f"{os.path.realpath(found)}:{info.st_size}:{info.st_mtime_ns}"


_found: dict[tuple[str, str], list[dict[str, Any]] | None] = {}  # None: ctags failed on it


def _key(path: str, text: str) -> tuple[str, str]:
    return path, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def prefetch_texts(texts: dict[str, str]) -> None:
    """Let the files of a unit that ctags reads (by name, ``#!`` line or modeline; ``texts`` maps
    paths to decoded texts) be tagged in one process, before extraction asks for each."""
    prefetch([(path, text, suffix_of(language.id)) for path, text in texts.items()
              if (language := language_for(path, text)).module == CTAGS])


def prefetch(files: Iterable[tuple[str, str, str]]) -> None:
    """Tags of many files (path, text, a file suffix ctags reads as their language) in one ctags
    process, kept for ``extract``."""
    files = [item for item in files if _key(item[0], item[1]) not in _found]
    if not files or executable() is None:
        return
    _found.clear()  # one unit at a time: memory stays bounded
    _found.update(_run(files))


def _run(files: list[tuple[str, str, str]]) -> Mapping[tuple[str, str], list[dict[str, Any]] | None]:
    """Tag the texts in one ctags process, each sent on its standard input (``--_interactive``)
    under a name with a suffix ctags knows; a run that fails or hangs gives None for each file
    (no second try file by file)."""
    keys = {f"{index}{suffix}": _key(path, text) for index, (path, text, suffix) in enumerate(files)}
    requests = bytearray()
    for name, (_, text, _) in zip(keys, files):
        data = text.encode("utf-8", "surrogatepass")
        requests += json.dumps({"command": "generate-tags", "filename": name, "size": len(data)}).encode()
        requests += b"\n" + data
    try:
        completed = subprocess.run([executable() or "ctags", *ARGUMENTS, "--_interactive"], input=bytes(requests),
                                   capture_output=True, timeout=TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return dict.fromkeys(keys.values())
    if completed.returncode != 0:
        return dict.fromkeys(keys.values())
    results: dict[tuple[str, str], list[dict[str, Any]]] = {key: [] for key in keys.values()}
    for line in completed.stdout.decode("utf-8", "replace").splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if isinstance(tag, dict) and tag.get("_type") == "tag" and tag.get("path") in keys:
            results[keys[tag["path"]]].append(tag)
    return results


def extract_as(text: str, path: str, language: Language) -> dict[str, Any]:
    """The registry's call (``Language.extract``): one reader of many languages is told which."""
    return extract(text, path, suffix_of(language.id))


def extract(text: str, path: str, suffix: str) -> dict[str, Any]:
    """Definitions by ctags when it is installed (``suffix``: a file suffix ctags reads as the
    file's language, which the registry knows), else the plain-text extraction."""
    key = _key(path, text)
    if executable() is None:
        return plain.extract(text, path)
    tags = _found[key] if key in _found else _run([(path, text, suffix)]).get(key)
    if tags is None:
        found = plain.extract(text, path)
        found.setdefault("problems", []).append(
            {"message": "Universal Ctags failed on this file: identifiers only"})
        return found
    symbols = [_symbol(tag) for tag in tags if isinstance(tag.get("name"), str)]
    symbols.sort(key=lambda symbol: (symbol["line"], symbol["name"], symbol["kind"]))
    return {"symbols": symbols, "docstring": plain.leading_comment(text), "extractor": EXTRACTOR}


def _symbol(tag: dict[str, Any]) -> dict[str, Any]:
    ctags_kind = str(tag.get("kind", ""))
    symbol: dict[str, Any] = {"name": tag["name"], "kind": kind_of(ctags_kind, tag.get("scope")),
                              "line": int(tag.get("line") or 1)}
    if symbol["kind"] in ("class", "namespace") and ctags_kind not in ("class", "namespace"):
        symbol["detail"] = ctags_kind  # ``struct``, ``module``, ``package``
    if isinstance(tag.get("signature"), str):
        symbol["signature"] = f"{tag['name']} {tag['signature']}"
    if isinstance(tag.get("scope"), str):
        symbol["parent"] = tag["scope"]
    return symbol


def kind_of(ctags_kind: str, scope: object = None) -> str:
    """A ctags kind as one of kwdocs' keyword kinds."""
    kind = ctags_kind.lower()
    if kind in ("macro", "target", "include", "heading"):
        return kind
    if _FUNCTION.search(kind):
        return "method" if scope and kind in ("method", "singletonmethod") else "function"
    for pattern, ours in ((_NAMESPACE, "namespace"), (_CLASS, "class"), (_CONSTANT, "constant"),
                          (_HEADING, "heading"), (_TYPE, "type"), (_VARIABLE, "variable")):
        if pattern.search(kind):
            return ours
    return "identifier"

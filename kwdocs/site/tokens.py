"""Highlight tokens made from the tree extraction parsed, kept for the render step (``--html``).

Extraction parses a C/C++/CUDA file (and a Go, Rust, Java, Lua, JavaScript/TypeScript or
Make file) with tree-sitter already; the highlighter needs only the ranges its highlight
query captures in such a tree.  In an HTML build, extraction runs the query on its own tree
(``Recorder.record``) and keeps the ranges in a per-unit shard (``state.TOKENS``): per file, the fence
info, the size and digest of the exact text tokenized, and the ranges packed (start and end as
32-bit numbers, a byte per class).  The shard is sealed and names the code that made it (kwdocs,
the grammars, their queries).  The render step offers the entries of the files it renders to
the highlighter (``offered``), which takes one only for a text of the same info, size and
digest, and otherwise parses as it always does: both ways tokenize the same bytes with the same
grammar and query (``highlight.tree_tokens``), so the page is the same.
"""
from __future__ import annotations

import hashlib
import sys
from array import array
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from kwdocs.extract import treesitter
from kwdocs.languages import built_in_highlights
from kwdocs.site import highlight
from kwdocs.store import writer as output

FENCES = frozenset(fence for fence, found in built_in_highlights().items() if found.extraction_tree)
"""The fence infos of the files extraction parses with tree-sitter and the highlighter parses the
same way (their ``Highlight.extraction_tree``; Python, parsed with tree-sitter only when ``ast``
fails, has a lexer of its own): tokens are kept of these alone."""


class Entry(NamedTuple):
    """One file's tokens: the highlighter's info string, the size and digest of the UTF-8 text
    tokenized, and the ranges (``pack``)."""

    info: str
    size: int
    digest: bytes
    packed: bytes


def text_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


# ---------------------------------------------------------------- packing

_SWAP = sys.byteorder != "little"     # the shard holds little-endian numbers
_NAMES = tuple(name.encode() for name in sorted(highlight._RANK, key=highlight._RANK.__getitem__))
_CODES = {name: code for code, name in enumerate(_NAMES)}     # a class by its rank


def pack(tokens: highlight.Tokens) -> bytes:
    """The ranges as bytes: a count, every start and end, then a class code per range."""
    starts, ends, classes = zip(*tokens) if tokens else ((), (), ())
    flat = [len(tokens)] * (2 * len(tokens) + 1)      # the count, then start and end by turns
    flat[1::2], flat[2::2] = starts, ends
    bounds = array("I", flat)
    if _SWAP:
        bounds.byteswap()
    return bounds.tobytes() + bytes(map(_CODES.__getitem__, classes))


def unpack(packed: bytes) -> highlight.Tokens | None:
    """``pack``'s ranges again; None when the bytes cannot be them."""
    count = int.from_bytes(packed[:4], "little")
    if len(packed) != 4 + 9 * count:
        return None
    bounds = array("I")
    bounds.frombytes(packed[4:4 + 8 * count])
    if _SWAP:
        bounds.byteswap()
    try:
        classes = [_NAMES[code] for code in packed[4 + 8 * count:]]
    except IndexError:
        return None
    return list(zip(bounds[::2], bounds[1::2], classes))


# ---------------------------------------------------------------- recording, in extraction

class Recorder:
    """The tokens of the files extracted while ``recording``: ``path`` names the file being
    extracted (its extraction's caller sets it), ``entries`` holds them by path."""

    def __init__(self, max_bytes: int) -> None:
        self.path = ""
        self.max_bytes = max_bytes
        self.entries: dict[str, Entry] = {}

    def record(self, text: str, root: Any, source: bytes, module: str, function: str, prepared: bool) -> None:
        """Keep the tokens of ``text`` from the tree ``root`` an extractor parsed from ``source`` (see
        ``treesitter.tree_parsed``), when the highlighter would parse the same with the same grammar."""
        info = highlight.grammar_info(module, function, prepared)
        if not self.path or info not in FENCES:
            return
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > self.max_bytes:      # its page shows it cut: other text, parsed when rendered
            return
        tokens = highlight.tree_tokens(info, root, text, data, source)
        if tokens is not None:
            self.entries[self.path] = Entry(info, len(data), text_digest(data), pack(tokens))


@contextmanager
def recording(max_bytes: int) -> Iterator[Recorder]:
    """Record the highlight tokens of every tree extractors parse inside, of texts up to
    ``max_bytes`` (the largest a page shows whole)."""
    recorder = Recorder(max_bytes)
    outer, treesitter.tree_parsed = treesitter.tree_parsed, recorder.record
    try:
        yield recorder
    finally:
        treesitter.tree_parsed = outer


# ---------------------------------------------------------------- the shard

def write(root: Path, path: Path, unit: str, key: str, entries: Mapping[str, Entry]) -> bool:
    """Write a unit's tokens shard: a JSON line (unit, key, per file its info, size, digest and
    where its ranges are), then the ranges; sealed.  True if written."""
    files: dict[str, list] = {}
    blobs: list[bytes] = []
    offset = 0
    for rel in sorted(entries):
        entry = entries[rel]
        files[rel] = [entry.info, entry.size, entry.digest.hex(), offset, len(entry.packed)]
        blobs.append(entry.packed)
        offset += len(entry.packed)
    head = orjson.dumps({"unit": unit, "key": key, "files": files}, option=orjson.OPT_SORT_KEYS)
    return output.write_sealed(root, path, head + b"\n" + b"".join(blobs))


def read(path: Path, unit: str, key: str, wanted: set[str] | None = None) -> dict[str, Entry]:
    """The entries of a unit's tokens shard (``wanted``: of those files only); none when it is
    missing, damaged, of another unit or made by other code."""
    body = output.read_sealed(path)
    if body is None:
        return {}
    head, _, blob = body.partition(b"\n")
    try:
        meta = orjson.loads(head)
        if meta.get("unit") != unit or meta.get("key") != key:
            return {}
        found = {}
        for rel, (info, size, digest, offset, length) in meta["files"].items():
            if wanted is None or rel in wanted:
                found[rel] = Entry(info, size, bytes.fromhex(digest), blob[offset:offset + length])
        return found
    except (ValueError, TypeError, AttributeError, KeyError):     # sealed, so never: but never trusted either
        return {}


# ---------------------------------------------------------------- offering, in rendering

@contextmanager
def offered(entries: Mapping[str, Entry]) -> Iterator[None]:
    """Let the highlighter take these entries' tokens while rendering inside, each for a text of
    exactly its info, size and digest (the digest is made only for a text of an offered size)."""
    by_size: dict[tuple[str, int], list[Entry]] = {}
    for entry in entries.values():
        by_size.setdefault((entry.info, entry.size), []).append(entry)

    def known(info: str, data: bytes) -> highlight.Tokens | None:
        candidates = by_size.get((info, len(data)))
        if candidates:
            digest = text_digest(data)
            for entry in candidates:
                if entry.digest == digest:
                    return unpack(entry.packed)
        return None

    outer = highlight.keep_tokens(known if by_size else None)
    try:
        yield
    finally:
        highlight.keep_tokens(outer)

"""Reading source files: regular files only, their beginning with the size, hash and lines of the
whole, and as much of a file as its page shows, of the very content its facts describe."""
from __future__ import annotations

import hashlib
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from kwdocs.config import Config
from kwdocs.extract.decode import BINARY_SNIFF, is_binary
from kwdocs.facts import Facts


def source_bytes_shown(config: Config) -> int:
    """How much of a file its page needs: the configured size, a few bytes more (to cut at a
    whole character), and at least what tells a binary file."""
    return max(config.max_source_bytes + 4, BINARY_SNIFF)


def source_path(config: Config, rel: str) -> str:
    """A source file's path as text, as doit names a task's files: a ``Path`` per file and
    step cost more than what is done with it."""
    return os.path.join(config.src, rel)


class Source(NamedTuple):
    """What ``read_head`` read of a file: its beginning, and its size, hash and lines as a whole."""

    head: bytes
    size: int
    sha256: str
    lines: int


READ_CHUNK = 1 << 20


def _open_regular(path: Path | str) -> int:
    """A descriptor of a regular file, never blocking on a FIFO swapped in after the scan."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, "not a regular file any more")
    return fd


def read_source(path: Path | str, limit: int | None = None) -> bytes:
    """A regular file's bytes, or its first ``limit`` bytes: a page shows no more."""
    fd = _open_regular(path)
    try:
        if limit is None:
            chunks = []
            while chunk := os.read(fd, READ_CHUNK):
                chunks.append(chunk)
            return b"".join(chunks)
        head = bytearray()
        while len(head) < limit and (chunk := os.read(fd, min(READ_CHUNK, limit - len(head)))):
            head += chunk
        return bytes(head)
    finally:
        os.close(fd)


def read_head(path: Path | str, limit: int, hashed: bool = True) -> Source:
    """A regular file's first ``limit`` bytes, and its size, SHA-256 and line count as a whole:
    the rest is read in chunks and dropped, so a file of any size costs ``limit`` bytes.
    ``hashed=False``: no hash ("") of a file that fits in ``limit`` (whoever reads it hashes it)."""
    fd = _open_regular(path)
    try:
        hasher = hashlib.sha256() if hashed else None
        head = bytearray()
        size = newlines = 0
        last = b""
        text = True     # lines are counted in text only (a binary file has none)
        while chunk := os.read(fd, READ_CHUNK if len(head) >= limit else min(READ_CHUNK, limit - len(head))):
            if len(head) < limit:
                head += chunk
                text = len(head) < limit or not is_binary(head)
                if hasher is not None:
                    hasher.update(chunk)
            else:
                if hasher is None:      # larger than the limit: its hash can only be made here
                    hasher = hashlib.sha256(head)
                hasher.update(chunk)
            size += len(chunk)
            newlines += chunk.count(b"\n") if text else 0
            last = chunk[-1:]
        digest = hasher.hexdigest() if hasher is not None else ""
        return Source(bytes(head), size, digest, newlines + (0 if last in (b"", b"\n") else 1))
    finally:
        os.close(fd)


def file_hashes(paths: list[str], threads: int = 4) -> dict[str, str | None]:
    """The SHA-256 of each regular file (None: unreadable, or not a regular file), read on a few
    threads: hashing and reading let go of the interpreter's lock."""
    def one(path: str) -> str | None:
        try:
            return read_head(path, 0).sha256
        except OSError:
            return None

    with ThreadPoolExecutor(threads) as pool:
        return dict(zip(paths, pool.map(one, paths, chunksize=64)))


class ChangedSinceExtracted(Exception):
    """A source that no longer holds the bytes its facts were made from (a checkout, a save
    between the extract and render steps): its pages wait for the build that extracts it again."""


def page_source(config: Config, facts: Facts, limit: int | None = None) -> bytes | None:
    """As much of a file as its page shows (or its first ``limit`` bytes), of the very content its
    facts describe; None for a binary or unreadable one.  Raises ``ChangedSinceExtracted`` when the file now holds other
    bytes or is gone: a page rendered from them beside those facts would be recorded as the
    page of the facts' content, and stay when the file goes back to it (issue 31)."""
    if not facts.get("sha256") or facts.get("binary"):
        return None
    try:    # the whole file, hashed: the facts' hash is of the whole file
        source = read_head(source_path(config, facts["path"]),
                           source_bytes_shown(config) if limit is None else limit)
    except PermissionError:
        return None     # readable when extracted: its page says it is unreadable, as before
    except OSError as error:
        raise ChangedSinceExtracted(facts["path"]) from error
    if source.sha256 != facts["sha256"]:
        raise ChangedSinceExtracted(facts["path"])
    return source.head

"""Turn a file's bytes into text, or say why it is not text.

Git's rule decides binary (a NUL byte in the first 8,000 bytes).  Text is UTF-8
when it can be; otherwise a BOM, a Python coding line, then Latin-1 (which
never fails) decide, and the caller is told which was used so the page and the
problem line can say so.
"""
from __future__ import annotations

import codecs
import re

BINARY_SNIFF = 8000
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def bom_encoding(data: bytes | bytearray) -> str | None:
    """The encoding announced by a byte-order mark, if any."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def is_binary(data: bytes | bytearray) -> bool:
    """Git's heuristic; UTF-16/32 text with a BOM is text despite its NULs."""
    return b"\0" in data[:BINARY_SNIFF] and bom_encoding(data) not in ("utf-16", "utf-32")


def coding_line(data: bytes) -> str | None:
    """PEP 263 coding declaration in the first two lines."""
    for line in data.split(b"\n", 2)[:2]:
        match = _CODING.match(line)
        if match:
            name = match.group(1).decode("ascii", "replace")
            try:
                return codecs.lookup(name).name
            except LookupError:
                return None
    return None


def decode(data: bytes) -> tuple[str, str]:
    """Return ``(text, encoding)``; never raises.

    Line endings are normalised to ``\\n`` so that line numbers agree with
    what editors show for CRLF and lone-CR files.
    """
    candidates = [bom_encoding(data), "utf-8", coding_line(data)]
    for encoding in candidates:
        if not encoding:
            continue
        try:
            text = data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
        return normalise_newlines(text), "utf-8" if encoding == "utf-8-sig" else encoding
    return normalise_newlines(data.decode("latin-1")), "latin-1"


def normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text

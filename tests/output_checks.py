"""What a user checks in an output folder, shared by the robustness tests.

- ``pages``: every file kwdocs wrote (its state folder aside), with its bytes;
- ``temporaries``: half-finished writes (``.kwdocs-*.tmp``) anywhere in it;
- ``broken_links``: links that go nowhere, read as a CommonMark renderer reads
  them (a file name full of ``[]()`` or backticks must still link right);
- ``tree_state``: a folder's entries without opening any special file, to
  prove a build wrote nothing outside its output folder;
- ``keyword_search``: the site's keyword search data, every shard its list names, as the
  site's script reads it.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

from kwdocs.config import STATE_FOLDER
from kwdocs.store.writer import TEMP_PREFIX, TEMP_SUFFIX

_MARKDOWN = MarkdownIt("commonmark").enable("table")


def pages(out: Path) -> dict[str, bytes]:
    """Output-relative path -> content of every file outside the state folder (temporaries aside)."""
    found = {}
    for folder, folders, names in os.walk(out):
        folders[:] = [name for name in folders if name != STATE_FOLDER]
        for name in names:
            if not is_temporary(name):
                path = Path(folder, name)
                found[path.relative_to(out).as_posix()] = path.read_bytes()
    return found


def is_temporary(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def temporaries(out: Path) -> list[str]:
    return sorted(str(Path(folder, name).relative_to(out)) for folder, _, names in os.walk(out)
                  for name in names if is_temporary(name))


def _hrefs(tokens) -> list[str]:
    found = []
    for token in tokens:
        if token.type == "link_open":
            found.append(token.attrGet("href"))
        if token.children:
            found += _hrefs(token.children)
    return found


def broken_links(out: Path) -> list[str]:
    """Every relative link of every Markdown page whose file, or anchor in it, does not exist."""
    broken = []
    anchors: dict[Path, str] = {}
    for rel, data in sorted(pages(out).items()):
        if not rel.endswith(".md"):
            continue
        page = out / rel
        for href in _hrefs(_MARKDOWN.parse(data.decode("utf-8"))):
            parts = urlsplit(href)
            if parts.scheme or parts.netloc:
                continue
            target = (page.parent / unquote(parts.path)) if parts.path else page
            if not os.path.lexists(target):
                broken.append(f"{rel}: {href} (no such file)")
            elif lines := re.fullmatch(r"L(\d+)(?:-L(\d+))?", parts.fragment):
                # a definition's lines in the source, as GitHub and GitLab number them
                count = len(target.read_bytes().splitlines())
                if not 1 <= int(lines[1]) <= int(lines[2] or lines[1]) <= count:
                    broken.append(f"{rel}: {href} (no such lines)")
            elif parts.fragment:
                if target not in anchors:
                    anchors[target] = target.read_text(encoding="utf-8", errors="replace")
                if f'<a id="{unquote(parts.fragment)}"></a>' not in anchors[target]:
                    broken.append(f"{rel}: {href} (no such anchor)")
    return broken


def tree_state(folder: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every entry below ``folder``: kind, mode, size, mtime and, for readable regular files, a hash.

    Never follows links and never opens anything but regular files.
    """
    state = {}
    for base, folders, names in os.walk(folder):
        if skip is not None:
            folders[:] = [name for name in folders if Path(base, name) != skip]
        for name in folders + names:
            path = Path(base, name)
            info = path.lstat()
            entry: tuple = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns)
            if stat.S_ISREG(info.st_mode) and os.access(path, os.R_OK):
                entry += (hashlib.sha256(path.read_bytes()).hexdigest(),)
            elif stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            state[path.relative_to(folder).as_posix()] = entry
    return state


def _assigned(path: Path) -> object:
    """The data a site script assigns (``window.X = ...;`` or ``(...)["shard"] = ...;``)."""
    text = path.read_text("ascii")      # the data scripts are ASCII-only
    start = text.index("] = ") + 4 if text.startswith("(") else text.index(" = ") + 3
    return json.loads(text[start:].strip().removesuffix(";"))


def keyword_search(site: Path) -> list[tuple]:
    """Every keyword of the site's search as (name, kind, file, line, anchor, shown name),
    read from the shards ``_kwdocs/keywords/buckets.js`` lists, in the order they list them."""
    folder = site / "_kwdocs" / "keywords"
    rows = []
    for shard in _assigned(folder / "buckets.js"):
        for part in _assigned(folder / f"{shard}.js"):
            rows += [(row[0], part["kinds"][row[1]], part["files"][row[2]], row[3], row[4], row[5] or row[0])
                     for row in part["keywords"]]
    return rows


def fulltext_search(site: Path) -> set[tuple]:
    """Every word of the site's full-text search as (word, file, line, label), read from the
    buckets ``_kwdocs/fulltext/buckets.js`` lists."""
    folder = site / "_kwdocs" / "fulltext"
    found = set()
    for bucket in _assigned(folder / "buckets.js"):
        for part in _assigned(folder / f"{bucket}.js"):
            for word, indices in part["words"].items():
                for index in indices:
                    file, line, label = part["docs"][index]
                    found.add((word, part["files"][file], line, label))
    return found


def kwdocs_command(*args: str) -> list[str]:
    """The command line of a kwdocs run in its own process."""
    return [sys.executable, "-m", "kwdocs", *args]


def run_build(src: Path, out: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``kwdocs build`` in its own process, as a hook or CI runs it."""
    return subprocess.run(kwdocs_command("build", "--src", str(src), "--out", str(out), *args),
                          capture_output=True, text=True, timeout=timeout)

"""The no-op fast path: has anything that pages depend on changed since the last build?

A snapshot is a hash of every source file's path, size and modification time,
the settings, the templates and rule files in use, and kwdocs' own code.  When
it equals the one saved after the last successful build, doit would find every
task up to date (its check looks at modification times and sizes), so the
build can stop right after the scan without loading doit, the templates or the
rules.  Anything else goes through doit as usual.
"""
from __future__ import annotations

import array
import hashlib
import json
import os
import posixpath
import shutil
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kwdocs import __version__, layout
from kwdocs.config import Config, shipped_templates
from kwdocs.store import writer as output
from kwdocs.store.state import CODE as CODE_FILE, SCANNED as SCANNED_FILE, SNAPSHOT as SNAPSHOT_FILE

if TYPE_CHECKING:   # a type only: the scan sits above the store (it skips the output folders the store recognises)
    from kwdocs.scan import ScanResult


CODE_SUFFIXES = (".py", ".toml", ".txt")    # kwdocs' files that make pages: code, rules, word lists
CODE_RACY_NS = 2_000_000_000     # coarse file systems stamp to two seconds; an edit of kwdocs' code is rare
# kwdocs' code files' stamps and their contents' digest: as the state recorded them (read before
# the code is hashed), and as this process found them (recorded when a build succeeds)
_code_recorded: dict[str, Any] = {}
_code_found: dict[str, Any] = {}


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the code that makes the pages: kwdocs' own, released or not, the Python that
    runs it (``ast`` parses what its version knows) and the packages installed beside it (the
    parsers and grammars), by name and version.  State made by other code is never trusted."""
    digest = hashlib.sha256(__version__.encode())
    digest.update(f"{sys.implementation.name} {sys.version_info[:2]}".encode())
    for folder in sorted({path for path in sys.path if path.endswith("-packages")}):
        try:    # a listing, not a metadata lookup per package: this runs on every no-op build
            installed = sorted(name for name in os.listdir(folder) if name.endswith(".dist-info"))
            digest.update("\0".join(installed).encode())
        except OSError:
            pass
    digest.update(_code_digest().encode())
    return digest.hexdigest()


def _code_digest() -> str:
    """The digest of kwdocs' code files' paths and contents; the recorded one when every file's
    size and time stamp are as recorded (their contents were two thirds of an edit's fingerprint)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stamps: list[list[Any]] = []
    for folder, subfolders, names in os.walk(package):
        subfolders.sort()
        for name in sorted(names):
            if name.endswith(CODE_SUFFIXES):
                info = os.stat(os.path.join(folder, name))
                stamps.append([os.path.relpath(os.path.join(folder, name), package), info.st_size, info.st_mtime_ns])
    if _code_recorded.get("files") == stamps and isinstance(_code_recorded.get("digest"), str):
        found = _code_recorded["digest"]
    else:
        digest = hashlib.sha256()
        for rel, _, _ in stamps:
            with open(os.path.join(package, rel), "rb") as handle:
                digest.update(rel.encode() + b"\0" + handle.read())
        found = digest.hexdigest()
    # a file written within the clock's reach of now could change again with the same stamp: such
    # stamps vouch for nothing, and the next build hashes the contents again
    recent = time.time_ns() - CODE_RACY_NS
    _code_found.update(files=stamps if all(mtime < recent for _, _, mtime in stamps) else None, digest=found)
    return found


def _stats(folder: Path | None) -> list:
    if folder is None or not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            info = path.stat()
            found.append([path.relative_to(folder).as_posix(), info.st_size, info.st_mtime_ns])
    return found


def _package_folders(config: Config) -> list:
    """The import path with each folder's time stamp: installing or removing a package (a
    language among them, see ``kwdocs.languages``) changes one, so the next build looks again,
    without reading any package's metadata here.  The first entry (the script's folder), the
    working folder and the tree are left out: ``python -m`` and doit put those on the path,
    and any file made there (doit's own records) changes their stamps."""
    found = []
    theirs = {os.path.abspath(config.src)}
    try:
        theirs.add(os.getcwd())
    except OSError:     # a working folder removed since: none to leave out
        pass
    for folder in sys.path[1:]:
        try:
            if folder and os.path.abspath(folder) not in theirs:
                found.append([folder, os.stat(folder).st_mtime_ns])
        except OSError:
            pass
    return found


def settings_digest(config: Config) -> str:
    """What every page depends on besides the sources: code, settings, templates, rule files."""
    rules = [[str(path), *(lambda info: (info.st_size, info.st_mtime_ns))(os.stat(path))] for path in config.rules]
    if not _code_recorded:     # before the code is hashed, once a process
        _code_recorded.update(output.read_json(config.state / CODE_FILE, {}) or {"files": None})
    return hashlib.sha256(json.dumps([code_fingerprint(), config.fingerprint_data(), sorted(config.formats),
                                      _stats(config.templates), _stats(shipped_templates()), rules,
                                      _package_folders(config)],
                                     sort_keys=True, default=str).encode()).hexdigest()


def files_digest(scanned: ScanResult) -> str:
    """The hash of the scan's file list, paths, sizes and times; kept on the scan once made (a
    scan that reuses the last one's list unchanged brings the digest saved with it)."""
    if scanned.digest is not None:
        return scanned.digest
    digest = hashlib.sha256()
    # the count, the paths as one text, each ended by a line break (no name holds one: the scan
    # skips those), then sizes and times as machine integers, not a line formatted per file
    rels, sizes, mtimes = zip(*scanned.files) if scanned.files else ((), (), ())
    paths = "\n".join(rels)
    digest.update(f"{len(rels)}\n{paths}\n".encode("utf-8", "surrogateescape"))
    try:
        digest.update(array.array("q", sizes).tobytes() + array.array("q", mtimes).tobytes())
    except OverflowError:   # a time stamp past 2262: as text
        digest.update(repr((sizes, mtimes)).encode())
    scanned.digest = digest.hexdigest()
    return scanned.digest


def tree_snapshot(config: Config, scanned: ScanResult) -> str:
    """The hash that must match for a build to be a no-op."""
    return hashlib.sha256(json.dumps([files_digest(scanned), settings_digest(config), sorted(scanned.problems)],
                                     default=str).encode()).hexdigest()


def outputs_digest(config: Config, scanned: ScanResult) -> str:
    """The modification times of the folders the Markdown pages are in, and the site's with
    ``html``: a page deleted, or a file added there, by hand changes its folder's."""
    digest = hashlib.sha256()
    folders = {posixpath.dirname(layout.index_page(folder)) for folder in scanned.folders()}
    if config.html:     # as kwdocs.site.html places its pages
        folders |= {posixpath.join("site", folder) for folder in folders}
    out = os.fspath(config.out)     # paths as text: a Path per folder was a third of a no-op's checks
    for folder in sorted(folders):
        try:
            stamp = os.stat(f"{out}/{folder}" if folder else out).st_mtime_ns
        except OSError:
            stamp = -1
        digest.update(f"{folder}\0{stamp}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def outputs_unchanged(config: Config, scanned: ScanResult) -> bool:
    """Whether the pages' folders are as the last successful build left them."""
    vouched = output.read_json(config.state / SNAPSHOT_FILE, {}) or {}
    return isinstance(vouched, dict) and vouched.get("outputs") == outputs_digest(config, scanned)


def previous(config: Config) -> dict:
    """What the last successful build saved: its snapshot, settings digest, files and scan
    problems; empty unless the file list is the one the snapshot vouches for."""
    vouched = output.read_json(config.state / SNAPSHOT_FILE, {}) or {}
    scanned = output.read_json(config.state / SCANNED_FILE, {}) or {}
    if not isinstance(vouched, dict) or not isinstance(scanned, dict) or not vouched.get("snapshot") \
            or scanned.get("snapshot") != vouched["snapshot"]:
        return {}
    return dict(scanned, settings=vouched.get("settings"))


def last_scan(config: Config) -> dict | None:
    """What the last successful build saved (``previous``) when it was made under the same
    settings, which include the scan's globs and kwdocs' code: ``scan`` takes its file list
    again while it holds, and a build after a few edits finds what changed from it."""
    last = previous(config)
    return last if last.get("files") and last.get("settings") == settings_digest(config) else None


def unchanged(config: Config, snapshot: str) -> bool:
    vouched = output.read_json(config.state / SNAPSHOT_FILE, {}) or {}
    return isinstance(vouched, dict) and vouched.get("snapshot") == snapshot


def save(config: Config, snapshot: str, scanned: ScanResult) -> None:
    """Vouch for the output.  The file list (written first, large for a large tree) lets the next
    build take its scan again and find what changed without doit (``last_scan``)."""
    save_scan(config, snapshot, scanned)
    if _code_found:     # written when it changed: a build that changed no code file writes nothing
        output.write_json(config.out, config.state / CODE_FILE, _code_found)
    output.write_json(config.out, config.state / SNAPSHOT_FILE,
                      {"snapshot": snapshot, "settings": settings_digest(config),
                       "outputs": outputs_digest(config, scanned)})


def save_scan(config: Config, snapshot: str, scanned: ScanResult) -> None:
    """The scan the snapshot ``snapshot`` is of, with what it was made from (its stamps).  Also
    written by a build with nothing to do whose walk made stamps the saved scan lacked, so that
    the next takes it again."""
    output.write_json(config.out, config.state / SCANNED_FILE, {
        "snapshot": snapshot,
        "files": [[source.rel, source.size, source.mtime_ns] for source in scanned.files],
        "problems": [list(problem) for problem in scanned.problems],
        "digest": files_digest(scanned), "stamps": scanned.stamps})


def forget(config: Config) -> None:
    """Before a build starts: until it succeeds, no snapshot vouches for the output."""
    path = config.state / SNAPSHOT_FILE
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        shutil.rmtree(path)

"""The symbol index's file and its queries, for ``kwdocs find``, ``refs`` and ``show``.

The index is one SQLite file in the state folder: every definition, every place
one is used, and each file's stamp and purpose sentence.  The first query makes it
and every build after keeps it current (``kwdocs.engine.symbol_index``).  It holds the state's record of the
build that made it (``snapshot.json``, byte for byte): an answer says it is stale
when that record changed since, or when a source it names did (a stat of each).
A missing or damaged index is one line, ``NoIndex``.

A query's time is Python's start and its imports, so this module needs nothing
but ``sqlite3`` and ``os``: a query's process imports no parser, template or doit
(but the first, which makes the index with the build's code).
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from kwdocs.mistakes import UserMistake

# The names of the state files this module reads (kwdocs.store.state names them too; it is not
# imported here, nor anything else of the build: see the module docstring).
INDEX = "symbols.sqlite3"
SNAPSHOT = "snapshot.json"

FORMAT = "kwdocs symbols 3"

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE units (unit TEXT PRIMARY KEY, made_from TEXT NOT NULL);
CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, unit TEXT NOT NULL, size INTEGER,
                    mtime_ns INTEGER, language TEXT, lines INTEGER, test INTEGER, purpose TEXT);
CREATE TABLE defs (name TEXT NOT NULL, qualified TEXT NOT NULL, kind TEXT, file INTEGER NOT NULL,
                   line INTEGER, signature TEXT, summary TEXT, doc TEXT);
CREATE TABLE refs (name TEXT NOT NULL, path TEXT NOT NULL, line INTEGER, defined_in TEXT NOT NULL,
                   unit TEXT NOT NULL);
CREATE TABLE more_refs (name TEXT NOT NULL, defined_in TEXT NOT NULL, more INTEGER, unit TEXT NOT NULL);
CREATE TABLE users (name TEXT NOT NULL, defined_in TEXT NOT NULL, files INTEGER, unit TEXT NOT NULL);
CREATE INDEX defs_name ON defs (name);
CREATE INDEX defs_qualified ON defs (qualified);
CREATE INDEX defs_file ON defs (file, line);
CREATE INDEX refs_name ON refs (name);
CREATE INDEX refs_unit ON refs (unit);
CREATE INDEX more_name ON more_refs (name);
CREATE INDEX more_unit ON more_refs (unit);
CREATE INDEX files_unit ON files (unit);
CREATE INDEX users_name ON users (name);
CREATE INDEX users_unit ON users (unit);
"""


class NoIndex(UserMistake):
    """The index is missing, damaged or of another version: its one line for the user."""


class OtherSources(UserMistake):
    """A query's source folder is not the one the index was built from: its one line."""


def index_path(state: Path) -> Path:
    return state / INDEX


# ---------------------------------------------------------------- reading (the queries)

class Index:
    """The index of one output folder, read-only, with what says whether its answers are current."""

    def __init__(self, state: Path) -> None:
        self.state = state
        path = index_path(state)
        if not os.path.isfile(path):
            raise NoIndex(f"kwdocs: no index in {state}: run kwdocs build")
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = dict(self.db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError:
            self.db.close()
            raise NoIndex(f"kwdocs: the index {path} is damaged: run kwdocs build") from None
        if meta.get("format") != FORMAT:
            self.db.close()
            raise NoIndex(f"kwdocs: the index {path} is of another version of kwdocs: run kwdocs build")
        self.vouched = meta.get("vouched")
        self.src = meta.get("src")     # the source folder the build read; None in an index made before it was kept

    def close(self) -> None:
        self.db.close()

    def rows(self, query: str, arguments: Iterable = ()) -> list[tuple]:
        try:
            return self.db.execute(query, tuple(arguments)).fetchall()
        except sqlite3.DatabaseError:
            raise NoIndex(f"kwdocs: the index {index_path(self.state)} is damaged: run kwdocs build") from None

    def built(self) -> bool:
        """Whether the last build that vouched for the state is the one the index was made by
        (a build that failed or ran since without finishing leaves the state unvouched)."""
        try:
            with open(self.state / SNAPSHOT, "rb") as handle:
                return handle.read().hex() == self.vouched
        except OSError:
            return False

    def check_sources(self, src: Path, paths: Iterable[str]) -> None:
        """Raise ``OtherSources`` when ``src`` is not the folder the build read and holds none of
        ``paths`` (a query run elsewhere without ``--src``): a stat would call each one changed.
        A checkout moved whole still holds them, and is answered as before."""
        if self.src is not None and self.src != str(src) and not any(
                os.path.lexists(src / path) for path in sorted(set(paths))):
            raise OtherSources(f"kwdocs: {self.state.parent} was built from {self.src}, not from {src}: "
                               f"pass --src {self.src}")

    def changed(self, paths: Iterable[str], src: Path) -> list[str]:
        """Those of ``paths`` (sources) whose size or time stamp is not the build's, or that are gone:
        their pages, and the index's answers about them, are stale."""
        wanted = sorted(set(paths))
        stale = []
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            recorded = dict((path, (size, mtime)) for path, size, mtime in self.rows(
                f"SELECT path, size, mtime_ns FROM files WHERE path IN ({','.join('?' * len(part))})", part))
            for path in part:
                try:
                    info = os.stat(src / path)
                    now: tuple[int, int] | None = (info.st_size, info.st_mtime_ns)
                except OSError:
                    now = None
                if now is None or recorded.get(path) != now:
                    stale.append(path)
        return stale

    def tests(self, paths: Iterable[str]) -> set[str]:
        wanted = sorted(set(paths))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            found.update(path for (path,) in self.rows(
                f"SELECT path FROM files WHERE test = 1 AND path IN ({','.join('?' * len(part))})", part))
        return found


# a definition's file by number: its path once in ``files``, not in each of 200,000 rows
DEF_COLUMNS = "files.path, defs.line, kind, name, qualified, signature, summary"
DEFS = "defs JOIN files ON files.id = defs.file"
DEF_FIELDS = ("path", "line", "kind", "name", "qualified", "signature", "summary")
ORDER = " ORDER BY files.path, defs.line, qualified, kind"


def _match(name: str, prefix: bool) -> tuple[str, list[str]]:
    """The WHERE clause for a name: ``Class.member`` matches qualified names, anything else a
    definition's own name; a prefix is an index range (LIKE would scan, and ignore case)."""
    column = "qualified" if "." in name else "name"
    if prefix:
        return f"{column} >= ? AND {column} < ?", [name, name + "\U0010ffff"]
    return f"{column} = ?", [name]


def find(index: Index, name: str, prefix: bool) -> list[dict]:
    """The definitions of ``name``, in path and line order."""
    where, arguments = _match(name, prefix)
    return [dict(zip(DEF_FIELDS, row))
            for row in index.rows(f"SELECT {DEF_COLUMNS} FROM {DEFS} WHERE {where}{ORDER}", arguments)]


def refs(index: Index, name: str, prefix: bool) -> tuple[list[dict], int, list[dict]]:
    """Where the definitions named ``name`` are imported, each with whether the importer is a
    test; how many more imports the build counted without listing them; and per definition,
    how many files use it in all (calls through its module too, which have no line)."""
    # uses are known of top-level names only (what other files import): matched by name alone
    where, arguments = ("name >= ? AND name < ?", [name, name + "\U0010ffff"]) if prefix else ("name = ?", [name])
    found = [dict(zip(("path", "line", "name", "defined_in"), row)) for row in index.rows(
        f"SELECT DISTINCT path, line, name, defined_in FROM refs WHERE {where} ORDER BY path, line, name, defined_in",
        arguments)]
    tests = index.tests(ref["path"] for ref in found)
    for ref in found:
        ref["test"] = ref["path"] in tests
    more = index.rows(f"SELECT COALESCE(SUM(more), 0) FROM more_refs WHERE {where}", arguments)[0][0]
    users = [dict(zip(("name", "defined_in", "files"), row)) for row in index.rows(
        f"SELECT name, defined_in, files FROM users WHERE {where} ORDER BY name, defined_in", arguments)]
    return found, more, users


def indexed_file(index: Index, path: str) -> dict | None:
    """A file's language, lines, purpose sentence and definitions; None if the index has no such file."""
    rows = index.rows("SELECT path, language, lines, test, purpose FROM files WHERE path = ?", [path])
    if not rows:
        return None
    summary = dict(zip(("path", "language", "lines", "test", "purpose"), rows[0]))
    summary["test"] = bool(summary["test"])
    summary["definitions"] = [dict(zip(DEF_FIELDS, row)) for row in index.rows(
        f"SELECT {DEF_COLUMNS} FROM {DEFS} WHERE files.path = ?{ORDER}", [path])]
    return summary


def definition_at(index: Index, path: str, line: int) -> dict | None:
    """The definition starting at ``line`` of ``path``, else the last one starting before it, with
    its whole documentation; None when none starts at or before it."""
    rows = index.rows(f"SELECT {DEF_COLUMNS}, doc FROM {DEFS} WHERE files.path = ? AND defs.line <= ? "
                      "ORDER BY defs.line DESC, qualified DESC, kind DESC LIMIT 1", [path, line])
    return dict(zip((*DEF_FIELDS, "doc"), rows[0])) if rows else None


def known_file(index: Index, path: str) -> bool:
    return bool(index.rows("SELECT 1 FROM files WHERE path = ?", [path]))

"""Writing the symbol index (``kwdocs.store.symbols``) from the state a build vouched for.

The first query makes it (``make_for_query``) from the facts and link shards of the
last successful build; every build after keeps it current (``keep``), so a tree nobody
queries never pays for its rows.  A unit's rows are made again only when its shards'
or files' stamps changed since (``units.made_from``), so an edit costs the rows of its
unit.  An index that is damaged or of another format is made again whole.
"""
from __future__ import annotations

import collections
import functools
import hashlib
import os
import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, NamedTuple

from kwdocs.config import Config
from kwdocs.scan import ScanResult, SourceFile
from kwdocs.store import snapshot as snapshots, state, writer as output
from kwdocs.store.lock import locked
from kwdocs.store.symbols import FORMAT, INDEX as INDEX_NAME, SCHEMA, Index, NoIndex, index_path

LARGE_TREE = 2000     # files: a tree with more gets the index's pages SQLite makes by default
NOT_DEFINITIONS = ("import", "include", "identifier")   # kinds that name what is defined elsewhere
# the schema's tables (with the index of files by unit, which adding a unit reads), and its other
# indexes, made once a new index's rows are in
_LATER = [line for line in SCHEMA.splitlines() if line.startswith("CREATE INDEX") and " ON files " not in line]
TABLES = "\n".join(line for line in SCHEMA.splitlines() if line not in _LATER)
INDEXES = [line.rstrip(";") for line in _LATER]


def update(config: Config, snapshot: str, scanned: ScanResult) -> int:
    """Bring the index up to date with the state a successful build just vouched for
    (``snapshot``, of the ``scanned`` tree); the units whose rows were made again."""
    if output.dry_running():
        return 0     # ``kwdocs check`` runs the build's steps writing nothing: nor this
    units = _units(scanned)
    path = index_path(config.state)
    vouched = output.read_state(config.state / state.SNAPSHOT)
    verified = config.state / state.SYMBOLS_VERIFIED
    connection, fresh = _writable(path, output.read_json(verified) == _stamp(path), len(scanned.files))
    try:
        made = _update_units(connection, config, units)
        if fresh is not None:   # indexed once filled: SQLite builds an index faster than it keeps one up to date
            for statement in INDEXES:   # in the update's transaction (executescript would commit first)
                connection.execute(statement)
        # the state's record of the build that vouched for it, byte for byte: what readers compare
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('vouched', ?)", ((vouched or b"").hex(),))
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (snapshot,))
        # the folder whose files' stamps the rows hold: a query's sources are checked against it
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('src', ?)", (str(config.src),))
        connection.commit()
        connection.close()
        if fresh is not None:
            _unlink(f"{path}-journal")  # a journal left beside the name would be played into the new file
            os.replace(fresh, path)
    except BaseException:
        connection.close()
        if fresh is not None:
            _unlink(fresh)
        raise
    output.write_json(config.out, verified, _stamp(path))
    return made


def keep(config: Config, snapshot: str, scanned: ScanResult) -> int:
    """A successful build's end: the index (a query made it) brought up to date; units remade."""
    return update(config, snapshot, scanned) if os.path.lexists(index_path(config.state)) else 0


def make_for_query(config: Config) -> bool:
    """For a query finding no usable index: one made from the state the last successful build
    vouched for, under the output's lock (no build changes the shards while they are read).
    False when no build vouches for the state: none ran, or the last one did not finish."""
    with locked(config.state):
        last = snapshots.previous(config)
        if not last:
            return False
        scanned = ScanResult([SourceFile(rel, size, mtime_ns) for rel, size, mtime_ns in last["files"]])
        update(config, last["snapshot"], scanned)
    return True


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _stamp(path: Path) -> list[int] | None:
    """The index file's inode, size and time stamp: the same as the last build left them, it is
    whole (as doit's records are judged, see ``state.check_doit_records``)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def ensure(config: Config, snapshot: str, scanned: ScanResult) -> None:
    """A build with nothing to do: an index made again if damaged or not of this state (``keep``)."""
    if not os.path.lexists(index_path(config.state)):
        return
    try:
        index = Index(config.state)
        try:
            if index.built():
                return
        finally:
            index.close()
    except NoIndex:
        pass
    update(config, snapshot, scanned)


def _units(scanned: ScanResult) -> dict[str, list[SourceFile]]:
    """The tree's units, as the build makes them, each with its files as scanned."""
    folders: dict[str, dict[str, SourceFile]] = {}
    for source in scanned.files:
        folder, _, name = source.rel.rpartition("/")
        folders.setdefault(folder, {})[name] = source
    found: dict[str, list[SourceFile]] = {}
    for folder, by_name in sorted(folders.items()):     # rows inserted in folder order, as before
        if len(by_name) <= state.UNIT_LIMIT:    # most folders are one unit: no split to make
            found[folder] = list(by_name.values())
            continue
        for unit, names in state.units_of(folder, list(by_name)).items():
            found[unit] = [by_name[name] for name in names]
    return found


def _writable(path: Path, as_left: bool, files: int) -> tuple[sqlite3.Connection, str | None]:
    """The index opened for writing, and, when it is made new, the temporary file it is made in
    (its tables made, not yet indexed), renamed over ``path`` once whole; made new when missing,
    damaged or of another format (``as_left``: the file is as the last build left it, so its
    pages are not checked again: SQLite's check of the corpus's index took 0.15 s of the 0.19 a
    build spent on it).  ``files``: how many files the tree has."""
    if os.path.exists(path):
        try:
            connection = sqlite3.connect(path)
            if (as_left or connection.execute("PRAGMA quick_check").fetchone() == ("ok",)) and connection.execute(
                    "SELECT value FROM meta WHERE key = 'format'").fetchone() == (FORMAT,):
                return connection, None
            connection.close()
        except sqlite3.DatabaseError:
            pass
    # a temporary name the sweep after a killed build removes (``output.sweep_temporaries``)
    fresh = os.path.join(os.path.dirname(path), f"{output.TEMP_PREFIX}{INDEX_NAME}-{os.getpid()}{output.TEMP_SUFFIX}")
    _unlink(fresh)
    connection = sqlite3.connect(fresh)
    # no rollback journal nor flush to disk: a file nobody reads until it is whole and renamed
    connection.execute("PRAGMA journal_mode = OFF")
    connection.execute("PRAGMA synchronous = OFF")
    # small pages for a small tree: a table or index takes one page at least, and a small tree's
    # index of twenty of them at 4 kB each was a fifth of its state; SQLite's default for a large
    # one, whose rows and indexes 4 kB pages make a quarter faster (bench/README.md)
    connection.execute(f"PRAGMA page_size = {4096 if files > LARGE_TREE else 1024}")
    connection.executescript(TABLES)
    connection.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
    return connection, fresh


def _update_units(connection: sqlite3.Connection, config: Config, units: dict[str, list[SourceFile]]) -> int:
    """The rows of every unit that is gone or changed dropped, then those of the changed ones
    made again (all dropped first: a folder split into more buckets moves files between them).
    A unit whose facts and files are as they were but whose links changed (an edit elsewhere
    moved a name it uses) gets only the rows of its uses that changed (``_relink_unit``)."""
    known = dict(connection.execute("SELECT unit, made_from FROM units"))
    changed: dict[str, str] = {}
    relinked: dict[str, tuple[str, list[str]]] = {}     # unit -> made_from, the kinds of its shards that changed
    for unit, files in units.items():
        # the shards' paths as text (a Path per unit and kind was a third of an edit's index update)
        made_from = ":".join((_digest([output.stamp(state.shard_path(config, state.FACTS, unit)), files]),
                              *(_digest(output.stamp(state.shard_path(config, kind, unit))) for kind in _LINK_KINDS)))
        before = known.get(unit)
        if before == made_from:
            continue
        was, now = (before or "").split(":"), made_from.split(":")
        if was[0] == now[0]:
            # an index of before the kinds had a part each (two parts) has both made again
            relinked[unit] = made_from, [kind for kind, old, new in zip(_LINK_KINDS, was[1:] + ["", ""], now[1:])
                                         if len(was) != len(now) or old != new]
        else:
            changed[unit] = made_from
    for unit in sorted((set(known) - set(units)) | (set(changed) & set(known))):
        _drop(connection, unit)
    # files numbered here, as SQLite would number them, rather than asked back unit by unit
    number = connection.execute("SELECT COALESCE(MAX(id), 0) FROM files").fetchone()[0]
    summaries: dict[str, str] = {"": ""}   # a documentation's sentence, once: overloads, stubs and copies repeat them
    for unit in changed:
        number = _add_unit(connection, config, unit, units[unit], number, summaries)
    connection.executemany("INSERT INTO units VALUES (?, ?)", changed.items())
    for unit, (_, kinds) in relinked.items():
        _relink_unit(connection, config, unit, units[unit], kinds)
    connection.executemany("UPDATE units SET made_from = ? WHERE unit = ?",
                           [(made_from, unit) for unit, (made_from, _) in relinked.items()])
    return len(changed) + len(relinked)


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


_USE_TABLES = ("refs", "more_refs", "users")    # the rows a unit's links make
_LINK_KINDS = (state.LINKS, state.IMPORTANCE)   # the shards they are made from: refs and more_refs, users
_ALL_TABLES = ("units", "files", *_USE_TABLES)


def _drop(connection: sqlite3.Connection, unit: str) -> None:
    connection.execute("DELETE FROM defs WHERE file IN (SELECT id FROM files WHERE unit = ?)", (unit,))
    for table in _ALL_TABLES:
        connection.execute(f"DELETE FROM {table} WHERE unit = ?", (unit,))


def _add_unit(connection: sqlite3.Connection, config: Config, unit: str, files: list[SourceFile], number: int,
              summaries: dict[str, str]) -> int:
    """A unit's rows from its facts and links shards (a file without facts gets its stamp only),
    its files numbered from after ``number``.  ``summaries``: the sentences of documentations met
    so far.  The last file number given."""
    # imported here: a no-op build imports this module to check the index, and needs no page code
    from kwdocs.pages.model import is_test, own_text, summary_sentence

    decoders = _decoders()
    facts_of = getattr(_decode_shard(config, state.FACTS, unit, decoders.facts), "files", {})
    links_of, counts_of = _link_parts(config, unit)
    file_rows: list[tuple] = []
    def_rows: list[tuple] = []
    uses = _Uses(unit)
    for source in files:
        facts = facts_of.get(source.rel) or decoders.no_facts
        purpose = summary_sentence(own_text(facts.docstring)) or next(iter(facts.findings.purpose), "")
        number += 1
        file_rows.append((number, source.rel, unit, source.size, source.mtime_ns, facts.language, facts.lines,
                          int(is_test({"findings": {"tags": facts.findings.tags}})), purpose))
        top: set[str] = set()
        for symbol in facts.symbols:
            kind = symbol.kind
            if kind in NOT_DEFINITIONS:
                continue
            name, parent = symbol.name, symbol.parent
            if not parent:
                top.add(name)
            doc = symbol.doc
            summary = summaries.get(doc)
            if summary is None:
                summary = summaries[doc] = summary_sentence(doc)
            def_rows.append((name, f"{parent}.{name}" if parent else name, kind, number, symbol.line,
                             symbol.signature, summary, doc))
        uses.add(source.rel, links_of.get(source.rel), counts_of.get(source.rel), top)
    # statements SQLite prepares once (the module keeps them by their text); none for no rows
    tables: list[tuple[str, list[tuple]]] = [(_INSERT_FILES, file_rows), (_INSERT_DEFS, def_rows),
                                             *zip(_INSERT_USES, uses.rows)]
    for statement, rows in tables:
        if rows:
            connection.executemany(statement, rows)
    return number


def _link_parts(config: Config, unit: str,
                kinds: Collection[str] = _LINK_KINDS) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the index reads of a unit's link and importance shards (of those of ``kinds``): each
    file's uses, and its counts of the files using each name.  Only those fields are decoded, and
    only from shards that hold some (most units' do not: those shards were two thirds of the
    bytes the index read)."""
    decoders = _decoders()
    links_of = getattr(_decode_shard(config, state.LINKS, unit, decoders.links, b'"uses":{"'), "files", {}) \
        if state.LINKS in kinds else {}
    counts_of = getattr(_decode_shard(config, state.IMPORTANCE, unit, decoders.importance, b'"names":{"'),
                        "files", {}) if state.IMPORTANCE in kinds else {}
    return links_of, counts_of


class _Uses:
    """The rows a unit's links make (``_USE_TABLES``'s, in ``rows``), added file by file."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.rows: tuple[list[tuple], list[tuple], list[tuple]] = ([], [], [])

    def add(self, rel: str, links: Any, counts: Any, top: set[str]) -> None:
        """``rel``'s rows from its decoded ``links`` and ``counts`` (None: it has none); ``top``: the
        names it defines at its top level, the only ones whose counts the index keeps."""
        refs, more, users = self.rows
        unit = self.unit
        for name, used in (links.uses if links is not None else {}).items():
            for user, line in used.at:
                refs.append((name, user, line, rel, unit))
            if used.more:
                more.append((name, rel, used.more, unit))
        # linking's count of the files that use each name: calls through a module have no line
        for name, files_using in sorted(getattr(counts, "names", {}).items()):
            if name in top:
                users.append((name, rel, files_using, unit))


def _relink_unit(connection: sqlite3.Connection, config: Config, unit: str, files: list[SourceFile],
                 kinds: list[str]) -> None:
    """The rows of a unit's uses made again from those of its link shards that changed (``kinds``),
    when its facts are as they were: only the rows that differ from those the index holds are
    deleted and inserted.  An edit that moves a file's definitions moves the anchors of every unit
    using them, whose uses are the same (remaking all of those units' rows was most of such an
    edit's index update)."""
    links_of, counts_of = _link_parts(config, unit, kinds)
    # the names a file defines at its top level, from its definitions' rows, which are as they were
    top: dict[str, set[str]] = {}
    if counts_of:
        for path, name in connection.execute(
                "SELECT files.path, defs.name FROM defs JOIN files ON defs.file = files.id "
                "WHERE files.unit = ? AND defs.qualified = defs.name", (unit,)):
            top.setdefault(path, set()).add(name)
    uses = _Uses(unit)
    for source in files:
        uses.add(source.rel, links_of.get(source.rel), counts_of.get(source.rel), top.get(source.rel, set()))
    for table, statement, rows in zip(_USE_TABLES, _INSERT_USES, uses.rows):
        if (state.IMPORTANCE if table == "users" else state.LINKS) not in kinds:
            continue
        wanted = collections.Counter(rows)
        gone = []
        for rowid, *row in connection.execute(f"SELECT rowid, * FROM {table} WHERE unit = ?", (unit,)):
            kept = tuple(row)
            if wanted[kept] > 0:
                wanted[kept] -= 1
            else:
                gone.append((rowid,))
        if gone:
            connection.executemany(f"DELETE FROM {table} WHERE rowid = ?", gone)
        added = []
        for row in rows:    # what is wanted and was not there, in the order a new index inserts it
            if wanted[row] > 0:
                wanted[row] -= 1
                added.append(row)
        if added:
            connection.executemany(statement, added)


def _decode_shard(config: Config, kind: str, unit: str, decode: Callable[[bytes], Any], holding: bytes = b"") -> Any:
    """A unit's shard read by ``decode``, a typed decoder that makes only the fields the index
    stores, ``unit`` among them; None if there is none, it is damaged, of another unit, or not of
    ``decode``'s types.  ``holding``: bytes the shard's JSON holds when it has what the index
    wants (``b'"uses":{"'``, a key whose value is not empty, as ``output.compact_json`` spells it):
    a shard without them is not decoded, and is None."""
    body = output.read_sealed(state.shard_path(config, kind, unit))
    if body is None or holding not in body:
        return None
    try:
        data = decode(body)
    except ValueError:      # msgspec's DecodeError and ValidationError are ones
        return None
    return data if data.unit == unit else None


class _Decoders(NamedTuple):
    facts: Callable[[bytes], Any]
    links: Callable[[bytes], Any]
    importance: Callable[[bytes], Any]
    no_facts: Any       # the facts of a file that has none


@functools.lru_cache(maxsize=1)
def _decoders() -> _Decoders:
    """Decoders of the shards the index reads that make only the fields it stores (most of a
    facts shard's bytes, and nearly all of a links shard's, are not), each with the default
    the index takes when a field is absent; a value of another type than ``Facts`` declares is
    kept as it is.  The facts are decoded 2.5 times as fast as by ``json`` (bench/README.md)."""
    # imported here: a no-op build imports this module, and decodes no shard
    import msgspec

    # made with defstruct: this module's annotations are text (``from __future__``), which
    # msgspec resolves in the module's names, where classes made in a function are not
    def struct(name: str, fields: list) -> Any:
        return msgspec.defstruct(name, fields)

    symbol = struct("Symbol", [("name", Any), ("kind", Any, ""), ("parent", Any, None), ("line", Any, 0),
                               ("signature", Any, ""), ("doc", Any, "")])
    findings = struct("Findings", [("purpose", Any, ()), ("tags", Any, ())])
    file_facts = struct("FileFacts", [("docstring", Any, ""), ("language", Any, ""), ("lines", Any, 0),
                                      ("findings", findings, msgspec.field(default_factory=findings)),
                                      ("symbols", list[symbol], [])])  # type: ignore[valid-type]
    use = struct("Use", [("at", list[tuple[Any, Any]], []), ("more", Any, 0)])
    file_links = struct("FileLinks", [("uses", dict[str, use], {})])  # type: ignore[valid-type]
    file_counts = struct("FileCounts", [("names", dict[str, Any], {})])

    def shard(name: str, files: Any) -> Callable[[bytes], Any]:
        return msgspec.json.Decoder(struct(name, [("files", dict[str, files], {}), ("unit", Any, None)])).decode

    return _Decoders(shard("Facts", file_facts), shard("Links", file_links), shard("Importance", file_counts),
                     file_facts())


_INSERT_FILES = ("INSERT INTO files (id, path, unit, size, mtime_ns, language, lines, test, purpose) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
_INSERT_DEFS = "INSERT INTO defs VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
# the rows of ``_USE_TABLES``, in their order
_INSERT_USES = ("INSERT INTO refs VALUES (?, ?, ?, ?, ?)", "INSERT INTO more_refs VALUES (?, ?, ?, ?)",
                "INSERT INTO users VALUES (?, ?, ?, ?)")

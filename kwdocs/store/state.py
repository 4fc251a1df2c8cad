"""kwdocs' own state under ``<out>/.kwdocs``: every file name in it, units, where their shards live,
what was written, and how the state is checked and started over.

Each file's format belongs to the step that writes it; every file is sealed
(``output.sealed``), so one that is not what kwdocs wrote is never used.
Light on purpose (no parsers, no templates): ``kwdocs check`` on an
up-to-date tree needs only this.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import zlib
from pathlib import Path

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.store import symbols, writer as output

# Every name under the state folder is here; each file's format belongs to the step that writes it.
FACTS, LINKS, PAGES, ROWS = "facts", "links", "pages", "rows"
LINK_INPUTS = "link-inputs"   # per unit: what linking needs of its facts (imports, language, test or not)
KEYWORD_ENTRIES = "keyword-entries"   # per unit: its keyword index entries by letter (see keywords.unit_letters)
FILE_ROWS = "folder-rows"     # per unit of a folder split into units: its rows of the index, as rendered
LINK_META = "link-meta.json"   # what linking last saw (and where it looked for definitions), which shards it rewrote
IMPORTANCE = "importance"     # per unit: how many files use each file and each name it defines (from linking)
LINK_REQUESTS = "link-requests"   # per unit: the names other files import that are looked for in its files
FOLDER_PARTS = "folder-parts"   # per unit: its part of its folder's doc.md (see model.folder_part)
FOLDER_DIAGRAMS = "folder-diagrams"   # per large folder: its doc.md's diagrams and what they were made from
SEEN = "seen"                 # per unit: each file's size, time stamp and SHA-256 when its facts were made
TOKENS = "tokens"             # per unit, --html only: the highlight tokens extraction made (see kwdocs.site.tokens)
KEYWORDS = "keywords"         # the keyword index's meta.json, letter tables and rendered rows
KEYWORDS_META = "keywords/meta.json"
FOLDERS_META = "folders.json"   # the folder pages' keys and what they were made from
PROBLEMS = "problems.json"    # the build's problems, for the summary
PRUNED = "pruned.json"        # the units of the last prune
SYMBOLS = symbols.INDEX      # the symbol index of find, refs and show (see kwdocs.store.symbols)
SYMBOLS_VERIFIED = "symbols-verified.json"   # the symbol index's stamp as the build that wrote it left it
DOIT_DB = "doit.sqlite3"      # doit's records: what to schedule, never what is true
# made afresh with the state: the tasks of a project's dodo.py (kwdocs.doit) keep their records in
# the project's doit database, and name this in them, so that a state started over runs them all
GENERATION = "generation"
SNAPSHOT = symbols.SNAPSHOT   # the no-op fast path's hash (see kwdocs.store.snapshot)
SCANNED = "scanned.json"      # the file list the snapshot vouches for
CODE = "code.json"            # kwdocs' code files' stamps and their contents' digest (see snapshot.code_fingerprint)
KEYWORD_TABLES = "letter-*.jsonl"   # in KEYWORDS: a letter's entries by unit
RUNS = "runs"                 # in KEYWORDS, while the keyword step runs: the entries read, by letter
TEMPLATES = "templates"       # compiled templates
JOURNALS = output.JOURNAL_FOLDER   # what kwdocs wrote to each page: journals, folded into LEDGER
LEDGER = "ledger.json"        # in JOURNALS (see kwdocs.store.journal)
HTML_MANIFEST = "html.json"   # what each HTML page was rendered from (see kwdocs.site.html)
SEARCH = "search"             # the keyword search index: what each unit adds to each shard (see kwdocs.site.search)
FULLTEXT = "fulltext"         # the full-text index: what each unit adds to each word bucket (see kwdocs.site.search)
SITE_TREE = "site-tree.json"  # a digest of the files each PAGES record lists, and tree.js' inputs (kwdocs.site.search)
EARLIER = ("link-input.json", "keywords/letter-*.json", "search.json")   # state files of earlier versions, removed
LOCK = "lock"
FORMAT = "format"             # which layout of the state this is: another one is started over
FORMAT_VERSION = "kwdocs state 2: sealed files\n"
DAMAGED = "damaged"           # a step found state that is not what kwdocs wrote: start the state over
KEPT = (LOCK, ".gitignore", JOURNALS, FORMAT)   # what starting over keeps: the lock and the proof of what kwdocs wrote
BUCKET_FILES = 128        # a folder with more files than UNIT_LIMIT is split into buckets of about this many
UNIT_LIMIT = 256


BUCKET_MARK = "\0"   # no folder name holds it: a bucket is never taken for a folder (``x`` and ``x#0``)


def units_of(folder: str, names: list[str]) -> dict[str, list[str]]:
    """Split a folder's file names into units: the folder itself, or ``folder<NUL>k`` buckets.

    Buckets go by a stable hash of the name, and their number only changes when
    the folder doubles or halves, so adding a file touches one bucket.
    """
    if len(names) <= UNIT_LIMIT:
        return {folder: names}
    count = 1
    while count * BUCKET_FILES < len(names):
        count *= 2
    units: dict[str, list[str]] = {f"{folder}{BUCKET_MARK}{k}": [] for k in range(count)}
    for name in names:
        units[f"{folder}{BUCKET_MARK}{zlib.crc32(name.encode('utf-8', 'surrogateescape')) % count}"].append(name)
    return {unit: members for unit, members in units.items() if members}


def keyword_table(config: Config, letter: str) -> Path:
    return config.state / KEYWORDS / f"letter-{letter}.jsonl"


def keyword_rows_path(config: Config, page: str) -> Path:
    """Where a keyword page's rendered rows are kept (see ``pages.keyword_rows``)."""
    return config.state / KEYWORDS / f"rows-{page.removesuffix('.md')}.json"


def shard_path(config: Config, kind: str, unit: str) -> str:
    """Where a unit's shard of a kind lives, as the text doit compares dependencies by (built
    without ``Path`` objects: the task namespace names one per unit)."""
    return f"{config.state}/{kind}/{layout.state_name(unit)}"


def shard(config: Config, kind: str, unit: str) -> Path:
    return Path(shard_path(config, kind, unit))


TOKENS_SUFFIX = ".tokens"


def tokens_shard(config: Config, unit: str) -> Path:
    """Where a unit's highlight tokens live (binary, not JSON: see ``kwdocs.site.tokens``)."""
    return config.state / TOKENS / (layout.state_name(unit).removesuffix(".json") + TOKENS_SUFFIX)


def load_shard(config: Config, kind: str, unit: str, strict: bool = False) -> dict:
    """A unit's shard; empty if there is none (``strict``: a damaged one raises ``StateDamaged``
    instead, for kinds whose loss a later step could not tell from "no files")."""
    path = shard_path(config, kind, unit)
    data = output.read_json(path, {}, strict)
    if isinstance(data, dict) and data.get("unit") == unit:
        return data
    if strict and data:
        raise output.StateDamaged(f"{path} is damaged")
    return {}


def save_shard(config: Config, kind: str, unit: str, data: dict) -> bool:
    return output.write_json(config.out, shard_path(config, kind, unit), dict(data, unit=unit))


def mark_damaged(config: Config, reason: str) -> None:
    """A step met damaged state: say so to the build (see ``runner``), which starts it over."""
    output.write_if_changed(config.out, config.state / DAMAGED, reason + "\n")


def damaged(config: Config) -> str | None:
    """Why the last steps asked for the state to start over; None if they did not."""
    data = output.read_state(config.state / DAMAGED)
    return None if data is None else data.decode("utf-8", "replace").strip() or "damaged state"


def first_build(config: Config) -> bool:
    """Whether the output folder holds nothing but the lock a build takes: no page, no state,
    so nothing in it can have been changed by hand."""
    try:
        return set(os.listdir(config.out)) <= {config.state.name} \
            and set(os.listdir(config.state)) <= {LOCK, ".gitignore"}
    except OSError:
        return False


def start_over(config: Config) -> None:
    """Remove everything in the state folder but the lock and the journal of pages written."""
    try:
        entries = sorted(os.listdir(config.state))
    except OSError:
        return
    for name in entries:
        if name in KEPT:
            continue
        path = os.path.join(config.state, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


# What a completed build leaves besides doit's records: when doit has records but one of these is
# gone, pages could be left that no record names (their sources deleted since).
COMPLETE = (FACTS, LINKS, PAGES, SEEN, LINK_META, KEYWORDS_META, FOLDERS_META)


def check_complete(config: Config) -> None:
    """Ask for the state to start over when doit has records, or pages were written, but part
    of the state is gone (the pages kwdocs no longer writes are then found from the journal)."""
    if damaged(config) is None and (os.path.isfile(config.state / DOIT_DB) or _has_entries(config.state / JOURNALS)):
        missing = [name for name in COMPLETE if not os.path.exists(config.state / name)]
        if output.read_state(config.state / FORMAT) != FORMAT_VERSION.encode():
            mark_damaged(config, f"{config.state} was made by another version of kwdocs")
        elif missing:
            mark_damaged(config, f"{config.state / missing[0]} is missing")


def mark_format(config: Config) -> None:
    """Before a build writes state: say which layout it has."""
    output.write_if_changed(config.out, config.state / FORMAT, FORMAT_VERSION)


DOIT_VERIFIED = "doit-verified.json"   # doit's record file as this process last saw it whole


def _doit_stamp(path: Path) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def _has_entries(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(entries)
    except OSError:
        return False


def check_doit_records(config: Config) -> None:
    """Remove doit's record file when it is damaged (doit would stop with a traceback): its
    records only schedule work, so losing them costs time, not correctness.  Read whole only
    when it changed since a run of kwdocs left it (``doit_records_verified``)."""
    path = config.state / DOIT_DB
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    stamp = _doit_stamp(path)
    if stamp is None or stamp[1] == 0 or output.read_json(config.state / DOIT_VERIFIED) == stamp:
        return
    if doit_records_readable(path):
        doit_records_verified(config)
        return
    sys.stderr.write(f"kwdocs: {path} is damaged; it is made again (this build does all the work)\n")
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def doit_records_readable(path: Path) -> bool:
    """Whether doit can read every record: an intact SQLite file whose values are JSON."""
    try:
        with open(path, "rb") as handle:
            if handle.read(16) != b"SQLite format 3\0":
                return False
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            if connection.execute("PRAGMA quick_check").fetchone() != ("ok",):
                return False
            for (data,) in connection.execute("SELECT task_data FROM doit"):
                json.loads(data)
        finally:
            connection.close()
    except (OSError, sqlite3.Error, ValueError, TypeError):
        return False
    return True


def doit_records_verified(config: Config) -> None:
    """After doit ran to its end: its record file as it left it is good."""
    stamp = _doit_stamp(config.state / DOIT_DB)
    if stamp is not None:
        output.write_json(config.out, config.state / DOIT_VERIFIED, stamp)


def written_pages(config: Config, subjects: dict[str, str] | None = None, strict: bool = False) -> set[str]:
    """Every page the state says kwdocs wrote (output-relative paths), for clean and check
    (``subjects``: ``page_subjects``, when already read; ``strict``: a damaged record raises
    ``StateDamaged``, see ``output.read_sealed``)."""
    found = set(page_subjects(config, strict) if subjects is None else subjects)
    found.update(_dict(output.read_json(config.state / KEYWORDS_META, {}, strict)).get("pages", []))
    return found


def page_subjects(config: Config, strict: bool = False) -> dict[str, str]:
    """Each file's and folder's page the state says kwdocs wrote -> the source file or folder it
    documents, by its real name (a page's own may be cut or escaped: see ``kwdocs.layout``)."""
    found: dict[str, str] = {}
    pages_dir = config.state / PAGES
    for path in sorted(pages_dir.glob("*.json")) if pages_dir.is_dir() else ():
        for rel in _dict(output.read_json(path, {}, strict)).get("files", {}):
            found[layout.docs_page(rel)] = found[layout.kw_page(rel)] = rel
    for folder in _dict(output.read_json(config.state / FOLDERS_META, {}, strict)).get("pages", {}):
        found[layout.index_page(folder)] = found[layout.doc_page(folder)] = folder
    return found


def _dict(data: object) -> dict:
    return data if isinstance(data, dict) else {}

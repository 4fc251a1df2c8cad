"""Writing into the output folder: only when content changed, always atomically.

Every write goes through here, so the two promises hold in one place: a page
is either its old or its new content (temporary file, fsync-free rename), and
nothing outside the output folder is touched.

Two more things hang off that one place.  Every page written (or found to
hold what would be written) is noted in a journal in the state folder: what
kwdocs wrote, by content hash, which ``kwdocs.store.journal`` reads so that ``kwdocs
check`` can vouch for a page without rendering it again.  And ``dry_run()``
makes writes and removals record what they would do instead of doing them,
with state files kept in memory: that is how ``kwdocs check`` runs the build's
own steps while writing nothing at all.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import orjson

from kwdocs.config import STATE_FOLDER

_T = TypeVar("_T")

TEMP_PREFIX, TEMP_SUFFIX = ".kwdocs-", ".tmp"


class OutsideOutput(Exception):
    """A path escaped the output folder: a bug or a hostile file name."""


def guard(root: Path, path: Path) -> Path:
    """Refuse any path that is not below ``root`` (after normalising ``..``)."""
    return Path(_inside(root, path))


def _inside(root: Path, path: Path | str) -> str:
    """``guard`` as a string."""
    resolved = os.path.normpath(path)
    top = os.fspath(root)
    if resolved != top and not resolved.startswith(top.rstrip(os.sep) + os.sep):
        raise OutsideOutput(f"refusing to write outside {root}: {path}")
    return resolved


def write_if_changed(root: Path, path: Path | str, content: str | bytes) -> bool:
    """Write ``content`` to ``path`` unless it already holds exactly that; True if written.

    Plain ``os`` calls on strings: a cold build writes 25,000 pages, and
    pathlib's and tempfile's conveniences were a third of the time it spent here.
    """
    target = _inside(root, path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    if _dry is not None:
        return _dry.write(Path(target), data)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(info.st_mode):
            if not _in_state(root, target):
                raise OutsideOutput(f"a folder stands where a page belongs: {target}")
            shutil.rmtree(target)   # kwdocs' own state folder: nothing of the user's is lost
        if info.st_size == len(data) and _read(target) == data:
            _journal(root, target, data, info)
            return False

    def write(fd: int) -> os.stat_result:
        write_all(fd, data)
        return os.fstat(fd)     # a rename keeps size and modification time
    _journal(root, target, data, _replace(target, write))
    return True


def _replace(target: str, write: Callable[[int], _T]) -> _T:
    """``write(fd)`` into a temporary file beside ``target``, then renamed over it: a reader sees
    the old bytes or the new, never part of them; the temporary is removed if anything fails."""
    fd, tmp = _temporary(os.path.dirname(target))
    try:
        try:
            result = write(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return result


def _in_state(root: Path, target: str) -> bool:
    return target.startswith(os.path.join(os.fspath(root), STATE_FOLDER) + os.sep)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all is written: a file object around the descriptor cost three more
    system calls per page (size, terminal and position checks)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read(path: Path | str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


_made_folders: set[str] = set()     # folders this process created or found: no mkdir per page
_sequence = itertools.count()


def _temporary(folder: str) -> tuple[int, str]:
    """A new temporary file in ``folder`` (made if missing), open for writing: (fd, path).

    Named by process and sequence, opened exclusively: a name left by a killed
    process of the same pid is skipped, never reused.
    """
    if folder not in _made_folders:
        _make_folder(folder)
        _made_folders.add(folder)
    while True:
        tmp = os.path.join(folder, f"{TEMP_PREFIX}{os.getpid()}-{next(_sequence)}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:   # removed since (a clean, an emptied folder): make it again
            _make_folder(folder)


def _make_folder(folder: str) -> None:
    """``os.makedirs``; in the state folder a file standing where a folder belongs is removed."""
    try:
        os.makedirs(folder, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        marker = os.sep + STATE_FOLDER + os.sep
        if marker not in folder + os.sep:
            raise
        top = folder[:folder.index(marker) + len(marker)]
        parts = folder[len(top):].split(os.sep)
        for depth in range(len(parts) + 1):     # the first file in the way, from the top down
            path = os.path.join(top, *parts[:depth]) if depth else top.rstrip(os.sep)
            if os.path.lexists(path) and not os.path.isdir(path):
                os.unlink(path)
                break
        os.makedirs(folder, exist_ok=True)


def sweep_temporaries(root: Path) -> int:
    """Delete the temporary files of writes a killed process never finished; how many.

    Only for the holder of the output folder's lock: another writer's are live.
    """
    swept = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX):
                try:
                    os.unlink(os.path.join(folder, name))
                    swept += 1
                except FileNotFoundError:
                    pass
    return swept


def stamp(path: Path | str) -> tuple[int, int] | None:
    """(mtime_ns, size) of a file, None if it is gone: the cheap "did it change?" check."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def remove(root: Path, path: Path) -> bool:
    """Delete a page kwdocs wrote, and folders it leaves empty; True if it existed."""
    path = guard(root, path)
    if _dry is not None:
        return _dry.remove(path)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    _journal(root, os.fspath(path))
    parent = path.parent
    while parent != root and parent.is_relative_to(root):
        try:
            parent.rmdir()
        except OSError:
            break
        _made_folders.discard(os.fspath(parent))
        parent = parent.parent
    return True


def read_state(path: Path | str) -> bytes | None:
    """A state file's content as the current build (or dry run) left it; None if there is none
    (a folder standing where the file belongs counts as none: its writer removes it)."""
    try:
        if _dry is not None:
            where = Path(path)
            if where in _dry.overlay or (_dry.blank and where.is_relative_to(_dry.state)):
                return _dry.overlay.get(where)
        return _read(path)     # a path as text: a ``Path`` per shard read was a tenth of a read's cost
    except OSError:
        return None


class StateDamaged(Exception):
    """A state file kwdocs needs is there but is not what kwdocs wrote (its seal does not match)."""


SEAL_LENGTH = 32    # hex digits of the SHA-256 of a state file's body, on its last line


def sealed(body: bytes) -> bytes:
    """A state file's bytes: its body, then a line holding the body's hash, so that a file cut
    short, overwritten or edited in any byte is never taken for what kwdocs wrote."""
    return body + b"\n" + hashlib.sha256(body).hexdigest()[:SEAL_LENGTH].encode() + b"\n"


def unsealed(data: bytes | None) -> bytes | None:
    """The body of ``sealed`` bytes; None when the seal does not match."""
    if data is None or len(data) < SEAL_LENGTH + 2 or data[-SEAL_LENGTH - 2:-SEAL_LENGTH - 1] != b"\n":
        return None
    body = data[:-SEAL_LENGTH - 2]
    return body if hashlib.sha256(body).hexdigest()[:SEAL_LENGTH].encode() == data[-SEAL_LENGTH - 1:-1] else None


def seal_of(data: bytes) -> str:
    """The seal of ``sealed`` bytes (a digest of their body): what a record made from a state
    file names it by."""
    return data[-SEAL_LENGTH - 1:-1].decode("ascii")


def sealed_body_size(handle: BinaryIO) -> int | None:
    """The size of the body of the sealed file open in ``handle`` if its seal holds, else None;
    hashed a block at a time, for a file too large to read whole (the ledger)."""
    body = os.fstat(handle.fileno()).st_size - SEAL_LENGTH - 2
    if body < 0:
        return None
    handle.seek(0)
    hashed = hashlib.sha256()
    left = body
    while left > 0:
        data = handle.read(min(1 << 20, left))
        if not data:
            return None
        hashed.update(data)
        left -= len(data)
    return body if handle.read() == b"\n" + hashed.hexdigest()[:SEAL_LENGTH].encode() + b"\n" else None


def read_sealed(path: Path | str, strict: bool = False) -> bytes | None:
    """A sealed state file's body; None if it is missing or damaged (``strict``: damaged raises
    ``StateDamaged``, for the files whose loss would go unnoticed)."""
    return read_sealed_and_seal(path, strict)[0]


def read_sealed_and_seal(path: Path | str, strict: bool = False) -> tuple[bytes | None, str]:
    """``read_sealed`` and the file's seal ('' when missing or damaged)."""
    raw = read_state(path)
    body = unsealed(raw)
    if raw is None or body is None:
        if raw is not None and strict:
            raise StateDamaged(f"{path} is damaged")
        return None, ""
    return body, seal_of(raw)


def read_json(path: Path | str, default: Any = None, strict: bool = False) -> Any:
    """State files are ours; a missing or damaged one just means 'start over' (``strict``: see
    ``read_sealed``)."""
    body = read_sealed(path, strict)
    try:
        return default if body is None else orjson.loads(body)
    except ValueError:      # orjson.JSONDecodeError is one; a body that passed its seal never fails
        if strict:
            raise StateDamaged(f"{path} is damaged") from None
        return default


def write_sealed(root: Path, path: Path | str, body: bytes) -> bool:
    """Write a state file (see ``sealed``) when it changed; True if written."""
    return write_if_changed(root, path, sealed(body))


def write_sealed_parts(root: Path, path: Path, parts: Iterable[bytes]) -> None:
    """``write_sealed`` of the body ``parts`` make, written and hashed as they come: a body of
    hundreds of thousands of entries (the ledger of a large tree) is never held whole, nor
    compared with what the file held (the caller knows it changed)."""
    if _dry is not None:
        write_sealed(root, path, b"".join(parts))
        return

    def write(fd: int) -> None:
        hashed = hashlib.sha256()
        buffer = bytearray()
        for part in parts:
            hashed.update(part)
            buffer += part
            if len(buffer) >= 1 << 16:   # a system call per 64 KiB, not per part
                write_all(fd, bytes(buffer))
                buffer.clear()
        write_all(fd, bytes(buffer) + b"\n" + hashed.hexdigest()[:SEAL_LENGTH].encode() + b"\n")
    _replace(_inside(root, path), write)


def write_json(root: Path, path: Path | str, data: Any, sort_keys: bool = True) -> bool:
    """Deterministic JSON (compact, keys sorted unless the caller orders them), sealed, written
    only when it changed."""
    return write_sealed(root, path, compact_json(data, sort_keys=sort_keys))


def compact_json(data: Any, sort_keys: bool = False, default: Callable[[Any], Any] | None = None) -> bytes:
    """Compact UTF-8 JSON: the bytes ``json.dumps(data, ensure_ascii=False,
    separators=(",", ":"), default=default)`` gives, made by orjson, which encodes
    a cold build's state several times as fast.  What orjson refuses (an
    integer past 64 bits, a non-string key) goes through ``json``, so the bytes
    stay the same."""
    try:
        return orjson.dumps(data, default=default, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError:       # orjson.JSONEncodeError is one
        return json.dumps(data, sort_keys=sort_keys, ensure_ascii=False, default=default,
                          separators=(",", ":")).encode("utf-8")


# ---------------------------------------------------------------- the journal of pages written

JOURNAL_FOLDER = "ledger"        # below the state folder; read by kwdocs.store.journal
_journals: dict[tuple[int, Path], int] = {}   # (process, output root) -> open journal, -1: none


def journal_path(root: Path, pid: int) -> Path:
    return root / STATE_FOLDER / JOURNAL_FOLDER / f"journal-{pid}.jsonl"


def _journal(root: Path, path: str, data: bytes | None = None, info: os.stat_result | None = None) -> None:
    """Note that ``path`` holds ``data``, as kwdocs wrote it, or (no ``data``) that kwdocs removed
    it: every page of every format (every file outside the state folder) of an output folder that
    has a state folder only, so that ``kwdocs check`` judges every format by content.  One append per page,
    from any process (doit's workers too); a journal that a lock holder folded into the ledger
    meanwhile is reopened.  A removal is an entry without a hash, dated now, which the ledger
    drops the page for: folding the journals then needs no check of which pages still exist."""
    rel = path[len(os.fspath(root)):].lstrip(os.sep).replace(os.sep, "/")   # below root: guarded
    if rel.startswith(STATE_FOLDER + "/"):
        return
    key = (os.getpid(), root)
    fd = _journals.get(key)
    if fd is not None and fd >= 0 and os.fstat(fd).st_nlink == 0:
        os.close(fd)
        fd = None
    if fd is None:
        fd = -1
        if (root / STATE_FOLDER).is_dir():
            target = journal_path(root, os.getpid())
            target.parent.mkdir(exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        _journals[key] = fd
    if fd >= 0:
        entry = ([rel, None, 0, time.time_ns()] if data is None or info is None
                 else [rel, hashlib.sha256(data).hexdigest(), info.st_size, info.st_mtime_ns])
        os.write(fd, compact_json(entry) + b"\n")


# ---------------------------------------------------------------- dry runs

class DryRun:
    """What writes and removals would do, recorded instead of done.

    State files (below ``state``) are kept in memory and read back by
    ``read_json``; any other path is a page, compared with what is on disk.
    """

    SAME, DIFFERENT, ABSENT = "same", "different", "absent"

    def __init__(self, state: Path, blank: bool = False, keep: set[Path] | None = None) -> None:
        self.state = state
        self.blank = blank          # as if there were no state at all
        self.keep = keep or set()   # pages whose would-be content is kept, in ``kept``
        self.kept: dict[Path, bytes] = {}
        self.overlay: dict[Path, bytes | None] = {}    # state file -> content; None: removed
        self.pages: dict[Path, str] = {}                # page -> SAME, DIFFERENT or ABSENT
        self.removed: set[Path] = set()                 # pages on disk that would be removed
        self.changed_state: set[Path] = set()           # state files given new content

    def _current(self, path: Path) -> bytes | None:
        if path in self.overlay or (self.blank and path.is_relative_to(self.state)):
            return self.overlay.get(path)
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            if path.is_relative_to(self.state):
                return None     # a real build removes it
            raise OutsideOutput(f"a folder stands where a page belongs: {path}") from None

    def write(self, path: Path, data: bytes) -> bool:
        current = self._current(path)
        if path.is_relative_to(self.state):
            self.overlay[path] = data
            if current != data:
                self.changed_state.add(path)
        else:
            self.pages[path] = self.SAME if current == data else self.ABSENT if current is None else self.DIFFERENT
            if path in self.keep:
                self.kept[path] = data
        return current != data

    def remove(self, path: Path) -> bool:
        if path.is_relative_to(self.state):
            existed = self._current(path) is not None
            self.overlay[path] = None
            return existed
        self.pages.pop(path, None)
        if path.is_file():
            self.removed.add(path)
            return True
        return False


_dry: DryRun | None = None


@contextmanager
def dry_run(state: Path, blank: bool = False, keep: set[Path] | None = None) -> Iterator[DryRun]:
    """Within this block nothing is written or removed (see ``DryRun``)."""
    global _dry
    previous, _dry = _dry, DryRun(state, blank, keep)
    try:
        yield _dry
    finally:
        _dry = previous


def dry_changed(path: str) -> bool:
    """Whether the running dry run gave this state file new content (doit, which looks at the
    disk, must count it as changed)."""
    return _dry is not None and Path(path) in _dry.changed_state


def state_stamp(path: Path | str) -> tuple[int, int] | None:
    """``stamp`` of a state file as the build or dry run left it: one a dry run wrote has a stamp
    no file on disk has (its size, time -1), so a step comparing stamps reads it again."""
    if _dry is not None:
        where = Path(path)
        if where in _dry.overlay or (_dry.blank and where.is_relative_to(_dry.state)):
            data = _dry.overlay.get(where)
            return None if data is None else (-1, len(data))
    return stamp(path)


def state_names(folder: Path | str) -> list[str]:
    """The names in a state folder as the build or dry run left it, sorted."""
    names: set[str] = set()
    if _dry is None or not _dry.blank:
        try:
            names.update(os.listdir(folder))
        except OSError:
            pass
    if _dry is not None:
        top = Path(folder)
        for path, data in _dry.overlay.items():
            if path.parent == top:
                if data is None:
                    names.discard(path.name)
                else:
                    names.add(path.name)
    return sorted(names)


def dry_running() -> bool:
    """Whether writes are recorded, not made (``dry_run``): a forked process's records would be lost."""
    return _dry is not None


def dry_blank() -> bool:
    """Whether a dry run runs as if there were no state at all."""
    return _dry is not None and _dry.blank

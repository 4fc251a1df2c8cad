"""The user's mistakes (a read-only or full disk, a path that is a file): one line, exit 2.

``kwdocs.cli`` turns every error ``describe`` knows into its line.  Inside a
doit run, exceptions never reach it: doit catches a task's and prints its
traceback, and prints one when its own database fails.  So each task
action runs through ``kwdocs.engine.tasks.Guarded``, which returns such an error
as a ``Mistake`` (a doit task failure that the reporter keeps instead of
printing), and ``doit_database_kept`` holds back a failure of doit's database:
opening it, removing a failed task's record, its final save; ``raise_kept`` then
raises either as ``UserMistake`` once doit is done.
"""
from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

# errors of the machine's set-up, never of kwdocs: the user can mend them and build again
USER_ERRNOS = {
    errno.ENOSPC: "no space left on the device (free some and build again)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a file stands where a folder belongs",
}
SQLITE_MISTAKES = ("database or disk is full", "attempt to write a readonly database", "disk I/O error",
                   "unable to open database file")


class UserMistake(Exception):
    """An error of the user's set-up, already worded as its line (one per file it names)."""


class DoitStopped(BaseException):
    """doit's database could not be opened (its line is kept): a BaseException, which doit's
    own handler, printing a traceback for any Exception, lets through to the runner."""


def describe(error: BaseException) -> str | None:
    """The one line for an error of the user's set-up; None for anything else (a bug: traceback)."""
    if isinstance(error, UserMistake):
        return str(error)
    if isinstance(error, OSError) and error.errno in USER_ERRNOS:
        where = f"{error.filename}: " if error.filename else ""
        return f"kwdocs: {where}{USER_ERRNOS[error.errno]}"
    # sqlite3's errors by module: importing sqlite3 would cost every command's start
    if type(error).__module__ == "sqlite3" and any(text in str(error) for text in SQLITE_MISTAKES):
        return f"kwdocs: the output folder's state database: {error} (free some space, or check the folder)"
    return None


@contextmanager
def doit_database_kept() -> Iterator[list[str]]:
    """While doit runs, a failure of its database (a full disk) is kept in the list it gives (for
    ``raise_kept``), not printed: opening it stops doit (``DoitStopped``); removing a failed
    task's record (which doit does before it reports the failure) leaves the database unsaved,
    so no record of a partial run is kept (the next build does that work again); the final save
    is given up."""
    # doit only once a build ran it: every command's start imports this module
    from doit.dependency import DatabaseException, SqliteDB

    lines: list[str] = []
    dump, remove, remove_all, connect = SqliteDB.dump, SqliteDB.remove, SqliteDB.remove_all, SqliteDB._sqlite3

    def kept(error: BaseException) -> bool:
        line = describe(error)
        if line is None and isinstance(error, DatabaseException) and error.__context__ is not None:
            line = describe(error.__context__)     # doit's wording around sqlite's error
        if line is None:
            return False
        lines.append(line)
        return True

    def kept_connect(self, name: str):
        try:
            return connect(self, name)
        except Exception as error:
            if not kept(error):
                raise
            raise DoitStopped from error

    def kept_remove(self, task_id: str) -> None:
        try:
            remove(self, task_id)
        except Exception as error:
            if not kept(error):
                raise
            self.kwdocs_unsaved = True

    def kept_remove_all(self) -> None:
        try:
            remove_all(self)
        except Exception as error:
            if not kept(error):
                raise
            self.kwdocs_unsaved = True

    def kept_dump(self) -> None:
        if getattr(self, "kwdocs_unsaved", False):
            self._conn.close()      # uncommitted: the file keeps the records of the last whole save
            return
        try:
            dump(self)
        except Exception as error:
            if not kept(error):
                raise

    SqliteDB.dump, SqliteDB.remove, SqliteDB.remove_all = kept_dump, kept_remove, kept_remove_all
    SqliteDB._sqlite3 = kept_connect
    try:
        yield lines
    finally:
        SqliteDB.dump, SqliteDB.remove, SqliteDB.remove_all, SqliteDB._sqlite3 = dump, remove, remove_all, connect


def raise_kept(lines: list[str]) -> None:
    """After a doit run: raise the first mistake a task or doit's save met (the reporter's, then
    ``doit_database_kept``'s), if any."""
    if lines:
        raise UserMistake(lines[0])

"""Scanning: which files of the source tree are inputs.

Skips what must never become an input (the output and state folders, version
control folders, what ``.gitignore`` files ignore, files that commonly hold
secrets) and what cannot be read safely (special files, links leaving the
tree).  Everything skipped for a reason the user may not expect is reported.
The result is sorted, so the order of work never changes the output.
"""
from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kwdocs.collector import collector_paused
from kwdocs.config import STATE_FOLDER, Config
from kwdocs.store.owned import is_output_folder

if TYPE_CHECKING:
    # see the docstring: only a tree with ignore rules or globs
    import pathspec

_by_name = attrgetter("name")     # a folder's entries in name order; a lambda was a Python call each
_OUTPUT_SIGNS = frozenset({STATE_FOLDER, "doc.md"})     # a folder holding one may be another output folder
VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj"})
_SPECIAL = {stat.S_IFIFO: "a named pipe", stat.S_IFSOCK: "a socket",
            stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


_new_tuple = tuple.__new__


class SourceFile(NamedTuple):
    """A documented file as the scan saw it (a tuple: one per file is built, sorted and
    compared on every build)."""

    rel: str            # POSIX path relative to the source root
    size: int
    mtime_ns: int

    @property
    def folder(self) -> str:
        return folder_of(self.rel)


@dataclass
class ScanResult:
    files: list[SourceFile]
    problems: list[tuple[str, str]] = field(default_factory=list)   # (path, message)
    skipped: int = 0
    # what a whole scan's file list was made from (see ``Stamps``); None when it cannot vouch
    stamps: dict | None = None
    # the digest of ``files`` (``snapshot.files_digest``), when a saved one is known to hold
    digest: str | None = None

    def by_folder(self) -> dict[str, list[SourceFile]]:
        """Files grouped by their folder ('' is the root), folders in sorted order."""
        groups: dict[str, list[SourceFile]] = {}
        for source in self.files:
            groups.setdefault(folder_of(source.rel), []).append(source)
        return dict(sorted(groups.items()))

    def folders(self) -> list[str]:
        """Every folder that holds a documented file somewhere below it, root included."""
        # the split inline: a call of folder_of per file was most of a no-op's check of the pages' folders
        return with_ancestors({rel.rpartition("/")[0] for rel, _, _ in self.files})


def with_ancestors(folders: Iterable[str]) -> list[str]:
    """The folders, every folder above them and the root (''), sorted."""
    found = {""}
    for folder in folders:
        while folder and folder not in found:
            found.add(folder)
            folder = folder_of(folder)
    return sorted(found)


def folder_of(rel: str) -> str:
    """The folder of a normalised relative path ('' for the root); string work, as pathlib
    is slow enough to show in every task generation."""
    return rel.rpartition("/")[0]


class GlobSet:
    """Gitignore-style globs, fast for the common case of patterns without a slash.

    Such a pattern matches a file's name in any folder, so one combined regex
    over the name answers for all of them; the rest go through pathspec.
    """

    def __init__(self, patterns: tuple[str, ...] | list[str]):
        by_name = [p for p in patterns if "/" not in p and not p.startswith("!")]
        by_path = [p for p in patterns if p not in by_name]
        self.name_regex = re.compile("|".join(fnmatch.translate(p) for p in by_name)) if by_name else None
        # made at the first path asked about: the default secret-file globs have a few with a slash,
        # and a tree with no file of their names never needs pathspec (its import was an eighth
        # of a no-op build's CPU)
        self._by_path = by_path
        self._path_spec: pathspec.GitIgnoreSpec | None = None
        # every name a pattern can match (``**/.kube/config``: ``config``), so that the scan asks
        # pathspec only about those; None when a pattern may match any name
        lasts = [p.rpartition("/")[2] for p in by_path]
        self.candidate_globs = (None if any(p.startswith("!") or not last or "**" in last
                                            for p, last in zip(by_path, lasts))
                                else tuple(by_name + lasts))
        self.candidate_names = (None if self.candidate_globs is None
                                else re.compile("|".join(fnmatch.translate(p) for p in self.candidate_globs)))

    def __bool__(self) -> bool:
        return bool(self.name_regex or self._by_path)

    @property
    def path_spec(self) -> pathspec.GitIgnoreSpec | None:
        if self._path_spec is None and self._by_path:
            self._path_spec = _gitignore_spec(self._by_path)
        return self._path_spec

    def match(self, rel: str, name: str | None = None) -> bool:
        """Whether ``rel`` matches; ``name``, its last part, when the caller has it at hand."""
        if self.name_regex is not None and self.name_regex.match(
                rel.rstrip("/").rpartition("/")[2] if name is None else name):
            return True
        return self.path_spec is not None and self.path_spec.match_file(rel)


# Editors' swap, backup and save-by-rename files (vim, JetBrains, Emacs, Kate, gedit ...): never
# sources, not even for the moment they exist while ``kwdocs watch`` looks.  doit's records in a
# project that runs kwdocs' tasks from its dodo.py (its default dep_file, with dbm's suffixes) are
# no sources either: every doit run rewrites them, so a page of theirs would never be up to date.
EDITOR_TEMP_FILES = GlobSet(("*~", ".*.swp", ".*.swo", ".*.swx", "4913", "*___jb_tmp___", "*___jb_old___",
                             ".#*", "#*#", "*.tmp", ".*.kate-swp", ".goutputstream-*", "*.crswap",
                             ".doit.db", ".doit.db.*"))


class _Rules:
    """The config's include, exclude and secret-file globs."""

    def __init__(self, config: Config):
        # None when there are no globs: the scan asks about every file
        self.include = GlobSet(config.include) or None
        self.exclude = GlobSet(config.exclude) or None
        self.secrets = GlobSet(config.secret_files if config.skip_secret_files else ()) or None

    @staticmethod
    def ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
        """Git semantics: the deepest .gitignore that has an opinion decides."""
        for base, spec in reversed(specs):
            sub = rel[len(base) + 1:] if base else rel
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                return result.include
        return False


def _ignore_contents(path: str | Path) -> bytes | None:
    """An ignore file's bytes, read once for its rules and its stamp; None when it is not a
    file that can be read (a named pipe would never end)."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _gitignore_of(body: bytes | None) -> pathspec.GitIgnoreSpec | None:
    return None if body is None else _gitignore_spec(body.decode("utf-8", "replace").splitlines())


def _gitignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """pathspec, imported on first use: a tree without ``.gitignore`` files or path globs never
    needs it (its import is a visible part of a no-op build).  It matches through google-re2
    when installed (a dependency), many times faster per file on a long ``.gitignore``."""
    # see the docstring: only a tree with ignore rules or globs
    import pathspec
    return pathspec.GitIgnoreSpec.from_lines(lines)


ROOT_EXCLUDE = ".git/info/exclude"


def _root_specs(config: Config, stamps: Stamps | None = None) -> list[tuple[str, pathspec.GitIgnoreSpec]]:
    body = _ignore_contents(config.src / ROOT_EXCLUDE)
    if stamps is not None:
        stamps.ignore_file(ROOT_EXCLUDE, body)
    spec = _gitignore_of(body)
    return [("", spec)] if spec else []


def scan(config: Config, last: dict | None = None) -> ScanResult:
    """Walk ``config.src`` and return the documented files, sorted by path.

    ``last``: what an earlier whole scan of this tree under the same settings saved (its
    ``files``, ``problems``, ``stamps`` and ``digest``, as ``snapshot.previous`` reads them).
    Its file list is taken again, each file stat'ed anew, when nothing it was made from
    changed (see ``Stamps``): no folder is listed and no name checked again.
    """
    # the walk makes no reference cycles, and its thousands of new objects would set the cyclic
    # collector off every few hundred
    with collector_paused():
        if last is not None:
            reused = Stamps.reuse(config, last)
            if reused is not None:
                return reused
        stamps = Stamps()
        walker = _Walker(config, stamps=stamps)
        walker.walk(config.src, "", _root_specs(config, stamps))
    walker.result.files.sort()
    walker.result.problems.sort()
    walker.result.stamps = stamps.saved(walker.root)
    return walker.result


def scan_folder(config: Config, folder: str, recursive: bool = True) -> ScanResult | None:
    """What a full scan finds in one folder (and below it when ``recursive``), under the same
    rules, its parents' ``.gitignore`` files included; None when a full scan would not enter
    the folder (gone, ignored, excluded, version control, the output).  ``kwdocs watch``
    rescans only the folders that events came from.
    """
    walker = _Walker(config, descend=recursive)
    specs = _root_specs(config)
    path, rel = walker.root, ""
    for name in folder.split("/") if folder else ():
        if (spec := _gitignore_of(_ignore_contents(path / ".gitignore"))) is not None:
            specs = specs + [(rel, spec)]
        path, rel = path / name, f"{rel}/{name}" if rel else name
        try:
            is_folder = stat.S_ISDIR(os.lstat(path).st_mode)
        except OSError:
            return None
        if not (is_folder and _printable_name(name) and walker.enters(str(path), name, rel, specs)):
            return None
        try:
            if is_output_folder(str(path), os.listdir(path)):
                return None
        except OSError:
            return None
    walker.walk(path, rel, specs)
    walker.result.files.sort()
    walker.result.problems.sort()
    return walker.result


FOLDER_RACY_NS = 2_000_000_000     # coarse file systems stamp to two seconds


def _contents_digest(body: bytes | None) -> str | None:
    """An ignore file's contents, hashed: read whole each time, no time stamp can be stale."""
    return None if body is None else hashlib.sha256(body).hexdigest()


class Stamps:
    """What a whole scan's file list was made from besides the files themselves.

    Each folder listed, by its modification and change times (an entry added,
    removed or renamed, or the folder's permissions changed, moves them), each
    ignore file read, by its contents, the folders asked whether they are another
    output folder (the answer reads files inside them) and the links followed (what
    they point at is elsewhere).  While all of these hold, the same settings give
    the same file list: a build then stats each file and lists no folder, checks no
    name.  A folder changed within ``FOLDER_RACY_NS`` of its listing could change
    again under the same stamp: it stays *unsettled* (with a digest of its entries)
    until ``settle`` finds it unchanged once that time has passed.
    """

    def __init__(self) -> None:
        self.started = time.time_ns()
        self.folders: list[list] = []       # [rel, mtime_ns, ctime_ns]
        self.ignores: list[list] = []       # [rel, digest of its contents]: the ignore files read
        self.outputs: list[list] = []       # [rel, whether it is another output folder]
        self.links: list[str] = []
        self.unsettled: dict[str, str] = {}     # rel: its entries' digest (see ``listing``)
        self.broken = False

    def folder(self, path: str, rel: str) -> bool:
        """Stamp a folder about to be listed; whether it changed too recently to vouch for it."""
        try:
            info = os.stat(path)
        except OSError:
            self.broken = True      # listed as it was, but nothing to tell its next state by
            return False
        self.folders.append([rel, info.st_mtime_ns, info.st_ctime_ns])
        return max(info.st_mtime_ns, info.st_ctime_ns) >= self.started - FOLDER_RACY_NS

    def ignore_file(self, rel: str, body: bytes | None) -> None:
        self.ignores.append([rel, _contents_digest(body)])

    def saved(self, root: Path) -> dict | None:
        """The stamps as plain data, kept beside the file list; None when they vouch for nothing."""
        if self.broken:
            return None
        return {"root": os.fspath(root), "folders": self.folders, "ignores": self.ignores,
                "outputs": self.outputs, "links": self.links, "unsettled": self.unsettled}

    @staticmethod
    def reuse(config: Config, last: dict) -> ScanResult | None:
        """``last``'s file list with each file's size and time as they are now, if every stamp
        holds; None when anything it was made from changed, or it is of another shape."""
        stamps = last.get("stamps")
        base = os.fspath(config.src.resolve())
        if not isinstance(stamps, dict) or stamps.get("root") != base or stamps.get("unsettled") != {}:
            return None
        try:
            for rel, mtime, ctime in stamps["folders"]:
                info = os.stat(f"{base}/{rel}" if rel else base)
                if info.st_mtime_ns != mtime or info.st_ctime_ns != ctime:
                    return None
            for rel, digest in stamps["ignores"]:
                if _contents_digest(_ignore_contents(f"{base}/{rel}")) != digest:
                    return None
            for rel, found in stamps["outputs"]:
                path = f"{base}/{rel}"
                if is_output_folder(path, os.listdir(path)) != found:
                    return None
            problems = [(path, message) for path, message in last["problems"]]
            followed = Stamps._followed(config, stamps["links"], problems)
            if followed is None:
                return None
            files, same, lstat = [], True, os.lstat
            for entry in last["files"]:
                rel, size, mtime = entry
                if followed and rel in followed:
                    now = followed.pop(rel)
                    if now is None:
                        return None
                    now_size, now_mtime = now
                else:
                    info = lstat(f"{base}/{rel}")
                    now_size, now_mtime = info.st_size, info.st_mtime_ns
                if now_size != size or now_mtime != mtime:
                    same, entry = False, (rel, now_size, now_mtime)
                files.append(_new_tuple(SourceFile, entry))
        except (OSError, KeyError, TypeError, ValueError):
            return None     # a file gone, or a record of another shape: the tree is listed again
        if any(now is not None for now in followed.values()):
            return None     # a link now leads to a file it did not lead to
        digest = last.get("digest")
        return ScanResult(files=files, problems=problems, stamps=stamps,
                          digest=digest if same and isinstance(digest, str) else None)

    @staticmethod
    def _followed(config: Config, links: list[str], problems: list[tuple[str, str]]
                  ) -> dict[str, tuple[int, int] | None] | None:
        """Each link's target's size and time as they are now (None: it leads to no file, with
        the same problem as before); None when what a link gives changed."""
        if not links:
            return {}
        walker = _Walker(config)
        found: dict[str, tuple[int, int] | None] = {}
        for rel in links:
            info = walker.follow_link(walker.root / rel, rel)
            if info is not None and not stat.S_ISREG(info.st_mode):
                return None     # a special file now: the walk's own report
            found[rel] = None if info is None else (info.st_size, info.st_mtime_ns)
        named = set(links)
        if sorted(walker.result.problems) != [problem for problem in problems if problem[0] in named]:
            return None
        return found


def listing(entries: Iterable[os.DirEntry]) -> str:
    """A digest of a folder's entries, names and kinds (the names themselves may hold a secret:
    the state keeps none of them)."""
    digest = hashlib.sha256()
    for entry in entries:
        kind = "l" if entry.is_symlink() else "d" if entry.is_dir(follow_symlinks=False) else "f"
        digest.update(f"{entry.name}\0{kind}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def settle(scanned: ScanResult) -> None:
    """At the end of a build: each folder the scan found changed too recently to vouch for
    (``Stamps``) is vouched for once ``FOLDER_RACY_NS`` has passed since its stamp, if it still
    has that stamp and the entries the walk listed.  A change since would show in one or the
    other, and any later change gets a later stamp.  Else the scan keeps no stamps."""
    stamps = scanned.stamps
    if not stamps or not stamps["unsettled"]:
        return
    base, recorded = stamps["root"], {rel: (mtime, ctime) for rel, mtime, ctime in stamps["folders"]}
    now = time.time_ns()
    for rel, entries in stamps["unsettled"].items():
        path = f"{base}/{rel}" if rel else base
        try:
            info = os.stat(path)
            with os.scandir(path) as found:
                still = listing(sorted(found, key=_by_name))
        except OSError:
            still = None
        if still != entries or (info.st_mtime_ns, info.st_ctime_ns) != recorded[rel] \
                or max(recorded[rel]) >= now - FOLDER_RACY_NS:
            scanned.stamps = None
            return
    scanned.stamps = dict(stamps, unsettled={})


class _PlainNames:
    """Which names need none of the per-name checks (printable, not an editor's temporary, not
    a secret file's): nearly all of them, three regex calls per file were a tenth of a scan.

    The globs' regex is slow on every name (each ``*.pem`` scans the whole name), so names
    first go through a screen: a glob matches only names that end with its literal tail
    (``.pem``), or, when it ends with a wildcard, start with its literal head (``id_rsa``).
    A name neither ends nor starts so needs only to be printable.
    """

    def __init__(self, globs: tuple[str, ...], regex: re.Pattern):
        self.regex = regex
        tails = [re.split(r"[*?\[\]]", glob)[-1] for glob in globs]
        heads = [re.split(r"[*?\[]", glob)[0] for glob in globs]
        # a glob with neither (``*``, ``*.[ch]``): every name goes through the regex
        self.screened = all(tail or head for head, tail in zip(heads, tails))
        # by last and first character: one ``endswith`` of thirty tails was most of the screen
        self.tails: dict[str, tuple[str, ...]] = {}
        self.heads: dict[str, tuple[str, ...]] = {}
        for head, tail in zip(heads, tails):
            if tail:
                self.tails[tail[-1]] = (*self.tails.get(tail[-1], ()), tail)
            elif head:
                self.heads[head[0]] = (*self.heads.get(head[0], ()), head)

    def is_plain(self, name: str) -> bool:
        """Whether ``name`` needs no per-name check: what ``regex`` says of it, screened."""
        if self.screened and not name.endswith(self.tails.get(name[-1:], ())) \
                and not name.startswith(self.heads.get(name[:1], ())):
            # no control character or surrogate is printable: the regex only for other unprintables
            return name.isprintable() or _PRINTABLE.match(name) is not None
        return self.regex.match(name) is not None


def _plain_names(rules: _Rules) -> _PlainNames | None:
    """What says which names need none of the per-name checks; None when those checks look at
    more than the name."""
    globs = [EDITOR_TEMP_FILES] + ([rules.secrets] if rules.secrets is not None else [])
    candidates = [glob.candidate_names.pattern for glob in globs if glob.candidate_names is not None]
    if len(candidates) < len(globs):
        return None
    refused = "".join(f"(?!{pattern})" for pattern in candidates)
    return _PlainNames(sum((glob.candidate_globs or () for glob in globs), ()),
                       re.compile(f"{refused}{_PRINTABLE.pattern}"))


# The known token formats of the secret rules (kwdocs/rules.toml), for names: a file or folder
# named with a token is skipped, and reported with the token masked.
TOKEN_IN_NAME = re.compile(
    r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])|gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|[rs]k_live_[0-9A-Za-z]{16,}|npm_[A-Za-z0-9]{36}"
    r"|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|hf_[A-Za-z]{34}(?![A-Za-z0-9])|sk-(?:proj-)?[A-Za-z0-9_-]{40,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
TOKEN_MIN_LENGTH = 15   # the shortest of them: shorter names are not searched (a no-op scans every name)


def masked_name(rel: str) -> str | None:
    """``rel`` with each token in it masked as pages mask one (its first 4 characters kept),
    or None when it holds none."""
    if len(rel) < TOKEN_MIN_LENGTH or TOKEN_IN_NAME.search(rel) is None:
        return None
    return TOKEN_IN_NAME.sub(lambda match: match[0][:4] + "*" * (len(match[0]) - 4), rel)


class _Walker:
    def __init__(self, config: Config, descend: bool = True, stamps: Stamps | None = None):
        self.root = config.src.resolve()
        self.stamps = stamps
        self.rules = _Rules(config)
        plain_names = _plain_names(self.rules)
        self.is_plain = plain_names.is_plain if plain_names is not None else None
        self.skip_dirs = {str(config.out), str(config.state)}  # src and out are resolved
        self.descend = descend
        self.result = ScanResult(files=[])

    def enters(self, path: str, name: str, rel: str, specs: list) -> bool:
        """Whether the walk goes into this folder."""
        if name in VCS_FOLDERS or path in self.skip_dirs:
            return False
        if len(name) >= TOKEN_MIN_LENGTH and TOKEN_IN_NAME.search(name) is not None:
            self.problem(masked_name(rel) or rel, "folder skipped: its name holds a secret")
            return False
        return not (_Rules.ignored(specs, rel, True) or (self.rules.exclude is not None
                                                         and self.rules.exclude.match(rel + "/", name)))

    def problem(self, rel: str, message: str) -> None:
        self.result.problems.append((rel, message))

    def walk(self, folder: str | Path, rel_folder: str, specs: list) -> None:
        # stamped before the listing: a change after it gives another stamp
        recent = self.stamps is not None and self.stamps.folder(os.fspath(folder), rel_folder)
        try:
            entries = sorted(os.scandir(folder), key=_by_name)
        except OSError as error:
            self.problem(rel_folder or ".", f"folder skipped: {error.strerror}")
            if recent and self.stamps is not None:
                self.stamps.broken = True
            return
        if recent and self.stamps is not None:
            self.stamps.unsettled[rel_folder] = listing(entries)
        names = [entry.name for entry in entries]
        if rel_folder and not _OUTPUT_SIGNS.isdisjoint(names):
            found = is_output_folder(os.fspath(folder), names)
            if self.stamps is not None:     # the answer reads files inside: asked again on reuse
                self.stamps.outputs.append([rel_folder, found])
            if found:
                return      # another kwdocs output folder: its pages are never inputs
        if ".gitignore" in names:
            body = _ignore_contents(os.path.join(folder, ".gitignore"))
            if self.stamps is not None:
                self.stamps.ignore_file(f"{rel_folder}/.gitignore" if rel_folder else ".gitignore", body)
            spec = _gitignore_of(body)
            if spec is not None:
                specs = specs + [(rel_folder, spec)]
        visit = self.visit
        if rel_folder:
            for entry in entries:
                visit(entry, f"{rel_folder}/{entry.name}", specs)
        else:
            for entry in entries:
                visit(entry, entry.name, specs)

    def visit(self, entry: os.DirEntry, rel: str, specs: list) -> None:
        rules, name = self.rules, entry.name
        plain = self.is_plain is not None and self.is_plain(name)
        if not plain and not _printable_name(name):
            self.problem(_shown(rel), "skipped: the file name is not valid UTF-8 or has control characters")
            return
        try:
            is_link = entry.is_symlink()
            if not is_link and entry.is_dir(follow_symlinks=False):     # the entry's type: no stat for a folder
                if self.descend and self.enters(entry.path, name, rel, specs):
                    self.walk(entry.path, rel, specs)
                return
            info = entry.stat(follow_symlinks=False)
        except OSError as error:
            self.problem(rel, f"skipped: {error.strerror}")
            return
        if stat.S_ISDIR(info.st_mode):      # made a folder since the folder was read
            if self.descend and self.enters(entry.path, name, rel, specs):
                self.walk(entry.path, rel, specs)
            return
        # what the user left out is left out silently, odd files and links included
        if name == ".gitignore" or (not plain and EDITOR_TEMP_FILES.match(rel, name)) \
                or (specs and _Rules.ignored(specs, rel, False)):
            return
        if rules.include is not None and not rules.include.match(rel, name):
            return
        if rules.exclude is not None and rules.exclude.match(rel, name):
            return
        if len(name) >= TOKEN_MIN_LENGTH and TOKEN_IN_NAME.search(name) is not None:
            self.problem(masked_name(rel) or rel, "skipped: its name holds a secret")
            return
        if is_link:
            if self.stamps is not None:     # what it points at is no stamp of its folder's
                self.stamps.links.append(rel)
            target = self.follow_link(Path(entry.path), rel)
            if target is None:
                return
            info = target
        if not stat.S_ISREG(info.st_mode):
            kind = _SPECIAL.get(stat.S_IFMT(info.st_mode), "not a regular file")
            self.problem(rel, f"skipped: {kind}, never opened")
            return
        if not plain and rules.secrets is not None and rules.secrets.match(rel, name):
            self.problem(rel, "skipped: may hold secrets (see 'secret_files' in the configuration)")
            return
        # tuple.__new__, not SourceFile(...): the named tuple's own __new__ is Python code, run
        # once per file of every build (see bench/README.md, branch noop)
        self.result.files.append(_new_tuple(SourceFile, (rel, info.st_size, info.st_mtime_ns)))

    def follow_link(self, path: Path, rel: str) -> os.stat_result | None:
        """Stat a symlink's target if it stays inside the tree and is a file; else report it."""
        try:
            target = path.resolve(strict=True)
            info = target.stat()
        except RuntimeError:  # how Python before 3.13 reports a loop
            self.problem(rel, "skipped: symlink loop")
            return None
        except OSError as error:
            reason = {errno.ELOOP: "symlink loop", errno.ENOENT: "dangling symlink (its target does not exist)"}
            self.problem(rel, f"skipped: {reason.get(error.errno or 0, f'symlink not followed: {error.strerror}')}")
            return None
        if not target.is_relative_to(self.root):
            self.problem(rel, "skipped: symlink points outside the source tree")
            return None
        if stat.S_ISDIR(info.st_mode):
            return None  # a folder link inside the tree: its files are documented where they live
        return info


_CONTROL_CHARACTERS = r"\x00-\x1f\x7f\ud800-\udfff"     # and lone surrogates: undecodable bytes
_CONTROL = re.compile(f"[{_CONTROL_CHARACTERS}]")
_PRINTABLE = re.compile(f"[^{_CONTROL_CHARACTERS}]*\\Z")     # a whole name with none of them


def _shown(rel: str) -> str:
    """A path fit for one line of a report: undecodable bytes and control characters escaped."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], os.fsencode(rel).decode("utf-8", "backslashreplace"))


def _printable_name(name: str) -> bool:
    """Names we can put in a page: valid UTF-8 (no surrogate escapes), no control characters."""
    return _CONTROL.search(name) is None

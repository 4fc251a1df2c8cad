"""What the import resolvers of the languages share: lookups among the tree's paths.

A language module may define ``Resolver(languages, imports)`` whose
``answer(entry, path)`` gives ``(target, category)`` for one import of
``path`` (``kwdocs.extract.links`` calls it); these helpers keep each one short.
"""
from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable


class PathIndex:
    """The tree's paths of some languages, looked up whole or by their last components."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = frozenset(paths)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.paths):
            self._by_name[path.rpartition("/")[2]].append(path)
        self.folders: set[str] = {path.rpartition("/")[0] for path in self.paths}

    def first(self, candidates: Iterable[str]) -> str | None:
        """The first candidate that is a path of the index."""
        return next((candidate for candidate in candidates if candidate in self.paths), None)

    def tail(self, tail: str, near: str = "") -> str | None:
        """The path ending with ``tail`` on whole components: the one sharing most of ``near``'s
        folders, then the shortest."""
        matches = [path for path in self._by_name.get(tail.rpartition("/")[2], ())
                   if path == tail or path.endswith("/" + tail)]
        if not matches:
            return None
        return min(matches, key=lambda path: (-_shared(path, near), path.count("/"), path))


def _shared(path: str, near: str) -> int:
    """How many leading folders two paths share."""
    count = 0
    for left, right in zip(path.split("/")[:-1], near.split("/")[:-1]):
        if left != right:
            break
        count += 1
    return count


def joined(folder: str, relative: str) -> str | None:
    """``folder/relative`` normalised, or None when it leaves the tree."""
    path = posixpath.normpath(posixpath.join(folder, relative)) if folder else posixpath.normpath(relative)
    if path == "." :
        return ""
    return None if path.startswith("../") or path == ".." or path.startswith("/") else path

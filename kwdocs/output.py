"""Writing into the output folder: only when content changed, always atomically.

Every write goes through here, so the two promises hold in one place: a page
is either its old or its new content (temporary file, fsync-free rename), and
nothing outside the output folder is touched.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


class OutsideOutput(Exception):
    """A path escaped the output folder: a bug or a hostile file name."""


def guard(root: Path, path: Path) -> Path:
    """Refuse any path that is not below ``root`` (after normalising ``..``)."""
    resolved = Path(os.path.normpath(path))
    if not resolved.is_relative_to(root):
        raise OutsideOutput(f"refusing to write outside {root}: {path}")
    return resolved


def write_if_changed(root: Path, path: Path, content: str | bytes) -> bool:
    """Write ``content`` to ``path`` unless it already holds exactly that; True if written."""
    path = guard(root, path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise OutsideOutput(f"a folder stands where a page belongs: {path}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kwdocs-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return True


def remove(root: Path, path: Path) -> bool:
    """Delete a page kwdocs wrote, and folders it leaves empty; True if it existed."""
    path = guard(root, path)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    parent = path.parent
    while parent != root and parent.is_relative_to(root):
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent
    return True


def read_json(path: Path, default: Any = None) -> Any:
    """State files are ours; a missing or damaged one just means 'start over'."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return default


def write_json(root: Path, path: Path, data: Any) -> bool:
    """Deterministic JSON (sorted keys, compact), written only when it changed."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return write_if_changed(root, path, text)

"""The doit rule set: task generators over a scanned tree.

One task per *folder*, not per file: FINDINGS.md measured doit's per-task
overhead as what limits a no-op build (24,120 per-file tasks: 1.85 s; one per
folder: 0.2 s).  Each folder task takes doit's ``changed`` list and redoes only
those files.  ``dodo.py`` and ``kwdocs build`` both load this namespace, so
there is one code path.
"""
from __future__ import annotations

from pathlib import Path

from doit.tools import config_changed

from kwdocs import build
from kwdocs.config import Config
from kwdocs.scan import ScanResult, scan


def doit_config(config: Config) -> dict:
    return {
        "dep_file": str(config.state / "doit.sqlite3"),
        "backend": "sqlite3",
        "check_file_uptodate": "md5",
        "default_tasks": ["extract", "link", "render", "keywords", "assemble"],
        "verbosity": 0,
    }


def namespace(config: Config, scanned: ScanResult | None = None) -> dict:
    """A dodo-module namespace (``task_*`` callables and ``DOIT_CONFIG``) for one tree."""
    result = scanned if scanned is not None else scan(config)
    by_folder = result.by_folder()
    folders = list(by_folder)
    all_folders = result.folders()
    shards = [str(build.shard(config, build.FACTS, folder)) for folder in folders]

    def task_extract():
        """Extract facts (definitions, imports, findings) from the files that changed."""
        key = build.extraction_key(config)
        for folder, files in by_folder.items():
            yield {
                "name": folder or ".",
                "actions": [(build.extract_folder, [config, folder, [Path(f.rel).name for f in files]])],
                "file_dep": [str(config.src / f.rel) for f in files],
                "targets": [str(build.shard(config, build.FACTS, folder))],
                "uptodate": [config_changed(key)],
                "meta": {"files": len(files)},
                "verbosity": 0,
            }

    def task_link():
        """Resolve imports and includes across the tree (who uses whom)."""
        return {
            "actions": [(build.link_tree, [config, folders])],
            "file_dep": shards,
            "targets": [str(build.shard(config, build.LINKS, folder)) for folder in folders],
            "uptodate": [config_changed({"folders": folders, "roots": list(config.include_roots)})],
            "verbosity": 0,
        }

    def task_render():
        """Render the documentation and keyword pages of changed files."""
        keys = [build.render_key(config, name) for name in ("file_docs.md.j2", "file_kw.md.j2")]
        for folder in folders:
            yield {
                "name": folder or ".",
                "actions": [(build.render_folder, [config, folder])],
                "file_dep": [str(build.shard(config, build.FACTS, folder)),
                             str(build.shard(config, build.LINKS, folder))],
                "uptodate": [config_changed({"templates": keys})],
                "verbosity": 0,
            }

    def task_keywords():
        """Update the repository-wide keyword index (keywords.md, one page per letter when large)."""
        return {
            "actions": [(build.index_keywords, [config, folders])],
            "file_dep": shards,
            "uptodate": [config_changed({"folders": folders, "key": build.render_key(config, "keywords.md.j2")})],
            "verbosity": 0,
        }

    def task_assemble():
        """Assemble every folder's index.md and doc.md, and prune pages of deleted files."""
        keys = [build.render_key(config, name) for name in ("folder_index.md.j2", "folder_doc.md.j2")]
        return {
            "actions": [(build.assemble, [config, folders, all_folders])],
            "file_dep": shards,
            "task_dep": ["render", "keywords"],
            "uptodate": [config_changed({"folders": all_folders, "keys": keys})],
            "verbosity": 0,
        }

    return {
        "DOIT_CONFIG": doit_config(config),
        "task_extract": task_extract,
        "task_link": task_link,
        "task_render": task_render,
        "task_keywords": task_keywords,
        "task_assemble": task_assemble,
    }

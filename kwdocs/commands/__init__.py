"""One module per ``kwdocs`` subcommand; ``kwdocs.cli`` wires them to the command line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """The shared extraction cache's flags, for the commands that extract (build, check)."""
    parser.add_argument("--cache", metavar="URL",
                        help="a shared cache of extracted facts: file:///folder, s3://bucket/prefix, any URL "
                             "fsspec reaches, or a folder path (config key: cache)")
    parser.add_argument("--cache-mode", choices=("read", "readwrite"),
                        help="'read' uses the cache without adding to it, for untrusted jobs "
                             "(default: readwrite; config key: cache_mode)")
    parser.add_argument("--cache-key-file", metavar="FILE",
                        help="a file holding a secret key: entries are signed with it, and entries not signed "
                             "with it are ignored and made again (the variable KWDOCS_CACHE_KEY, when set, is "
                             "the key instead; config key: cache_key_file)")


def add_format_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format NAME``, repeatable, for the commands that write or judge pages (build, watch, check)."""
    parser.add_argument("--format", action="append", metavar="NAME", dest="format",
                        help="also write (or check) the pages in this format: html, json, or one an installed "
                             "package registers; repeatable (config key: formats; Markdown is always written)")


def add_query_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags the index's queries share (find, refs, show)."""
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (its shape is in docs/find.md)")


def add_name_arguments(parser: argparse.ArgumentParser, name_help: str) -> None:
    """A name query's arguments (find, refs): NAME (``NAME*``: a prefix), ``--prefix``, ``--json``."""
    parser.add_argument("name", metavar="NAME", help=name_help)
    parser.add_argument("--prefix", action="store_true", help="NAME is a prefix (as NAME* is)")
    add_query_arguments(parser)


def name_query(args: argparse.Namespace) -> tuple[str, bool]:
    """The name asked for and whether it is a prefix (``--prefix`` or a trailing ``*``)."""
    starred = args.name.endswith("*")
    return (args.name.removesuffix("*") if starred else args.name), args.prefix or starred


def open_index(config):
    """The symbol index of ``config``'s output folder for a query (``find``, ``refs``, ``show``).
    Builds keep it current once there is one; where there is none, or it is damaged or of another
    version, it is made now from the state the last successful build vouched for (the build's code,
    imported only then). With no such build, ``NoIndex``: one line telling to run one."""
    from kwdocs.store import symbols

    try:
        return symbols.Index(config.state)
    except symbols.NoIndex:
        from kwdocs.engine import symbol_index

        if not symbol_index.make_for_query(config):
            raise
    return symbols.Index(config.state)


def answered(config, index, paths, answer: dict, as_json: bool) -> dict:
    """``answer`` with whether it is current: the index made by the build that last finished, and
    none of ``paths`` (the sources it names) changed since (a stat of each, as ``check`` does).
    Unless ``as_json``, says on stderr, in one line, when it is not.  Sources other than the
    build's (``--src`` left out in another folder) are the user's one line instead."""
    paths = sorted(set(paths))
    index.check_sources(config.src, paths)
    stale = index.changed(paths, config.src)
    built = index.built()
    answer.update(current=built and not stale, stale=stale)
    if not as_json and not built:
        print("kwdocs: the pages are stale: the last build did not finish (run kwdocs build)", file=sys.stderr)
    if not as_json and stale:
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3:,} more" if len(stale) > 3 else "")
        print(f"kwdocs: the pages are stale: {shown} changed since the last build (run kwdocs build)",
              file=sys.stderr)
    return answer


def print_json(answer: dict) -> None:
    print(json.dumps(answer, ensure_ascii=False, sort_keys=True, indent=1))


def definition_line(entry: dict) -> str:
    """``path:line kind qualified-name  first sentence`` (the sentence left out when there is none)."""
    line = f"{entry['path']}:{entry['line']} {entry['kind']} {entry['qualified']}"
    return f"{line}  {' '.join(entry['summary'].split())}" if entry["summary"] else line


def overrides(args: argparse.Namespace) -> dict:
    """Flags as configuration keys; paths typed on the command line are relative to the shell."""
    absolute = lambda path: str(Path(path).resolve()) if path else None  # noqa: E731
    return {"output": absolute(args.out), "project_name": args.project_name, "include": args.include,
            "exclude": args.exclude, "max_source_bytes": args.max_source_bytes,
            "templates": absolute(args.templates), "jobs": args.jobs,
            "html": True if getattr(args, "html", False) else None,
            "formats": getattr(args, "format", None),
            "cache": getattr(args, "cache", None), "cache_mode": getattr(args, "cache_mode", None),
            "cache_key_file": absolute(getattr(args, "cache_key_file", None)),
            "scheduler": getattr(args, "scheduler", None)}
